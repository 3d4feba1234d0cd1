//! The manifest's figures against what the hardware and the kernels allow: registers per
//! thread, threads per block, resident blocks per SM and shared memory per block from each
//! arch's limits ([`crate::occupancy::limits_for`]), and block sizes against the kernel's own
//! `__launch_bounds__` (`EIATTR_MAX_THREADS` in its cubin).
//!
//! - A figure no supported arch allows is an error wherever it is set.
//! - A figure in an arch table (`[kernels.NAME.arch.sm_86]`) is checked against that arch: an
//!   error when it does not fit.
//! - A figure set for every arch at once (on the entry, or in its base contract) that fits some
//!   arches but not a built one is a warning naming those arches: an entry may target only
//!   some arches (a stub elsewhere), and the fix is a per-arch figure, not a different one.
//! - A block size above the kernel's `__launch_bounds__` on a built arch is an error, unless
//!   the entry configures that arch in a table of its own: `block_sizes` is one list for
//!   every arch, so a kernel whose bound differs per arch cannot list sizes that fit all;
//!   there it is a warning.

use crate::analyze::manifest_entry;
use crate::arch::{Arch, SUPPORTED};
use crate::contract::{toml_key, Outcome};
use crate::manifest::{Contract, KernelEntry, Manifest};
use crate::model::CubinReport;
use crate::occupancy::{limits_for, ArchLimits};
use std::collections::{BTreeMap, BTreeSet};

/// A per-arch hardware limit a manifest figure must respect.
struct Bound {
    limit: fn(&ArchLimits) -> u32,
    /// `registers per thread`: what the limit counts.
    unit: &'static str,
}

const REGISTERS: Bound = Bound {
    limit: |l| l.max_registers_per_thread,
    unit: "registers per thread",
};
const THREADS: Bound = Bound {
    limit: |l| l.max_threads_per_block,
    unit: "threads per block",
};
const BLOCKS: Bound = Bound {
    limit: |l| l.max_blocks_per_sm,
    unit: "resident blocks per SM",
};
const SMEM: Bound = Bound {
    limit: |l| l.smem_per_block_optin,
    unit: "bytes of opt-in shared memory per block",
};

/// One finding before it is worded: the tables it is about, and the text after them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Note {
    table: String,
    text: String,
}

/// Errors and warnings, with the warnings that read the same for several entries merged.
#[derive(Default)]
struct Findings {
    errors: Vec<Note>,
    warnings: Vec<Note>,
}

/// Checks every figure of `manifest` (at `path`) against the limits of the arches in
/// `reports` and of every supported arch, and block sizes against the kernels'
/// `__launch_bounds__` in `reports`.
pub fn check(
    manifest: &Manifest,
    path: &str,
    reports: &[(String, &CubinReport)],
    out: &mut Outcome,
) {
    let mut f = Findings::default();
    let built = built_arches(reports);
    for (key, entry) in &manifest.kernels {
        let stem = entry.file.strip_suffix(".cu").unwrap_or(&entry.file);
        let ctx = EntryCtx {
            key,
            entry,
            built: built.get(stem).cloned().unwrap_or_default(),
            possible: SUPPORTED
                .iter()
                .copied()
                .filter(|a| !a.arch_specific || manifest.uses_arch_specific(&entry.file))
                .collect(),
        };
        ctx.entry_figures(&mut f);
        ctx.base_contract(&mut f);
        ctx.arch_tables(&mut f);
    }
    launch_bounds(manifest, reports, &mut f);
    for n in f.errors {
        out.errors.push(format!("{path}: {}: {}", n.table, n.text));
    }
    out.warnings.extend(merged(f.warnings, path));
}

/// The arches each kernel file (by stem) was built for.
fn built_arches(reports: &[(String, &CubinReport)]) -> BTreeMap<String, Vec<Arch>> {
    let mut m: BTreeMap<String, BTreeSet<Arch>> = BTreeMap::new();
    for (file, r) in reports {
        m.entry(file.clone()).or_default().insert(r.arch);
    }
    m.into_iter()
        .map(|(f, a)| (f, a.into_iter().collect()))
        .collect()
}

