//! Rendering reports: one kernel's resources and occupancy as text (what snapshots hold),
//! the kernels x arches markdown table, the one-line-per-cubin build summary, and the
//! per-kernel JSON summary of the CLI.

use crate::analyze::manifest_entry;
use crate::contract::violations;
use crate::manifest::{Level, Manifest};
use crate::model::{KernelReport, Limiter, Occupancy, Source, Sourced};
use crate::sass::{class_matches, key_class_counts, KEY_CLASSES};
use crate::schema::ReportsFile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

fn source_name(s: Source) -> &'static str {
    match s {
        Source::Ptxas => "ptxas",
        Source::ResUsage => "cuobjdump -res-usage",
    }
}

/// `24 (ptxas)` or `8192 (ptxas; cuobjdump -res-usage: 9216)`.
fn sourced(s: &Sourced) -> String {
    match s.other {
        Some((o, v)) => format!(
            "{} ({}; {}: {v})",
            s.value,
            source_name(s.source),
            source_name(o)
        ),
        None => format!("{} ({})", s.value, source_name(s.source)),
    }
}

pub fn limiter_name(l: Limiter) -> &'static str {
    match l {
        Limiter::Registers => "registers",
        Limiter::SharedMemory => "shared memory",
        Limiter::Threads => "threads",
        Limiter::BlockLimit => "block limit",
        Limiter::Barriers => "barriers",
        Limiter::DoesNotFit => "does not fit",
    }
}

/// `256: 8 blocks, 100% (threads)`.
pub fn occupancy_cell(o: &Occupancy) -> String {
    let dynamic = if o.dynamic_smem_bytes > 0 {
        format!(" +{} B dyn", o.dynamic_smem_bytes)
    } else {
        String::new()
    };
    format!(
        "{}{dynamic}: {} blk, {}% ({})",
        o.block_size,
        o.blocks_per_sm,
        o.occupancy_pct,
        limiter_name(o.limiter)
    )
}

/// One kernel's resources, occupancy, opcode classes and flags as stable text.
pub fn kernel_resources_text(k: &KernelReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "kernel: {}", k.demangled);
    if k.mangled != k.demangled {
        let _ = writeln!(s, "symbol: {}", k.mangled);
    }
    let _ = writeln!(s, "arch: {}", k.arch);
    let _ = writeln!(s, "registers: {}", sourced(&k.registers));
    if let Some(r) = k.max_registers_override {
        let _ = writeln!(s, "register limit: {r}");
    }
    if let Some(b) = k.barriers {
        let _ = writeln!(s, "barriers: {b}");
    }
    let _ = writeln!(s, "static shared memory bytes: {}", sourced(&k.smem_bytes));
    let _ = writeln!(s, "stack frame bytes: {}", sourced(&k.stack_bytes));
    if let Some(c) = k.cumulative_stack_bytes {
        let _ = writeln!(s, "cumulative stack bytes: {c}");
    }
    let _ = writeln!(
        s,
        "spill bytes: {} stored, {} loaded",
        k.spill_stores, k.spill_loads
    );
    if !k.cmem_bytes.is_empty() {
        let banks: Vec<String> = k
            .cmem_bytes
            .iter()
            .map(|(b, n)| format!("cmem[{b}] {n}"))
            .collect();
        let _ = writeln!(s, "constant bytes: {}", banks.join(", "));
    }
    match k.max_threads_per_block {
        Some(t) => {
            let _ = writeln!(s, "max threads per block: {t}");
        }
        None => s.push_str("max threads per block: not declared\n"),
    }
    let params: Vec<String> = k
        .params
        .iter()
        .map(|p| format!("#{} at {} ({} B)", p.ordinal, p.offset, p.size))
        .collect();
    let _ = writeln!(
        s,
        "params: {}",
        if params.is_empty() {
            "none".into()
        } else {
            params.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "callees: {}",
        if k.callees.is_empty() {
            "none".into()
        } else {
            k.callees.join(", ")
        }
    );
    for c in &k.callee_spills {
        let _ = writeln!(
            s,
            "callee spill: {}: {} stored, {} loaded, {}-byte frame",
            c.callee, c.spill_stores, c.spill_loads, c.stack_bytes
        );
    }
    s.push_str("occupancy (block size: resident blocks per SM, warps, occupancy, limiter):\n");
    for o in &k.occupancy {
        let dynamic = if o.dynamic_smem_bytes > 0 {
            format!(" + {} B dynamic smem", o.dynamic_smem_bytes)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "  {}{dynamic}: {} blocks, {} warps, {}%, {}",
            o.block_size,
            o.blocks_per_sm,
            o.warps_per_sm,
            o.occupancy_pct,
            limiter_name(o.limiter)
        );
    }
    s.push_str("opcode classes:\n");
    for (c, n) in &k.opcode_classes {
        let _ = writeln!(s, "  {c}: {n}");
    }
    s.push_str("flags:");
    if k.flags.is_empty() {
        s.push_str(" none\n");
    } else {
        s.push('\n');
        for f in &k.flags {
            let _ = writeln!(s, "  - {f}");
        }
    }
    s
}

