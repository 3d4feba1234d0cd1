//! Kernel contracts: checks every kernel report against `cuda/kernels.toml`, fail-closed.
//!
//! - Every entry point in a cubin needs a manifest entry, and every manifest entry needs an
//!   entry point (in the kernel file it names, on every built arch).
//! - Rules (`max_registers`, `spills`, `max_stack_bytes`, `require`, `forbid`,
//!   `min_blocks_per_sm`, `waits_on_grid`, `releases_grid`) apply per arch; `[kernels.NAME.arch.sm_XX]` overrides fields.
//! - A violated rule listed in `exception.allow` (with a non-empty `reason`) is a warning;
//!   so is every violation under `level = "warn"`. Everything else is an error, unless the
//!   build runs with `CUBINS_CONTRACTS=warn` ([`Outcome::at_level`]): a crate that depends on
//!   cubins cannot edit the manifest.
//!
//! Each diagnostic names the kernel, arch, kernel file, observed value and bound, and the
//! TOML key to change.

use crate::analyze::{manifest_entry, KernelNames, FLAG_LOCAL_ARRAY, FLAG_NO_PTXAS};
use crate::arch::Arch;
use crate::manifest::{Contract, KernelEntry, Level, Manifest};
use crate::model::{CubinReport, KernelReport, Limiter};
use crate::occupancy::{self, Carveout, KernelResources};
use crate::sass::{class_matches, count_matching};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Where the build's manifest lives, as diagnostics name it.
pub const MANIFEST_PATH: &str = "cuda/kernels.toml";

/// The opcode class of `griddepcontrol.wait` in SASS.
pub const GRID_WAIT_CLASS: &str = "ACQBULK";

/// The opcode class of `griddepcontrol.launch_dependents` in SASS.
pub const GRID_RELEASE_CLASS: &str = "PREEXIT";

/// Rule names, as `exception.allow` lists them.
pub const RULES: &[&str] = &[
    "max_registers",
    "spills",
    "max_stack_bytes",
    "require",
    "forbid",
    "min_blocks_per_sm",
    "waits_on_grid",
    "releases_grid",
];

/// Result of checking every contract: errors fail the build, warnings print.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

impl Outcome {
    /// The outcome under the build-wide `level`: with [`Level::Warn`] every error becomes a
    /// warning that says so.
    pub fn at_level(mut self, level: Level) -> Outcome {
        if level == Level::Warn {
            for e in self.errors.drain(..) {
                self.warnings
                    .push(format!("{e}\n  ({LEVEL_ENV}=warn: reported, not enforced)"));
            }
        }
        self
    }
}

/// The variable that sets how the build treats contract violations.
pub const LEVEL_ENV: &str = "CUBINS_CONTRACTS";

/// A `CUBINS_CONTRACTS` value that is neither `error` nor `warn`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLevel {
    pub value: String,
}

impl std::fmt::Display for BadLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{LEVEL_ENV}={:?} is not a contract level; use `error` (the default: a violation fails the build) \
             or `warn` (violations print as cargo warnings and the build goes on)",
            self.value
        )
    }
}

impl std::error::Error for BadLevel {}

/// The build-wide level from the value of `CUBINS_CONTRACTS`: unset or empty is
/// [`Level::Error`] (fail-closed).
pub fn level_from_env(value: Option<&str>) -> Result<Level, BadLevel> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("error") => Ok(Level::Error),
        Some("warn") => Ok(Level::Warn),
        Some(_) => Err(BadLevel {
            value: value.unwrap_or_default().to_string(),
        }),
    }
}

/// `reports`: (kernel file name, report of one of its cubins).
pub fn check_all(manifest: &Manifest, reports: &[(String, &CubinReport)]) -> Outcome {
    check_all_in(manifest, reports, MANIFEST_PATH)
}

