//! Rendering reports: one kernel's resources and occupancy as text (what snapshots hold),
//! the kernels x arches markdown table, and the per-kernel JSON summary of the CLI.

use crate::build_script::ReportsFile;
use crate::model::{KernelReport, Limiter, Occupancy, Source, Sourced};
use crate::sass::{class_matches, key_class_counts, KEY_CLASSES};
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
                let callee: u32 = k
                    .callee_spills
                    .iter()
                    .map(|c| c.spill_stores + c.spill_loads)
                    .sum();
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

    #[test]
    fn markdown_escapes_template_names() {
        let r = ReportsFile {
            toolkit: "13.0.88".into(),
            toolkit_major_minor: "13.0".into(),
            files: vec![crate::build_script::FileEntry {
                name: "t".into(),
                source_digest: String::new(),
                cubins: vec![crate::build_script::CubinEntry {
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