/// Key opcode classes present in a kernel, compactly: `LDG.128:3 STG.128:3 LDGSTS.128:2`.
pub fn key_classes_cell(histogram: &BTreeMap<String, u32>) -> String {
    let cells: Vec<String> = histogram
        .iter()
        .filter(|(c, n)| **n > 0 && KEY_CLASSES.iter().any(|k| class_matches(k, c)))
        .map(|(c, n)| format!("{c}:{n}"))
        .collect();
    if cells.is_empty() {
        "-".into()
    } else {
        cells.join(" ")
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The kernels x arches table of a whole build.
pub fn markdown_table(r: &ReportsFile) -> String {
    let mut s = format!(
        "CUDA {} ({}): kernels x arches\n\n",
        r.toolkit, r.toolkit_major_minor
    );
    s.push_str("| kernel | file | arch | regs | spills st/ld | stack | smem | occupancy | key opcode classes | flags |\n");
    s.push_str("|---|---|---|---:|---:|---:|---:|---|---|---|\n");
    let mut rows = 0;
    for f in &r.files {
        for c in &f.cubins {
            for k in &c.report.kernels {
                rows += 1;
                let occ: Vec<String> = k.occupancy.iter().map(occupancy_cell).collect();
                let callee = k.callee_spill_bytes();
                let spills = if callee > 0 {
                    format!(
                        "{}/{} (+{callee} in callees)",
                        k.spill_stores, k.spill_loads
                    )
                } else {
                    format!("{}/{}", k.spill_stores, k.spill_loads)
                };
                let flags: Vec<&str> = k
                    .flags
                    .iter()
                    .map(|f| f.split(':').next().unwrap_or(f))
                    .collect();
                let _ = writeln!(
                    s,
                    "| {} | {}.cu | {} | {} | {} | {} | {} | {} | {} | {} |",
                    md_escape(&k.demangled),
                    f.name,
                    k.arch,
                    k.registers.value,
                    spills,
                    k.stack_bytes.value,
                    k.smem_bytes.value,
                    md_escape(&occ.join("; ")),
                    key_classes_cell(&k.opcode_classes),
                    if flags.is_empty() {
                        "-".into()
                    } else {
                        flags.join("; ")
                    }
                );
            }
        }
    }
    if rows == 0 {
        s.push_str("| (no kernels) | | | | | | | | | |\n");
    }
    s
}

/// How the contracts of one cubin's kernels fared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContractTally {
    /// Violations that fail a build.
    pub broken: usize,
    /// Violations under `level = "warn"`: reported, not enforced.
    pub warned: usize,
    /// Violations allowed by a reviewed exception.
    pub excepted: usize,
    /// Entry points without a manifest entry (they fail a build).
    pub unlisted: usize,
}

impl ContractTally {
    /// Tallies `kernels` (of one cubin) against `manifest`.
    pub fn of(kernels: &[KernelReport], manifest: &Manifest) -> ContractTally {
        let mut t = ContractTally::default();
        for k in kernels {
            let Some((key, entry)) = manifest_entry(manifest, &k.mangled) else {
                t.unlisted += 1;
                continue;
            };
            let Some(c) = manifest.contract_for(key, &k.arch.sm_name()) else {
                continue;
            };
            for v in violations(k, &c, entry) {
                if c.exception
                    .as_ref()
                    .is_some_and(|e| e.allow.iter().any(|a| a == v.rule))
                {
                    t.excepted += 1;
                } else if c.level == Some(Level::Warn) {
                    t.warned += 1;
                } else {
                    t.broken += 1;
                }
            }
        }
        t
    }

    /// Whether every contract held (reviewed exceptions count as held).
    pub fn held(&self) -> bool {
        self.broken == 0 && self.warned == 0 && self.unlisted == 0
    }

    /// `held`, `held (2 excepted)`, `3 broken, 1 unlisted`.
    pub fn cell(&self) -> String {
        let mut parts = Vec::new();
        for (n, what) in [
            (self.broken, "broken"),
            (self.warned, "warned"),
            (self.unlisted, "unlisted"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        let excepted = (self.excepted > 0).then(|| format!("{} excepted", self.excepted));
        match (parts.is_empty(), excepted) {
            (true, None) => "held".into(),
            (true, Some(e)) => format!("held ({e})"),
            (false, e) => parts.into_iter().chain(e).collect::<Vec<_>>().join(", "),
        }
    }
}

/// `12% (1 blk)`: the lowest occupancy of any kernel at any block size it declares.
fn worst_occupancy(kernels: &[KernelReport]) -> String {
    kernels
        .iter()
        .flat_map(|k| &k.occupancy)
        .min_by_key(|o| (o.occupancy_pct, o.blocks_per_sm))
        .map_or("-".into(), |o| {
            format!("{}% ({} blk)", o.occupancy_pct, o.blocks_per_sm)
        })
}

/// Spilled bytes (stored plus loaded) of the kernels and the callees charged to them.
fn spill_bytes(kernels: &[KernelReport]) -> u32 {
    kernels
        .iter()
        .fold(0, |sum, k| sum.saturating_add(k.spill_bytes()))
}

/// A build in one line per kernel file x arch: entry points, the most registers any of them
/// uses, spilled bytes, the worst occupancy, and how the contracts fared; then a total.
pub fn build_summary(r: &ReportsFile, manifest: &Manifest) -> String {
    let header = [
        "kernel file",
        "arch",
        "kernels",
        "max regs",
        "spill B",
        "worst occupancy",
        "contracts",
    ];
    let mut rows: Vec<[String; 7]> = Vec::new();
    let mut failing = 0;
    for f in &r.files {
        for c in &f.cubins {
            let ks = &c.report.kernels;
            let tally = ContractTally::of(ks, manifest);
            failing += usize::from(!tally.held());
            rows.push([
                format!("{}.cu", f.name),
                c.report.arch.sm_name(),
                ks.len().to_string(),
                ks.iter()
                    .map(|k| k.registers.value)
                    .max()
                    .unwrap_or(0)
                    .to_string(),
                spill_bytes(ks).to_string(),
                worst_occupancy(ks),
                tally.cell(),
            ]);
        }
    }
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: [&str; 7]| -> String {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            // Text columns left-aligned, figures right-aligned.
            let _ = match i {
                0 | 1 | 5 | 6 => write!(l, "{cell:<w$}  "),
                _ => write!(l, "{cell:>w$}  "),
            };
        }
        l.trim_end().to_string() + "\n"
    };
    let mut s = format!("CUDA {}: kernel files x arches\n", r.toolkit);
    s.push_str(&line(header));
    for row in &rows {
        s.push_str(&line(row.each_ref().map(String::as_str)));
    }
    let kernels: usize = r
        .files
        .iter()
        .flat_map(|f| &f.cubins)
        .map(|c| c.report.kernels.len())
        .sum();
    let _ = writeln!(
        s,
        "{} cubins, {kernels} kernels: {}",
        rows.len(),
        if failing == 0 {
            "every contract held".to_string()
        } else {
            format!("contracts failed in {failing} of them")
        }
    );
    s
}

/// One kernel in the CLI's JSON: the figures a script needs, without the SASS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSummary {
    /// Demangled name (the symbol for `extern "C"` kernels).
    pub kernel: String,
    pub mangled: String,
    pub arch: String,
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_bytes: u32,
    pub smem_bytes: u32,
    pub barriers: Option<u32>,
    pub max_threads_per_block: Option<u32>,
    /// Key classes (`LDGSTS`, `HMMA`, `HGMMA`, `LDL`, `STL`, ...) summed over widths, zeros included.
    pub opcode_classes: BTreeMap<String, u32>,
    /// Every class with its width (`LDG.128`).
    pub opcode_histogram: BTreeMap<String, u32>,
    pub occupancy: Vec<Occupancy>,
    pub callees: Vec<String>,
    pub callee_spills: Vec<crate::model::CalleeSpill>,
    pub flags: Vec<String>,
}

impl KernelSummary {
    pub fn of(k: &KernelReport) -> KernelSummary {
        KernelSummary {
            kernel: k.demangled.clone(),
            mangled: k.mangled.clone(),
            arch: k.arch.sm_name(),
            registers: k.registers.value,
            spill_stores: k.spill_stores,
            spill_loads: k.spill_loads,
            stack_bytes: k.stack_bytes.value,
            smem_bytes: k.smem_bytes.value,
            barriers: k.barriers,
            max_threads_per_block: k.max_threads_per_block,
            opcode_classes: key_class_counts(&k.opcode_classes),
            opcode_histogram: k.opcode_classes.clone(),
            occupancy: k.occupancy.clone(),
            callees: k.callees.clone(),
            callee_spills: k.callee_spills.clone(),
            flags: k.flags.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::model::ParamSlot;

    fn kernel() -> KernelReport {
        KernelReport {
            mangled: "_ZN2ns1kIiEEvPi".into(),
            demangled: "void ns::k<int>(int*)".into(),
            arch: Arch::new(90),
            registers: Sourced {
                value: 24,
                source: Source::Ptxas,
                other: None,
            },
            barriers: Some(1),
            smem_bytes: Sourced {
                value: 2048,
                source: Source::Ptxas,
                other: Some((Source::ResUsage, 3072)),
            },
            stack_bytes: Sourced {
                value: 0,
                source: Source::Ptxas,
                other: None,
            },
            spill_stores: 0,
            spill_loads: 0,
            cumulative_stack_bytes: None,
            cmem_bytes: BTreeMap::new(),
            max_registers_override: None,
            max_threads_per_block: Some(128),
            callees: vec![],
            callee_spills: vec![],
            flags: vec![],
            opcode_classes: [("LDGSTS.128".to_string(), 1), ("IMAD".to_string(), 4)].into(),
            params: vec![ParamSlot {
                ordinal: 0,
                offset: 0,
                size: 8,
            }],
            occupancy: vec![Occupancy {
                block_size: 128,
                dynamic_smem_bytes: 0,
                blocks_per_sm: 16,
                warps_per_sm: 64,
                occupancy_pct: 100,
                limiter: Limiter::Threads,
            }],
            sass: String::new(),
        }
    }

    #[test]
    fn resources_text_shows_both_sources_and_occupancy() {
        let t = kernel_resources_text(&kernel());
        assert!(
            t.contains("kernel: void ns::k<int>(int*)\nsymbol: _ZN2ns1kIiEEvPi\n"),
            "{t}"
        );
        assert!(
            t.contains("static shared memory bytes: 2048 (ptxas; cuobjdump -res-usage: 3072)"),
            "{t}"
        );
        assert!(
            t.contains("  128: 16 blocks, 64 warps, 100%, threads\n"),
            "{t}"
        );
        assert!(t.contains("params: #0 at 0 (8 B)"), "{t}");
        assert!(t.ends_with("flags: none\n"), "{t}");
    }

    #[test]
    fn summary_lists_key_classes_with_zeros() {
        let s = KernelSummary::of(&kernel());
        for k in ["LDGSTS", "HMMA", "HGMMA", "LDL", "STL"] {
            assert!(s.opcode_classes.contains_key(k), "{k}");
        }
        assert_eq!(
            (s.opcode_classes["LDGSTS"], s.opcode_classes["HGMMA"]),
            (1, 0)
        );
        assert_eq!(key_classes_cell(&s.opcode_histogram), "LDGSTS.128:1");
    }

    fn reports_of(cubins: Vec<KernelReport>) -> ReportsFile {
        ReportsFile {
            toolkit: "13.0.88".into(),
            toolkit_major_minor: "13.0".into(),
            files: vec![crate::schema::FileEntry {
                name: "t".into(),
                source_digest: String::new(),
                cubins: cubins
                    .into_iter()
                    .map(|k| crate::schema::CubinEntry {
                        sha256: String::new(),
                        report: crate::model::CubinReport {
                            arch: k.arch,
                            warnings: vec![],
                            kernels: vec![k],
                        },
                    })
                    .collect(),
            }],
        }
    }

    const MANIFEST: &str = r#"
[kernels."_ZN2ns1kIiEEvPi"]
file = "t.cu"
[kernels."_ZN2ns1kIiEEvPi".contract]
max_registers = 32
spills = false
"#;

    #[test]
    fn summary_has_one_line_per_cubin_and_says_which_contracts_broke() {
        let mut greedy = kernel();
        greedy.arch = Arch::new(80);
        greedy.registers.value = 40;
        greedy.spill_stores = 8;
        greedy.spill_loads = 12;
        greedy.occupancy[0].occupancy_pct = 25;
        greedy.occupancy[0].blocks_per_sm = 4;
        let r = reports_of(vec![greedy, kernel()]);
        let m = Manifest::parse(MANIFEST, "kernels.toml").unwrap();
        let text = build_summary(&r, &m);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "title, header, 2 cubins, total:\n{text}");
        let cells = |l: &str| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            cells(lines[1]),
            [
                "kernel file",
                "arch",
                "kernels",
                "max regs",
                "spill B",
                "worst occupancy",
                "contracts"
            ]
        );
        assert_eq!(
            cells(lines[2]),
            ["t.cu", "sm_80", "1", "40", "20", "25% (4 blk)", "2 broken"]
        );
        assert_eq!(
            cells(lines[3]),
            ["t.cu", "sm_90", "1", "24", "0", "100% (16 blk)", "held"]
        );
        assert_eq!(
            lines[4],
            "2 cubins, 2 kernels: contracts failed in 1 of them"
        );
        assert!(lines.iter().all(|l| l.len() <= 100), "{text}");
    }

    #[test]
    fn tally_tells_exceptions_warnings_and_unlisted_kernels_apart() {
        let mut greedy = kernel();
        greedy.registers.value = 40;
        let excepted = format!("{MANIFEST}[kernels.\"_ZN2ns1kIiEEvPi\".contract.exception]\nallow = [\"max_registers\"]\nreason = \"reviewed\"\n");
        let m = Manifest::parse(&excepted, "k.toml").unwrap();
        let t = ContractTally::of(std::slice::from_ref(&greedy), &m);
        assert_eq!(
            (t.excepted, t.held(), t.cell()),
            (1, true, "held (1 excepted)".to_string())
        );
        let warn = MANIFEST.replace("spills = false", "spills = false\nlevel = \"warn\"");
        let m = Manifest::parse(&warn, "k.toml").unwrap();
        let t = ContractTally::of(std::slice::from_ref(&greedy), &m);
        assert_eq!(
            (t.warned, t.held(), t.cell()),
            (1, false, "1 warned".to_string())
        );
        let t = ContractTally::of(&[greedy], &Manifest::default());
        assert_eq!(t.cell(), "1 unlisted");
        let all_held = build_summary(
            &reports_of(vec![kernel()]),
            &Manifest::parse(MANIFEST, "k.toml").unwrap(),
        );
        assert!(
            all_held.ends_with("1 cubins, 1 kernels: every contract held\n"),
            "{all_held}"
        );
    }

    #[test]
    fn markdown_escapes_template_names() {
        let r = ReportsFile {
            toolkit: "13.0.88".into(),
            toolkit_major_minor: "13.0".into(),
            files: vec![crate::schema::FileEntry {
                name: "t".into(),
                source_digest: String::new(),
                cubins: vec![crate::schema::CubinEntry {
                    sha256: String::new(),
                    report: crate::model::CubinReport {
                        arch: Arch::new(90),
                        warnings: vec![],
                        kernels: vec![kernel()],
                    },
                }],
            }],
        };
        let md = markdown_table(&r);
        assert!(md.contains("| void ns::k&lt;int&gt;(int*) | t.cu | sm_90 | 24 | 0/0 | 0 | 2048 | 128: 16 blk, 100% (threads) | LDGSTS.128:1 | - |"), "{md}");
    }
}