/// [`check_all`] for a manifest at `manifest_path` (named in diagnostics).
pub fn check_all_in(
    manifest: &Manifest,
    reports: &[(String, &CubinReport)],
    manifest_path: &str,
) -> Outcome {
    let mut out = Outcome::default();
    validate_manifest(manifest, manifest_path, &mut out);
    crate::validate::check(manifest, manifest_path, reports, &mut out);
    out.warnings.extend(files_without_kernels(reports));

    // Which manifest keys were found where, and the kernels with no entry.
    let mut found: BTreeMap<&str, BTreeSet<Arch>> = BTreeMap::new();
    let mut unlisted: BTreeMap<(String, String), (Vec<Arch>, &KernelReport)> = BTreeMap::new();
    let mut allowances_used: BTreeSet<(String, String)> = BTreeSet::new();
    let mut checked: Vec<(String, &KernelReport, &str)> = Vec::new();

    for (file, report) in reports {
        for k in &report.kernels {
            let names = KernelNames::of(&k.mangled);
            let keys: Vec<&String> = manifest
                .kernels
                .keys()
                .filter(|key| names.matches(key))
                .collect();
            if keys.len() > 1 {
                let list: Vec<String> = keys
                    .iter()
                    .map(|k| format!("[kernels.{}]", toml_key(k)))
                    .collect();
                out.errors.push(format!(
                    "{} (cuda/{file}.cu): {manifest_path} has more than one entry for it: {}. Keep one.",
                    k.demangled,
                    list.join(", ")
                ));
                continue;
            }
            let Some((key, entry)) = manifest_entry(manifest, &k.mangled) else {
                let slot = unlisted
                    .entry((file.clone(), k.demangled.clone()))
                    .or_insert((Vec::new(), k));
                slot.0.push(report.arch);
                continue;
            };
            if entry.file != format!("{file}.cu") {
                out.errors.push(format!(
                    "{key}: {manifest_path} says it is defined in `{}`, but it is in `{file}.cu`. \
                     Fix `file` under [kernels.{}].",
                    entry.file,
                    toml_key(key)
                ));
            }
            found.entry(key).or_default().insert(report.arch);
            checked.push((file.clone(), k, key));
        }
    }

    for ((file, name), (archs, k)) in &unlisted {
        out.errors
            .push(missing_entry(file, name, archs, k, manifest_path));
    }

    let built: BTreeMap<&str, BTreeSet<Arch>> =
        reports.iter().fold(BTreeMap::new(), |mut m, (f, r)| {
            m.entry(f.as_str()).or_default().insert(r.arch);
            m
        });
    for (key, entry) in &manifest.kernels {
        let stem = entry.file.strip_suffix(".cu").unwrap_or(&entry.file);
        let have = found.get(key.as_str()).cloned().unwrap_or_default();
        let arches_of_file = built.get(stem).cloned().unwrap_or_default();
        let missing: Vec<String> = arches_of_file
            .difference(&have)
            .map(|a| a.sm_name())
            .collect();
        if have.is_empty() {
            let in_file: Vec<&str> = reports
                .iter()
                .filter(|(f, _)| f == stem)
                .flat_map(|(_, r)| r.kernels.iter().map(|k| k.demangled.as_str()))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let built_note = if arches_of_file.is_empty() {
                format!("no kernel file `{}` was built", entry.file)
            } else {
                format!(
                    "`{}` defines: {}",
                    entry.file,
                    if in_file.is_empty() {
                        "nothing".into()
                    } else {
                        in_file.join(", ")
                    }
                )
            };
            out.errors.push(format!(
                "{key}: {manifest_path} declares it, but no cubin has this entry point ({built_note}). \
                 Remove [kernels.{}] or fix its name (the `extern \"C\"` symbol or the demangled C++ name).",
                toml_key(key)
            ));
        } else if !missing.is_empty() {
            out.errors.push(format!(
                "{key}: missing from the {} cubin(s) of `{}` (compiled out by an arch guard?). Every built arch needs the \
                 entry point; keep it defined (an empty body is fine) on every arch.",
                missing.join(", "),
                entry.file
            ));
        }
    }

    for (file, k, key) in checked {
        let entry = &manifest.kernels[key];
        let arch = k.arch.sm_name();
        let Some(contract) = manifest.contract_for(key, &arch) else {
            continue;
        };
        let ctx = Ctx {
            key,
            file: &file,
            arch: &arch,
            entry,
            manifest_path,
        };
        for v in violations(k, &contract, entry) {
            let text = ctx.diagnostic(&v);
            let allowed = contract
                .exception
                .as_ref()
                .filter(|e| e.allow.iter().any(|a| a == v.rule));
            if let Some(e) = allowed {
                allowances_used.insert((key.to_string(), v.rule.to_string()));
                out.warnings.push(format!(
                    "{text}\n  allowed by a reviewed exception: {}",
                    e.reason.trim()
                ));
            } else if contract.level == Some(Level::Warn) {
                out.warnings.push(format!(
                    "{text}\n  (level = \"warn\": reported, not enforced)"
                ));
            } else {
                out.errors.push(text);
            }
        }
    }

    // An exception under an arch table is judged only where its file was built for that arch.
    for (key, entry) in &manifest.kernels {
        let stem = entry.file.strip_suffix(".cu").unwrap_or(&entry.file);
        let arches_of_file = built.get(stem).cloned().unwrap_or_default();
        let tables = std::iter::once(&entry.contract).chain(
            entry
                .arch
                .iter()
                .filter(|(arch, _)| Arch::parse(arch).is_ok_and(|a| arches_of_file.contains(&a)))
                .map(|(_, c)| c),
        );
        let allowed: BTreeSet<&str> = tables
            .flat_map(|c| {
                c.exception
                    .iter()
                    .flat_map(|e| e.allow.iter().map(String::as_str))
            })
            .collect();
        for rule in allowed {
            if RULES.contains(&rule)
                && !allowances_used.contains(&(key.clone(), rule.to_string()))
                && found.contains_key(key.as_str())
            {
                out.warnings.push(format!(
                    "{key}: the exception for `{rule}` is no longer needed (the rule holds on every built arch); \
                     remove it from `allow` under [kernels.{}]",
                    toml_key(key)
                ));
            }
        }
    }
    out
}