/// Warnings with the same text for several tables become one, listing them.
fn merged(notes: Vec<Note>, path: &str) -> Vec<String> {
    let mut by_text: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in notes {
        by_text.entry(n.text).or_default().push(n.table);
    }
    by_text
        .into_iter()
        .map(|(text, tables)| format!("{path}: {}: {text}", tables.join(", ")))
        .collect()
}

fn arch_list(archs: &[(Arch, u32)]) -> String {
    let v: Vec<String> = archs.iter().map(|(a, l)| format!("{a} ({l})")).collect();
    v.join(", ")
}

/// One manifest entry, with the arches its figures apply to.
struct EntryCtx<'a> {
    key: &'a str,
    entry: &'a KernelEntry,
    /// The arches its kernel file was built for.
    built: Vec<Arch>,
    /// The arches its kernel file can be built for.
    possible: Vec<Arch>,
}

impl EntryCtx<'_> {
    fn table(&self, suffix: &str) -> String {
        format!("[kernels.{}{suffix}]", toml_key(self.key))
    }

    /// Whether the arch table for `a` sets the field `pick` reads.
    fn overridden(&self, a: Arch, pick: fn(&Contract) -> bool) -> bool {
        self.entry.arch.get(&a.sm_name()).is_some_and(pick)
    }

    /// A figure set for every arch at once: an error when no possible arch allows it, a
    /// warning naming the built arches it applies to (`applies`) that do not.
    fn shared(
        &self,
        f: &mut Findings,
        table: String,
        figure: String,
        value: u32,
        bound: &Bound,
        applies: &[Arch],
    ) {
        let limits: Vec<(Arch, u32)> = self
            .possible
            .iter()
            .filter_map(|&a| limits_for(a).map(|l| (a, (bound.limit)(l))))
            .collect();
        let most = limits.iter().map(|(_, l)| *l).max();
        if let Some(most) = most.filter(|m| value > *m) {
            f.errors.push(Note {
                table,
                text: format!(
                    "{figure} is above what any arch allows ({most} {})",
                    bound.unit
                ),
            });
            return;
        }
        let over: Vec<(Arch, u32)> = applies
            .iter()
            .filter_map(|&a| limits_for(a).map(|l| (a, (bound.limit)(l))))
            .filter(|(_, l)| value > *l)
            .collect();
        let what = match over.as_slice() {
            [] => return,
            [(a, l)] => format!("what {a} allows ({l} {})", bound.unit),
            _ => format!("what {} allow ({})", arch_list(&over), bound.unit),
        };
        f.warnings.push(Note {
            table,
            text: format!(
                "{figure} is above {what}: the kernel cannot launch with it there; set a figure for \
                 {} in an arch table ([kernels.NAME.arch.{}])",
                if over.len() == 1 { "that arch" } else { "those arches" },
                over[0].0
            ),
        });
    }

    /// A figure in the table of arch `a`: an error when `a` does not allow it.
    fn per_arch(&self, f: &mut Findings, a: Arch, figure: String, value: u32, bound: &Bound) {
        let Some(limit) = limits_for(a).map(|l| (bound.limit)(l)) else {
            return;
        };
        if value > limit {
            f.errors.push(Note {
                table: self.table(&format!(".arch.{}", a.sm_name())),
                text: format!("{figure} is above what {a} allows ({limit} {})", bound.unit),
            });
        }
    }

    /// `block_sizes` and `dynamic_smem_bytes` on the entry itself.
    fn entry_figures(&self, f: &mut Findings) {
        for &b in &self.entry.block_sizes {
            if b == 0 {
                f.errors.push(Note {
                    table: self.table(""),
                    text: "block_sizes: 0 is not a block size".into(),
                });
            } else {
                let figure = format!("block_sizes: {b}");
                self.shared(f, self.table(""), figure, b, &THREADS, &self.built);
            }
        }
        let smem = self.entry.dynamic_smem_bytes;
        let applies: Vec<Arch> = self
            .built
            .iter()
            .copied()
            .filter(|&a| !self.overridden(a, |c| c.dynamic_smem_bytes.is_some()))
            .collect();
        let figure = format!("dynamic_smem_bytes = {smem}");
        self.shared(f, self.table(""), figure, smem, &SMEM, &applies);
    }

    /// The base contract's figures, for the built arches whose tables do not override them.
    fn base_contract(&self, f: &mut Findings) {
        let c = &self.entry.contract;
        let table = self.table(".contract");
        if c.dynamic_smem_bytes.is_some() {
            f.errors.push(Note {
                table: table.clone(),
                text: format!(
                    "dynamic_smem_bytes is never read here: set it on {} (every arch) or under {} (one arch)",
                    self.table(""),
                    self.table(".arch.sm_XX")
                ),
            });
        }
        let applies = |pick: fn(&Contract) -> bool| -> Vec<Arch> {
            self.built
                .iter()
                .copied()
                .filter(|&a| !self.overridden(a, pick))
                .collect()
        };
        if let Some(r) = c.max_registers {
            let on = applies(|c| c.max_registers.is_some());
            let figure = format!("max_registers = {r}");
            self.shared(f, table.clone(), figure, r, &REGISTERS, &on);
        }
        if let Some(m) = c.min_blocks_per_sm {
            let on = applies(|c| c.min_blocks_per_sm.is_some());
            if m.block_size == 0 {
                f.errors.push(Note {
                    table: table.clone(),
                    text: "min_blocks_per_sm.block_size: 0 is not a block size".into(),
                });
            }
            let figure = format!("min_blocks_per_sm.block_size = {}", m.block_size);
            self.shared(f, table.clone(), figure, m.block_size, &THREADS, &on);
            let figure = format!("min_blocks_per_sm.blocks = {}", m.blocks);
            self.shared(f, table, figure, m.blocks, &BLOCKS, &on);
        }
    }

    /// Each `[kernels.NAME.arch.sm_XX]` against its own arch.
    fn arch_tables(&self, f: &mut Findings) {
        for (name, c) in &self.entry.arch {
            let Ok(a) = Arch::parse(name) else {
                continue; // reported as an unknown arch key
            };
            if let Some(r) = c.max_registers {
                self.per_arch(f, a, format!("max_registers = {r}"), r, &REGISTERS);
            }
            if let Some(m) = c.min_blocks_per_sm {
                if m.block_size == 0 {
                    f.errors.push(Note {
                        table: self.table(&format!(".arch.{name}")),
                        text: "min_blocks_per_sm.block_size: 0 is not a block size".into(),
                    });
                }
                let figure = format!("min_blocks_per_sm.block_size = {}", m.block_size);
                self.per_arch(f, a, figure, m.block_size, &THREADS);
                let figure = format!("min_blocks_per_sm.blocks = {}", m.blocks);
                self.per_arch(f, a, figure, m.blocks, &BLOCKS);
            }
            if let Some(s) = c.dynamic_smem_bytes {
                self.per_arch(f, a, format!("dynamic_smem_bytes = {s}"), s, &SMEM);
            }
        }
    }
}

