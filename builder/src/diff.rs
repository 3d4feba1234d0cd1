//! Differences between two builds' reports, per kernel x arch: registers, spills, stack,
//! shared memory, occupancy at each block size, and opcode-class counts.

use crate::model::KernelReport;
use crate::schema::ReportsFile;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Where one kernel x arch stands between the two reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
    /// Present in both; the lines that differ (empty: unchanged).
    Changed(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelDelta {
    pub file: String,
    pub kernel: String,
    pub arch: String,
    pub change: Change,
}

type Key = (String, String, String);

fn index(r: &ReportsFile) -> BTreeMap<Key, &KernelReport> {
    let mut m = BTreeMap::new();
    for f in &r.files {
        for c in &f.cubins {
            for k in &c.report.kernels {
                m.insert((f.name.clone(), k.demangled.clone(), k.arch.sm_name()), k);
            }
        }
    }
    m
}

fn delta(a: u32, b: u32) -> String {
    let d = i64::from(b) - i64::from(a);
    format!("{a} -> {b} ({d:+})")
}

fn compare(a: &KernelReport, b: &KernelReport) -> Vec<String> {
    let mut lines = Vec::new();
    let mut num = |what: &str, x: u32, y: u32| {
        if x != y {
            lines.push(format!("{what}: {}", delta(x, y)));
        }
    };
    num("registers", a.registers.value, b.registers.value);
    num("spill stores (bytes)", a.spill_stores, b.spill_stores);
    num("spill loads (bytes)", a.spill_loads, b.spill_loads);
    num(
        "callee spill bytes",
        a.callee_spill_bytes(),
        b.callee_spill_bytes(),
    );
    num(
        "stack frame (bytes)",
        a.stack_bytes.value,
        b.stack_bytes.value,
    );
    num(
        "static shared memory (bytes)",
        a.smem_bytes.value,
        b.smem_bytes.value,
    );
    let occ = |k: &KernelReport| -> BTreeMap<(u32, u32), u32> {
        k.occupancy
            .iter()
            .map(|o| ((o.block_size, o.dynamic_smem_bytes), o.blocks_per_sm))
            .collect()
    };
    let (oa, ob) = (occ(a), occ(b));
    for shape in oa.keys().chain(ob.keys()).collect::<BTreeSet<_>>() {
        let label = format!(
            "blocks per SM at {} threads{}",
            shape.0,
            if shape.1 > 0 {
                format!(" + {} B dynamic smem", shape.1)
            } else {
                String::new()
            }
        );
        match (oa.get(shape), ob.get(shape)) {
            (Some(x), Some(y)) if x != y => lines.push(format!("{label}: {}", delta(*x, *y))),
            (Some(x), None) => lines.push(format!("{label}: {x} -> (not reported)")),
            (None, Some(y)) => lines.push(format!("{label}: (not reported) -> {y}")),
            _ => {}
        }
    }
    let classes: BTreeSet<&String> = a
        .opcode_classes
        .keys()
        .chain(b.opcode_classes.keys())
        .collect();
    let changed: Vec<String> = classes
        .into_iter()
        .filter_map(|c| {
            let (x, y) = (
                a.opcode_classes.get(c).copied().unwrap_or(0),
                b.opcode_classes.get(c).copied().unwrap_or(0),
            );
            (x != y).then(|| format!("{c} {}", delta(x, y)))
        })
        .collect();
    if !changed.is_empty() {
        lines.push(format!("opcode classes: {}", changed.join(", ")));
    }
    if a.flags != b.flags {
        lines.push(format!("flags: {:?} -> {:?}", a.flags, b.flags));
    }
    lines
}

/// Every kernel x arch of either report, in (file, kernel, arch) order.
pub fn diff(a: &ReportsFile, b: &ReportsFile) -> Vec<KernelDelta> {
    let (ia, ib) = (index(a), index(b));
    let keys: BTreeSet<&Key> = ia.keys().chain(ib.keys()).collect();
    keys.into_iter()
        .map(|key| {
            let change = match (ia.get(key), ib.get(key)) {
                (Some(x), Some(y)) => Change::Changed(compare(x, y)),
                (None, Some(_)) => Change::Added,
                _ => Change::Removed,
            };
            KernelDelta {
                file: key.0.clone(),
                kernel: key.1.clone(),
                arch: key.2.clone(),
                change,
            }
        })
        .collect()
}

/// The deltas as text: changed, added and removed kernels, then a count of unchanged ones.
pub fn render(
    a_label: &str,
    b_label: &str,
    a: &ReportsFile,
    deltas: &[KernelDelta],
    b: &ReportsFile,
) -> String {
    let mut s = format!(
        "diff {a_label} (CUDA {}) -> {b_label} (CUDA {})\n",
        a.toolkit, b.toolkit
    );
    let mut unchanged = 0;
    for d in deltas {
        let head = format!("{} ({}.cu) {}", d.kernel, d.file, d.arch);
        match &d.change {
            Change::Added => {
                let _ = writeln!(s, "\n+ {head}: added");
            }
            Change::Removed => {
                let _ = writeln!(s, "\n- {head}: removed");
            }
            Change::Changed(lines) if lines.is_empty() => unchanged += 1,
            Change::Changed(lines) => {
                let _ = writeln!(s, "\n~ {head}");
                for l in lines {
                    let _ = writeln!(s, "    {l}");
                }
            }
        }
    }
    let _ = writeln!(s, "\n{unchanged} kernel x arch unchanged");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::model::{CubinReport, Limiter, Occupancy, Source, Sourced};
    use crate::schema::{CubinEntry, FileEntry};

    fn k(name: &str, regs: u32, ldgsts: u32, blocks: u32) -> KernelReport {
        let s = |v| Sourced {
            value: v,
            source: Source::Ptxas,
            other: None,
        };
        KernelReport {
            mangled: name.into(),
            demangled: name.into(),
            arch: Arch::new(90),
            registers: s(regs),
            barriers: None,
            smem_bytes: s(0),
            stack_bytes: s(0),
            spill_stores: 0,
            spill_loads: 0,
            cumulative_stack_bytes: None,
            cmem_bytes: Default::default(),
            max_registers_override: None,
            max_threads_per_block: None,
            callees: vec![],
            callee_spills: vec![],
            flags: vec![],
            opcode_classes: [("LDGSTS.128".to_string(), ldgsts)]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .collect(),
            params: vec![],
            occupancy: vec![Occupancy {
                block_size: 256,
                dynamic_smem_bytes: 0,
                blocks_per_sm: blocks,
                warps_per_sm: blocks * 8,
                occupancy_pct: blocks * 100 / 8,
                limiter: Limiter::Registers,
            }],
            sass: String::new(),
        }
    }

    fn reports(kernels: Vec<KernelReport>) -> ReportsFile {
        ReportsFile {
            toolkit: "13.0.88".into(),
            toolkit_major_minor: "13.0".into(),
            files: vec![FileEntry {
                name: "f".into(),
                source_digest: String::new(),
                cubins: vec![CubinEntry {
                    sha256: String::new(),
                    report: CubinReport {
                        arch: Arch::new(90),
                        warnings: vec![],
                        kernels,
                    },
                }],
            }],
        }
    }

    #[test]
    fn deltas_per_kernel() {
        let a = reports(vec![
            k("x", 32, 2, 8),
            k("gone", 10, 0, 8),
            k("same", 10, 0, 8),
        ]);
        let b = reports(vec![
            k("x", 40, 0, 6),
            k("new", 10, 0, 8),
            k("same", 10, 0, 8),
        ]);
        let d = diff(&a, &b);
        let by = |n: &str| d.iter().find(|x| x.kernel == n).unwrap().change.clone();
        assert_eq!(by("gone"), Change::Removed);
        assert_eq!(by("new"), Change::Added);
        assert_eq!(by("same"), Change::Changed(vec![]));
        let Change::Changed(lines) = by("x") else {
            panic!()
        };
        assert_eq!(
            lines,
            vec![
                "registers: 32 -> 40 (+8)".to_string(),
                "blocks per SM at 256 threads: 8 -> 6 (-2)".to_string(),
                "opcode classes: LDGSTS.128 2 -> 0 (-2)".to_string(),
            ]
        );
        let text = render("A", "B", &a, &d, &b);
        assert!(
            text.contains("~ x (f.cu) sm_90\n    registers: 32 -> 40 (+8)"),
            "{text}"
        );
        assert!(
            text.contains("+ new (f.cu) sm_90: added")
                && text.contains("- gone (f.cu) sm_90: removed"),
            "{text}"
        );
        assert!(text.ends_with("1 kernel x arch unchanged\n"), "{text}");
    }
}