/// A note for each kernel file none of whose cubins has an entry point: it compiles, but
/// nothing of it can be launched.
fn files_without_kernels(reports: &[(String, &CubinReport)]) -> Vec<String> {
    let mut kernels: BTreeMap<&str, usize> = BTreeMap::new();
    for (file, r) in reports {
        *kernels.entry(file.as_str()).or_default() += r.kernels.len();
    }
    kernels
        .into_iter()
        .filter(|(_, n)| *n == 0)
        .map(|(file, _)| {
            format!("cuda/{file}.cu defines no entry points (no `__global__` function): nothing in it can be launched")
        })
        .collect()
}

/// Manifest errors that do not need a report: unknown arch keys, exceptions without a reason
/// or naming unknown rules, malformed opcode classes.
fn validate_manifest(manifest: &Manifest, path: &str, out: &mut Outcome) {
    for (key, entry) in &manifest.kernels {
        let tk = toml_key(key);
        let mut tables: Vec<(String, &Contract)> =
            vec![(format!("[kernels.{tk}.contract]"), &entry.contract)];
        for (arch, c) in &entry.arch {
            match Arch::parse(arch) {
                Err(e) => out
                    .errors
                    .push(format!("{path}: [kernels.{tk}.arch.{arch}]: {e}")),
                Ok(a) if a.sm_name() != *arch => out.errors.push(format!(
                    "{path}: [kernels.{tk}.arch.{arch}]: write the arch as `{a}`"
                )),
                // Not an error: the table is dead, not wrong, and a dependent cannot remove it.
                Ok(a) if a.arch_specific && !manifest.uses_arch_specific(&entry.file) => {
                    out.warnings.push(format!(
                        "{path}: [kernels.{tk}.arch.{arch}] never applies: `{}` is not listed under \
                         [arch_specific], so it is built for {} instead of {a}; remove the table \
                         (or list the file there if it uses arch-specific instructions)",
                        entry.file,
                        a.plain()
                    ))
                }
                Ok(_) => {}
            }
            tables.push((format!("[kernels.{tk}.arch.{arch}]"), c));
        }
        for (table, c) in tables {
            if let Some(e) = &c.exception {
                if e.reason.trim().is_empty() {
                    out.errors.push(format!("{path}: {table}: an exception needs a non-empty `reason` saying why it is acceptable"));
                }
                if e.allow.is_empty() {
                    out.errors.push(format!(
                        "{path}: {table}: an exception with an empty `allow` list allows nothing"
                    ));
                }
                for a in &e.allow {
                    if !RULES.contains(&a.as_str()) {
                        out.errors.push(format!(
                            "{path}: {table}: exception allows unknown rule `{a}`; rules are: {}",
                            RULES.join(", ")
                        ));
                    }
                }
            }
            for pattern in c.require.iter().chain(c.forbid.iter()).flatten() {
                if !valid_class_pattern(pattern) {
                    out.errors.push(format!(
                        "{path}: {table}: `{pattern}` is not an opcode class (write it like `LDGSTS`, `LDG.128`, `HMMA`)"
                    ));
                }
            }
        }
    }
}