/// Block sizes above a kernel's `__launch_bounds__`, per built arch.
fn launch_bounds(manifest: &Manifest, reports: &[(String, &CubinReport)], f: &mut Findings) {
    // (entry key, sizes over, bound, whether the entry has a table for the arch) -> arches
    let mut over: BTreeMap<(&str, Vec<u32>, u32, bool), Vec<Arch>> = BTreeMap::new();
    for (_, r) in reports {
        let Some(arch_max) = limits_for(r.arch).map(|l| l.max_threads_per_block) else {
            continue;
        };
        for k in &r.kernels {
            let (Some(bound), Some((key, entry))) = (
                k.max_threads_per_block,
                manifest_entry(manifest, &k.mangled),
            ) else {
                continue;
            };
            // 0 and sizes beyond the arch's maximum are reported as such.
            let sizes: Vec<u32> = entry
                .block_sizes
                .iter()
                .copied()
                .filter(|&b| b > bound && b <= arch_max)
                .collect();
            if !sizes.is_empty() {
                let own_table = entry.arch.contains_key(&r.arch.sm_name());
                over.entry((key, sizes, bound, own_table))
                    .or_default()
                    .push(r.arch);
            }
        }
    }
    for ((key, sizes, bound, own_table), mut archs) in over {
        archs.sort();
        archs.dedup();
        let archs: Vec<String> = archs.iter().map(Arch::sm_name).collect();
        let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
        let head = format!(
            "block_sizes: {} {} above the kernel's __launch_bounds__ of {bound} threads per block on {} \
             (EIATTR_MAX_THREADS in its cubin)",
            sizes.join(", "),
            if sizes.len() == 1 { "is" } else { "are" },
            archs.join(", ")
        );
        let note = |text: String| Note {
            table: format!("[kernels.{}]", toml_key(key)),
            text,
        };
        if own_table {
            f.warnings.push(note(format!(
                "{head}; block_sizes is one list for every arch, so the occupancy there reads does-not-fit"
            )));
        } else {
            f.errors.push(note(format!(
                "{head}: it cannot be launched with {}; drop {} or raise the bound in the source",
                if sizes.len() == 1 { "it" } else { "them" },
                if sizes.len() == 1 { "it" } else { "them" },
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::arch::Arch;
    use crate::contract::tests::{check, kernel, MANIFEST};
    use crate::contract::Outcome;

    fn with(from: &str, to: &str) -> String {
        assert!(MANIFEST.contains(from), "{from}");
        MANIFEST.replace(from, to)
    }

    fn errors_with(o: &Outcome, needle: &str) -> usize {
        o.errors.iter().filter(|e| e.contains(needle)).count()
    }

    #[test]
    fn figures_no_arch_allows_are_errors_naming_entry_and_key() {
        let m = with("max_registers = 32", "max_registers = 1000")
            .replace("block_sizes = [256]", "block_sizes = [0, 256, 5000]")
            .replace("blocks = 8 }", "blocks = 40 }")
            .replace(
                "file = \"copy.cu\"",
                "file = \"copy.cu\"\ndynamic_smem_bytes = 300000",
            );
        let o = check(&m, kernel(Arch::new(90)));
        for needle in [
            "kernels.toml: [kernels.copy_vec16.contract]: max_registers = 1000 is above what any arch allows (255 registers per thread)",
            "kernels.toml: [kernels.copy_vec16]: block_sizes: 0 is not a block size",
            "kernels.toml: [kernels.copy_vec16]: block_sizes: 5000 is above what any arch allows (1024 threads per block)",
            "kernels.toml: [kernels.copy_vec16.contract]: min_blocks_per_sm.blocks = 40 is above what any arch allows (32 resident blocks per SM)",
            "kernels.toml: [kernels.copy_vec16]: dynamic_smem_bytes = 300000 is above what any arch allows (232448 bytes of opt-in shared memory per block)",
        ] {
            assert_eq!(errors_with(&o, needle), 1, "{needle} in {o:#?}");
        }
    }

    #[test]
    fn arch_tables_are_checked_against_their_own_arch() {
        let m = format!(
            "{MANIFEST}[kernels.copy_vec16.arch.sm_86]\nmin_blocks_per_sm = {{ block_size = 0, blocks = 20 }}\n\
             dynamic_smem_bytes = 196608\nmax_registers = 256\n"
        );
        // Judged without an sm_86 build: the table names its arch.
        let o = check(&m, kernel(Arch::new(90)));
        for needle in [
            "[kernels.copy_vec16.arch.sm_86]: min_blocks_per_sm.blocks = 20 is above what sm_86 allows (16 resident blocks per SM)",
            "[kernels.copy_vec16.arch.sm_86]: min_blocks_per_sm.block_size: 0 is not a block size",
            "[kernels.copy_vec16.arch.sm_86]: dynamic_smem_bytes = 196608 is above what sm_86 allows (101376 bytes",
            "[kernels.copy_vec16.arch.sm_86]: max_registers = 256 is above what sm_86 allows (255",
        ] {
            assert_eq!(errors_with(&o, needle), 1, "{needle} in {o:#?}");
        }
    }

    #[test]
    fn shared_figures_some_arches_allow_warn_on_the_others() {
        let m = with(
            "file = \"copy.cu\"",
            "file = \"copy.cu\"\ndynamic_smem_bytes = 196608",
        )
        .replace("blocks = 8 }", "blocks = 0 }");
        let o = check(&m, kernel(Arch::new(90)));
        assert!(o.errors.is_empty() && o.warnings.is_empty(), "{o:#?}");
        let o = check(&m, kernel(Arch::new(80)));
        assert!(o.errors.is_empty(), "{o:#?}");
        assert_eq!(o.warnings.len(), 1, "{o:#?}");
        assert!(
            o.warnings[0].starts_with(
                "cuda/kernels.toml: [kernels.copy_vec16]: dynamic_smem_bytes = 196608 is above what sm_80 allows (166912 bytes"
            ),
            "{}",
            o.warnings[0]
        );
        // A per-arch figure where it does not fit silences it.
        let fixed = format!("{m}[kernels.copy_vec16.arch.sm_80]\ndynamic_smem_bytes = 0\n");
        let o = check(&fixed, kernel(Arch::new(80)));
        assert!(o.errors.is_empty() && o.warnings.is_empty(), "{o:#?}");
    }

    #[test]
    fn block_sizes_beyond_launch_bounds() {
        // kernel() has __launch_bounds__(256).
        let m = with("block_sizes = [256]", "block_sizes = [256, 512]")
            .replace("min_blocks_per_sm = { block_size = 256, blocks = 8 }\n", "");
        let o = check(&m, kernel(Arch::new(90)));
        assert_eq!(
            o.errors,
            vec!["cuda/kernels.toml: [kernels.copy_vec16]: block_sizes: 512 is above the kernel's __launch_bounds__ of \
                  256 threads per block on sm_90 (EIATTR_MAX_THREADS in its cubin): it cannot be launched with it; \
                  drop it or raise the bound in the source"
                .to_string()]
        );
        // The entry configures sm_90 on its own: the bound may differ there; a warning.
        let per_arch = format!("{m}[kernels.copy_vec16.arch.sm_90]\nmax_registers = 32\n");
        let o = check(&per_arch, kernel(Arch::new(90)));
        assert!(o.errors.is_empty(), "{o:#?}");
        assert!(
            o.warnings[0].contains("block_sizes: 512 is above the kernel's __launch_bounds__")
                && o.warnings[0].contains("one list for every arch"),
            "{o:#?}"
        );
    }

    #[test]
    fn a_dynamic_smem_figure_in_the_base_contract_is_never_read() {
        let m = with(
            "max_registers = 32",
            "max_registers = 32\ndynamic_smem_bytes = 1024",
        );
        let o = check(&m, kernel(Arch::new(90)));
        assert_eq!(
            errors_with(
                &o,
                "[kernels.copy_vec16.contract]: dynamic_smem_bytes is never read here"
            ),
            1,
            "{o:#?}"
        );
    }

    #[test]
    fn a_kernel_file_without_entry_points_gets_a_note() {
        let m = crate::manifest::Manifest::default();
        let empty = crate::model::CubinReport {
            arch: Arch::new(90),
            warnings: vec![],
            kernels: vec![],
        };
        let o = crate::contract::check_all(&m, &[("empty".to_string(), &empty)]);
        assert_eq!(
            o.warnings,
            vec!["cuda/empty.cu defines no entry points (no `__global__` function): nothing in it can be launched"
                .to_string()]
        );
    }
}