fn valid_class_pattern(p: &str) -> bool {
    let mut parts = p.split('.');
    let head_ok = parts.next().is_some_and(|h| {
        h.starts_with(|c: char| c.is_ascii_uppercase())
            && h.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    });
    head_ok
        && parts.all(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: &'static str,
    /// What was observed against which bound.
    pub detail: String,
}

/// Every rule of `contract` that kernel `k` breaks.
pub fn violations(k: &KernelReport, c: &Contract, entry: &KernelEntry) -> Vec<Violation> {
    let mut v = Vec::new();
    if let Some(max) = c.max_registers {
        if k.registers.value > max {
            v.push(Violation {
                rule: "max_registers",
                detail: format!(
                    "uses {} registers per thread; the contract allows at most {max}",
                    k.registers.value
                ),
            });
        }
    }
    if c.spills == Some(false) {
        if k.flags.iter().any(|f| f.starts_with(FLAG_NO_PTXAS)) {
            v.push(Violation {
                rule: "spills",
                detail: "spill counts are unknown (no ptxas log); the contract says spills = false"
                    .into(),
            });
        } else if k.spill_bytes() > 0 {
            let mut d = format!(
                "spills {} bytes stored and {} bytes loaded",
                k.spill_stores, k.spill_loads
            );
            for s in &k.callee_spills {
                let _ = write!(
                    d,
                    ", plus {} / {} bytes in callee `{}`",
                    s.spill_stores, s.spill_loads, s.callee
                );
            }
            d.push_str("; the contract says spills = false");
            v.push(Violation {
                rule: "spills",
                detail: d,
            });
        }
    }
    if let Some(max) = c.max_stack_bytes {
        if k.stack_bytes.value > max {
            let hint = if k.flags.iter().any(|f| f.starts_with(FLAG_LOCAL_ARRAY)) {
                " (no spills: a run-time indexed local array?)"
            } else {
                ""
            };
            v.push(Violation {
                rule: "max_stack_bytes",
                detail: format!(
                    "has a {}-byte stack frame{hint}; the contract allows at most {max}",
                    k.stack_bytes.value
                ),
            });
        }
    }
    for pattern in c.require.iter().flatten() {
        if count_matching(&k.opcode_classes, pattern) == 0 {
            v.push(Violation {
                rule: "require",
                detail: format!(
                    "no {pattern} instruction in its SASS; the contract requires {pattern} (require = [{}]). Memory and MMA classes present: {}",
                    quoted(c.require.as_deref().unwrap_or(&[])),
                    present_key_classes(k)
                ),
            });
        }
    }
    // The grid controls exist from sm_90 (`griddepcontrol`); earlier code launches plainly.
    let grid_controls = [
        (
            c.waits_on_grid,
            "waits_on_grid",
            GRID_WAIT_CLASS,
            "it does not wait on the grid dependency (cubins::wait_for_previous_grid), yet the \
             contract says the runtime launches it as a programmatic dependent (waits_on_grid = true)",
        ),
        (
            c.releases_grid,
            "releases_grid",
            GRID_RELEASE_CLASS,
            "it does not let the stream's next kernel launch early (cubins::allow_next_grid), yet \
             the contract says it does (releases_grid = true)",
        ),
    ];
    for (wanted, rule, class, what) in grid_controls {
        if wanted == Some(true)
            && k.arch.major() >= 9
            && count_matching(&k.opcode_classes, class) == 0
        {
            v.push(Violation {
                rule,
                detail: format!("no {class} instruction in its SASS: {what}"),
            });
        }
    }
    for pattern in c.forbid.iter().flatten() {
        let hits: Vec<String> = k
            .opcode_classes
            .iter()
            .filter(|(class, n)| **n > 0 && class_matches(pattern, class))
            .map(|(class, n)| format!("{n} x {class}"))
            .collect();
        if !hits.is_empty() {
            v.push(Violation {
                rule: "forbid",
                detail: format!(
                    "has {} in its SASS; the contract forbids {pattern} (forbid = [{}])",
                    hits.join(", "),
                    quoted(c.forbid.as_deref().unwrap_or(&[]))
                ),
            });
        }
    }
    if let Some(min) = c.min_blocks_per_sm {
        let res = KernelResources {
            registers: k.registers.value,
            static_smem_bytes: k.smem_bytes.value,
            barriers: k.barriers.unwrap_or(0),
            max_threads_per_block: k.max_threads_per_block,
        };
        if let Some(l) = occupancy::limits_for(k.arch) {
            let dynamic_smem = entry.dynamic_smem_on(&k.arch.sm_name());
            let o = l.occupancy(&res, min.block_size, dynamic_smem, Carveout::Default);
            if o.blocks_per_sm < min.blocks {
                let limiter = match o.limiter {
                    Limiter::Registers => "registers",
                    Limiter::SharedMemory => "shared memory",
                    Limiter::Threads => "threads per SM",
                    Limiter::BlockLimit => "the per-SM block limit",
                    Limiter::Barriers => "named barriers",
                    Limiter::DoesNotFit => "nothing: the block does not fit at all",
                };
                v.push(Violation {
                    rule: "min_blocks_per_sm",
                    detail: format!(
                        "{} resident blocks per SM at {} threads and {} bytes of dynamic shared memory (limited by {limiter}); \
                         the contract requires at least {}",
                        o.blocks_per_sm, min.block_size, dynamic_smem, min.blocks
                    ),
                });
            }
        }
    }
    v
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn present_key_classes(k: &KernelReport) -> String {
    let present: Vec<String> = k
        .opcode_classes
        .iter()
        .filter(|(c, _)| {
            crate::sass::KEY_CLASSES
                .iter()
                .any(|key| class_matches(key, c))
        })
        .map(|(c, n)| format!("{c} x{n}"))
        .collect();
    if present.is_empty() {
        "none".into()
    } else {
        present.join(", ")
    }
}

struct Ctx<'a> {
    key: &'a str,
    file: &'a str,
    arch: &'a str,
    entry: &'a KernelEntry,
    manifest_path: &'a str,
}

impl Ctx<'_> {
    fn diagnostic(&self, v: &Violation) -> String {
        let tk = toml_key(self.key);
        // Point at the table that set the bound.
        let arch_table = format!("[kernels.{tk}.arch.{}]", self.arch);
        let base_table = format!("[kernels.{tk}.contract]");
        let from_arch = self
            .entry
            .arch
            .get(self.arch)
            .is_some_and(|c| rule_is_set(c, v.rule));
        let (here, alternative) = if from_arch {
            (arch_table.clone(), format!("(set for {} only)", self.arch))
        } else {
            (
                base_table,
                format!("(or under {arch_table} for {} only)", self.arch),
            )
        };
        format!(
            "{} on {} (cuda/{}.cu): {}: {}.\n  to change the contract: edit `{}` under {here} in {} {alternative}, \
             or allow it with a reviewed exception there: exception = {{ allow = [\"{}\"], reason = \"...\" }}",
            self.key, self.arch, self.file, v.rule, v.detail, v.rule, self.manifest_path, v.rule
        )
    }
}

fn rule_is_set(c: &Contract, rule: &str) -> bool {
    match rule {
        "max_registers" => c.max_registers.is_some(),
        "spills" => c.spills.is_some(),
        "max_stack_bytes" => c.max_stack_bytes.is_some(),
        "require" => c.require.is_some(),
        "forbid" => c.forbid.is_some(),
        "min_blocks_per_sm" => c.min_blocks_per_sm.is_some(),
        "waits_on_grid" => c.waits_on_grid.is_some(),
        "releases_grid" => c.releases_grid.is_some(),
        _ => false,
    }
}

/// The error for a kernel without a manifest entry, with an entry to paste that holds today.
fn missing_entry(file: &str, name: &str, archs: &[Arch], k: &KernelReport, path: &str) -> String {
    let key = KernelNames::of(&k.mangled).short;
    let tk = toml_key(&key);
    let arch_list: Vec<String> = archs.iter().map(|a| a.sm_name()).collect();
    let sizes: Vec<String> = k.params.iter().map(|p| p.size.to_string()).collect();
    let mut s = format!(
        "{name} (cuda/{file}.cu, {}): no entry in {path}; every entry point needs one (fail-closed). \
         A starting point with its figures on {}:\n\n[kernels.{tk}]\nfile = \"{file}.cu\"\n\
         params = []  # {} parameter(s) in the cubin, sizes in bytes: [{}]; write each as \"name: type\"\n\
         block_sizes = [256]\n\n[kernels.{tk}.contract]\nmax_registers = {}\n",
        arch_list.join(", "),
        k.arch,
        k.params.len(),
        sizes.join(", "),
        k.registers.value
    );
    if k.spill_bytes() == 0 {
        s.push_str("spills = false\n");
    }
    let _ = writeln!(s, "max_stack_bytes = {}", k.stack_bytes.value);
    s
}

/// A TOML key for `name`: bare when it can be, quoted otherwise (C++ names).
pub fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{Occupancy, Source, Sourced};

    /// A `copy_vec16` report with `__launch_bounds__(256)`, 24 registers, no spills.
    pub(crate) fn kernel(arch: Arch) -> KernelReport {
        let s = |v| Sourced {
            value: v,
            source: Source::Ptxas,
            other: None,
        };
        KernelReport {
            mangled: "copy_vec16".into(),
            demangled: "copy_vec16".into(),
            arch,
            registers: s(24),
            barriers: Some(0),
            smem_bytes: s(0),
            stack_bytes: s(0),
            spill_stores: 0,
            spill_loads: 0,
            cumulative_stack_bytes: None,
            cmem_bytes: BTreeMap::new(),
            max_registers_override: None,
            max_threads_per_block: Some(256),
            callees: vec![],
            callee_spills: vec![],
            flags: vec![],
            opcode_classes: [
                ("LDG.128".to_string(), 3),
                ("STG.128".to_string(), 3),
                ("IMAD".to_string(), 9),
            ]
            .into(),
            params: vec![],
            occupancy: Vec::<Occupancy>::new(),
            sass: String::new(),
        }
    }

    pub(crate) const MANIFEST: &str = r#"
[kernels.copy_vec16]
file = "copy.cu"
block_sizes = [256]
[kernels.copy_vec16.contract]
max_registers = 32
spills = false
max_stack_bytes = 0
require = ["LDG.128", "STG"]
forbid = ["LDL", "STL"]
min_blocks_per_sm = { block_size = 256, blocks = 8 }
"#;

    pub(crate) fn check(manifest: &str, k: KernelReport) -> Outcome {
        let m = Manifest::parse(manifest, "kernels.toml").unwrap();
        let r = CubinReport {
            arch: k.arch,
            warnings: vec![],
            kernels: vec![k],
        };
        check_all(&m, &[("copy".to_string(), &r)])
    }

    /// `waits_on_grid` and `releases_grid`: sm_90 and later code needs ACQBULK (the wait before
    /// its first memory access) and PREEXIT (the early launch of the next kernel); earlier
    /// code has no such instructions and is not asked for them.
    #[test]
    fn grid_controls_need_their_instruction_from_sm_90() {
        for (rule, class, helper) in [
            ("waits_on_grid", "ACQBULK", "cubins::wait_for_previous_grid"),
            ("releases_grid", "PREEXIT", "cubins::allow_next_grid"),
        ] {
            let manifest = MANIFEST.replace("forbid = [", &format!("{rule} = true\nforbid = ["));
            let o = check(&manifest, kernel(Arch::new(90)));
            let e = o.errors.join("\n");
            assert!(
                e.contains(&format!(": {rule}: no {class} instruction")),
                "{e}"
            );
            assert!(e.contains(helper), "{e}");
            assert!(check(&manifest, kernel(Arch::new(80))).errors.is_empty());
            let mut k = kernel(Arch::new(100));
            k.opcode_classes.insert(class.to_string(), 1);
            assert!(check(&manifest, k).errors.is_empty(), "{rule}");
        }
        assert!(check(MANIFEST, kernel(Arch::new(90))).errors.is_empty());
    }

    #[test]
    fn holding_contract_is_silent() {
        let o = check(MANIFEST, kernel(Arch::new(90)));
        assert!(o.errors.is_empty() && o.warnings.is_empty(), "{o:?}");
    }

    #[test]
    fn each_rule_reports_observed_bound_and_key() {
        let mut k = kernel(Arch::new(90));
        k.registers.value = 40;
        k.spill_stores = 8;
        k.stack_bytes.value = 16;
        k.opcode_classes = [
            ("LDG.32".to_string(), 2),
            ("STL.32".to_string(), 2),
            ("STG.128".to_string(), 1),
        ]
        .into();
        let o = check(MANIFEST, k);
        let all = o.errors.join("\n---\n");
        for (rule, observed) in [
            ("max_registers", "uses 40 registers"),
            ("spills", "spills 8 bytes stored"),
            ("max_stack_bytes", "16-byte stack frame"),
            ("require", "no LDG.128 instruction"),
            ("forbid", "2 x STL.32"),
            ("min_blocks_per_sm", "6 resident blocks per SM"),
        ] {
            let e = o
                .errors
                .iter()
                .find(|e| e.contains(&format!(": {rule}: ")))
                .unwrap_or_else(|| panic!("no {rule} error in:\n{all}"));
            assert!(e.contains(observed), "{e}");
            assert!(e.starts_with("copy_vec16 on sm_90 (cuda/copy.cu)"), "{e}");
            assert!(
                e.contains(&format!(
                    "edit `{rule}` under [kernels.copy_vec16.contract] in cuda/kernels.toml"
                )),
                "{e}"
            );
        }
        assert_eq!(o.errors.len(), 6, "{all}");
    }

    #[test]
    fn min_blocks_names_the_limiter() {
        let mut k = kernel(Arch::new(90));
        k.registers.value = 64;
        let o = check(
            &MANIFEST.replace("max_registers = 32", "max_registers = 64"),
            k,
        );
        assert_eq!(o.errors.len(), 1, "{o:?}");
        assert!(
            o.errors[0].contains("4 resident blocks per SM at 256 threads")
                && o.errors[0].contains("limited by registers"),
            "{}",
            o.errors[0]
        );
    }

    #[test]
    fn per_arch_override_and_its_key() {
        let m = format!("{MANIFEST}[kernels.copy_vec16.arch.sm_80]\nmax_registers = 16\n");
        assert!(check(&m, kernel(Arch::new(90))).errors.is_empty());
        let o = check(&m, kernel(Arch::new(80)));
        assert_eq!(o.errors.len(), 1, "{o:?}");
        assert!(
            o.errors[0].contains("under [kernels.copy_vec16.arch.sm_80]"),
            "{}",
            o.errors[0]
        );
    }

    #[test]
    fn exceptions_and_warn_level() {
        let mut k = kernel(Arch::new(90));
        k.registers.value = 40;
        let base = MANIFEST.replace("min_blocks_per_sm = { block_size = 256, blocks = 8 }\n", "");
        let allowed = base.replace(
            "max_registers = 32",
            "max_registers = 32\nexception = { allow = [\"max_registers\"], reason = \"measured: no slower\" }",
        );
        let o = check(&allowed, k.clone());
        assert!(o.errors.is_empty(), "{o:?}");
        assert!(o.warnings[0].contains("measured: no slower"));

        let no_reason = allowed.replace("measured: no slower", " ");
        assert!(check(&no_reason, k.clone())
            .errors
            .iter()
            .any(|e| e.contains("non-empty `reason`")));
        let bad_rule = allowed.replace("allow = [\"max_registers\"]", "allow = [\"max_regs\"]");
        assert!(check(&bad_rule, k.clone())
            .errors
            .iter()
            .any(|e| e.contains("unknown rule `max_regs`")));

        let warn = base.replace("max_registers = 32", "max_registers = 32\nlevel = \"warn\"");
        let o = check(&warn, k);
        assert!(o.errors.is_empty() && o.warnings.len() == 1, "{o:?}");

        // An exception for a rule that holds is reported as no longer needed.
        let o = check(&allowed, kernel(Arch::new(90)));
        assert!(
            o.errors.is_empty() && o.warnings.iter().any(|w| w.contains("no longer needed")),
            "{o:?}"
        );
    }

    #[test]
    fn fail_closed_both_ways() {
        let mut stranger = kernel(Arch::new(90));
        stranger.mangled = "_ZN2ns5otherIiEEvPi".into();
        stranger.demangled = "void ns::other<int>(int*)".into();
        let o = check(MANIFEST, stranger);
        assert!(
            o.errors
                .iter()
                .any(|e| e.contains("void ns::other<int>(int*)")
                    && e.contains("no entry in cuda/kernels.toml")),
            "{o:?}"
        );
        assert!(
            o.errors
                .iter()
                .any(|e| e.contains("[kernels.\"ns::other<int>\"]")),
            "{o:?}"
        );
        assert!(
            o.errors.iter().any(|e| e.starts_with(
                "copy_vec16: cuda/kernels.toml declares it, but no cubin has this entry point"
            )),
            "{o:?}"
        );
    }

    #[test]
    fn cpp_kernels_match_by_short_name_and_wrong_file_is_an_error() {
        let mut k = kernel(Arch::new(90));
        k.mangled = "_ZN8fixtures5scaleIfLi4EEEvPKT_PS1_S1_".into();
        k.demangled = "void fixtures::scale<float, 4>(float const*, float*, float)".into();
        let m = "[kernels.\"fixtures::scale<float, 4>\"]\nfile = \"copy.cu\"\n[kernels.\"fixtures::scale<float, 4>\".contract]\nmax_registers = 8\n";
        let o = check(m, k.clone());
        assert_eq!(o.errors.len(), 1, "{o:?}");
        assert!(
            o.errors[0].contains("under [kernels.\"fixtures::scale<float, 4>\".contract]"),
            "{}",
            o.errors[0]
        );
        let o = check(&m.replace("copy.cu", "other.cu"), k);
        assert!(
            o.errors
                .iter()
                .any(|e| e.contains("says it is defined in `other.cu`")),
            "{o:?}"
        );
    }

    #[test]
    fn contract_level_from_the_environment() {
        for v in [None, Some(""), Some("error"), Some(" ERROR ")] {
            assert_eq!(level_from_env(v), Ok(Level::Error), "{v:?}");
        }
        assert_eq!(level_from_env(Some("warn")), Ok(Level::Warn));
        assert_eq!(level_from_env(Some("Warn")), Ok(Level::Warn));
        for v in ["warning", "off", "0", "1"] {
            let e = level_from_env(Some(v)).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!("CUBINS_CONTRACTS=\"{v}\" is not a contract level"))
                    && msg.contains("`error`")
                    && msg.contains("`warn`"),
                "{msg}"
            );
        }
    }

    #[test]
    fn warn_level_turns_every_violation_into_a_warning() {
        let mut k = kernel(Arch::new(90));
        k.registers.value = 40;
        k.spill_stores = 8;
        let strict = check(MANIFEST, k.clone());
        assert!(strict.errors.len() >= 2, "{strict:?}");
        assert_eq!(
            check(MANIFEST, k.clone()).at_level(Level::Error).errors,
            strict.errors
        );
        let o = check(MANIFEST, k).at_level(Level::Warn);
        assert!(o.errors.is_empty(), "{o:?}");
        assert_eq!(
            o.warnings.len(),
            strict.errors.len() + strict.warnings.len()
        );
        for (w, e) in o.warnings.iter().zip(&strict.errors) {
            assert!(
                w.starts_with(e.as_str())
                    && w.ends_with("(CUBINS_CONTRACTS=warn: reported, not enforced)"),
                "{w}"
            );
        }
    }

    #[test]
    fn arch_specific_tables_of_plain_files_never_apply() {
        let declared = format!(
            "[arch_specific]\nfiles = [\"gemm_wgmma.cu\"]\n{MANIFEST}[kernels.copy_vec16.arch.sm_90a]\nmax_registers = 16\n"
        );
        let o = check(&declared, kernel(Arch::new(90)));
        assert!(o.errors.is_empty(), "{o:?}");
        assert!(
            o.warnings.iter().any(
                |w| w.contains("[kernels.copy_vec16.arch.sm_90a] never applies")
                    && w.contains("built for sm_90 instead of sm_90a")
            ),
            "{o:?}"
        );
        // Declared arch-specific (or nothing declared): the table applies and is silent.
        for m in [
            declared.replace("gemm_wgmma.cu", "copy.cu"),
            declared.replace("[arch_specific]\nfiles = [\"gemm_wgmma.cu\"]\n", ""),
        ] {
            let o = check(&m, kernel(Arch::new(90)));
            assert!(o.errors.is_empty() && o.warnings.is_empty(), "{o:?}");
        }
    }

    #[test]
    fn an_arch_exception_is_judged_where_its_file_was_built_for_that_arch() {
        // copy.cu built for sm_90 only; another file has an sm_90a cubin.
        let m = format!(
            "{MANIFEST}[kernels.copy_vec16.arch.sm_90a]\nexception = {{ allow = [\"max_registers\"], reason = \"r\" }}\n\
             [kernels.wg]\nfile = \"wg.cu\"\n"
        );
        let m = Manifest::parse(&m, "kernels.toml").unwrap();
        let copy = CubinReport {
            arch: Arch::new(90),
            warnings: vec![],
            kernels: vec![kernel(Arch::new(90))],
        };
        let mut wk = kernel(Arch::specific(90));
        wk.mangled = "wg".into();
        wk.demangled = "wg".into();
        let wg = CubinReport {
            arch: Arch::specific(90),
            warnings: vec![],
            kernels: vec![wk],
        };
        let o = check_all(&m, &[("copy".into(), &copy), ("wg".into(), &wg)]);
        assert!(o.errors.is_empty(), "{o:?}");
        assert!(
            !o.warnings.iter().any(|w| w.contains("no longer needed")),
            "copy.cu has no sm_90a cubin to judge the exception on: {o:?}"
        );
        // Once copy.cu has an sm_90a cubin that holds, the exception is reported as unneeded.
        let copy_a = CubinReport {
            arch: Arch::specific(90),
            warnings: vec![],
            kernels: vec![kernel(Arch::specific(90))],
        };
        let o = check_all(
            &m,
            &[
                ("copy".into(), &copy),
                ("copy".into(), &copy_a),
                ("wg".into(), &wg),
            ],
        );
        assert!(
            o.warnings.iter().any(|w| w.contains("no longer needed")),
            "{o:?}"
        );
    }

    #[test]
    fn malformed_manifest_parts() {
        let m = format!("{MANIFEST}[kernels.copy_vec16.arch.sm_99]\nmax_registers = 16\n");
        assert!(check(&m, kernel(Arch::new(90)))
            .errors
            .iter()
            .any(|e| e.contains("sm_99")));
        let m = MANIFEST.replace("forbid = [\"LDL\", \"STL\"]", "forbid = [\"ldl\"]");
        assert!(check(&m, kernel(Arch::new(90)))
            .errors
            .iter()
            .any(|e| e.contains("`ldl` is not an opcode class")));
        assert_eq!(toml_key("copy_vec16"), "copy_vec16");
        assert_eq!(toml_key("ns::k<int>"), "\"ns::k<int>\"");
    }
}
