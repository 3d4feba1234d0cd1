//! Normalized SASS and the opcode-class histogram.
//!
//! Normalization makes the listing of a function stable across rebuilds and readable in a
//! diff: addresses and encodings are dropped, `NOP` (alignment padding) is dropped, and
//! branch targets (`BRA`, `BSSY`, `CALL.REL`, ...) are relabeled `.L0`, `.L1`, ... in order
//! of first reference, with a `.Ln:` line before the target instruction.
//!
//! Opcode classes (what contracts name in `require` / `forbid`):
//! - global, shared, local and generic loads and stores, and `LDGSTS` (cp.async), carry
//!   their access width in bits: `LDG.128`, `LDG.32`, `STG.64`, `LDS.16`, `STS.32`, `LDL.32`,
//!   `STL.64`, `LD.32`, `ST.128`, `LDGSTS.128` (no width modifier means 32 bits; `.U8` and
//!   `.S8` are 8, `.U16` and `.S16` are 16);
//! - every other instruction is classed by its opcode without modifiers: `HMMA`, `HGMMA`,
//!   `IMMA`, `FFMA`, `BAR`, `SHFL`, `LDSM` (ldmatrix), `ATOMG`, `LDC`, `EXIT`, ...
//!
//! A pattern matches a class when it is equal to it or a prefix of it up to a `.`, so a
//! pattern without a width (`LDG`) matches every width, and `LDG.128` matches only itself.

use crate::parse::sass::{address_operand, Instruction, SassFunction};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Opcodes whose class carries the access width.
const WIDTH_CLASSED: &[&str] = &[
    "LDG", "STG", "LDS", "STS", "LDL", "STL", "LD", "ST", "LDGSTS",
];

/// Opcodes whose last address operand is a code address within the function.
const BRANCHES: &[&str] = &[
    "BRA", "BSSY", "CALL", "JMP", "SSY", "PBK", "PCNT", "CAL", "JCAL", "BREAK",
];

/// Classes every report lists, with a zero count when absent (what reviewers and contracts
/// look for first).
pub const KEY_CLASSES: &[&str] = &[
    "LDG", "STG", "LDS", "STS", "LDL", "STL", "LDGSTS", "LDSM", "HMMA", "HGMMA", "IMMA", "FFMA",
    "BAR", "SHFL",
];

/// The access width in bits from an opcode's modifiers (32 when none says otherwise).
fn access_width(opcode: &str) -> u32 {
    for m in opcode.split('.').skip(1) {
        match m {
            "8" | "U8" | "S8" => return 8,
            "16" | "U16" | "S16" => return 16,
            "32" => return 32,
            "64" => return 64,
            "128" => return 128,
            _ => {}
        }
    }
    32
}

/// The class of one instruction (see the module docs).
pub fn opcode_class(inst: &Instruction) -> String {
    let base = inst.base_opcode();
    if WIDTH_CLASSED.contains(&base) {
        format!("{base}.{}", access_width(&inst.opcode))
    } else {
        base.to_string()
    }
}

/// Whether contract pattern `pattern` (`LDG`, `LDG.128`) names class `class`.
pub fn class_matches(pattern: &str, class: &str) -> bool {
    class == pattern
        || class
            .strip_prefix(pattern)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Total count of the classes `pattern` matches.
pub fn count_matching(histogram: &BTreeMap<String, u32>, pattern: &str) -> u32 {
    histogram
        .iter()
        .filter(|(c, _)| class_matches(pattern, c))
        .map(|(_, n)| *n)
        .sum()
}

/// Counts for [`KEY_CLASSES`], zeros included.
pub fn key_class_counts(histogram: &BTreeMap<String, u32>) -> BTreeMap<String, u32> {
    KEY_CLASSES
        .iter()
        .map(|k| (k.to_string(), count_matching(histogram, k)))
        .collect()
}

/// Opcode-class histogram over the given functions' instructions (`NOP` not counted).
pub fn histogram<'a>(
    functions: impl IntoIterator<Item = &'a SassFunction>,
) -> BTreeMap<String, u32> {
    let mut h = BTreeMap::new();
    for f in functions {
        for i in f.instructions.iter().filter(|i| i.base_opcode() != "NOP") {
            *h.entry(opcode_class(i)).or_insert(0) += 1;
        }
    }
    h
}

/// The code address a branch-like instruction targets, if it names one.
pub fn branch_target(inst: &Instruction) -> Option<u32> {
    if !BRANCHES.contains(&inst.base_opcode()) {
        return None;
    }
    inst.operands.rsplit(',').find_map(address_operand)
}

/// `CALL.REL` / `CALL.ABS` targets: code addresses, or symbol names (`` `(name) ``).
pub fn call_targets(f: &SassFunction) -> (BTreeSet<u32>, BTreeSet<String>) {
    let mut addrs = BTreeSet::new();
    let mut names = BTreeSet::new();
    for i in f.instructions.iter().filter(|i| i.base_opcode() == "CALL") {
        if let Some(a) = branch_target(i) {
            addrs.insert(a);
        } else if let Some(name) = i
            .operands
            .split('`')
            .nth(1)
            .and_then(|s| s.strip_prefix('('))
            .and_then(|s| s.split(')').next())
        {
            names.insert(name.to_string());
        }
    }
    (addrs, names)
}

/// The normalized listing of one function (see the module docs).
pub fn normalize(f: &SassFunction, display_name: &str) -> String {
    let kept: Vec<&Instruction> = f
        .instructions
        .iter()
        .filter(|i| i.base_opcode() != "NOP")
        .collect();
    // Labels in order of first reference.
    let mut labels: BTreeMap<u32, usize> = BTreeMap::new();
    for i in &kept {
        if let Some(t) = branch_target(i) {
            let next = labels.len();
            labels.entry(t).or_insert(next);
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "{display_name}:");
    // A target that was a dropped NOP labels the next kept instruction (or the end).
    let mut pending: Vec<usize> = Vec::new();
    let mut label_iter = labels.iter().map(|(a, l)| (*a, *l)).collect::<Vec<_>>();
    label_iter.sort();
    let mut li = 0;
    for inst in &kept {
        while li < label_iter.len() && label_iter[li].0 <= inst.address {
            pending.push(label_iter[li].1);
            li += 1;
        }
        pending.sort();
        for l in pending.drain(..) {
            let _ = writeln!(out, ".L{l}:");
        }
        let _ = writeln!(out, "    {}", render(inst, &labels));
    }
    let mut rest: Vec<usize> = label_iter[li..].iter().map(|(_, l)| *l).collect();
    rest.sort();
    for l in rest {
        let _ = writeln!(out, ".L{l}:");
    }
    out
}

fn render(inst: &Instruction, labels: &BTreeMap<u32, usize>) -> String {
    let mut s = String::new();
    if let Some(p) = &inst.predicate {
        s.push_str(p);
        s.push(' ');
    }
    s.push_str(&inst.opcode);
    let operands = match branch_target(inst).and_then(|t| labels.get(&t).map(|l| (t, l))) {
        Some((_, label)) => {
            // Replace the last address operand (the target) by its label.
            let mut parts: Vec<String> = inst
                .operands
                .split(',')
                .map(|p| p.trim().to_string())
                .collect();
            if let Some(pos) = parts.iter().rposition(|p| address_operand(p).is_some()) {
                parts[pos] = format!(".L{label}");
            }
            parts.join(", ")
        }
        None => inst.operands.clone(),
    };
    if !operands.is_empty() {
        s.push(' ');
        s.push_str(&operands);
    }
    s.push_str(" ;");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(address: u32, pred: Option<&str>, opcode: &str, operands: &str) -> Instruction {
        Instruction {
            address,
            predicate: pred.map(str::to_string),
            opcode: opcode.into(),
            operands: operands.into(),
        }
    }

    #[test]
    fn classes_with_widths() {
        let cases = [
            ("LDG.E.128.CONSTANT", "LDG.128"),
            ("LDG.E", "LDG.32"),
            ("LDG.E.U8", "LDG.8"),
            ("LDG.E.64", "LDG.64"),
            ("STG.E.128", "STG.128"),
            ("LDS.U.128", "LDS.128"),
            ("LDS.64", "LDS.64"),
            ("STS", "STS.32"),
            ("LDL.LU", "LDL.32"),
            ("STL.64", "STL.64"),
            ("LDGSTS.E.BYPASS.LTC128B.128", "LDGSTS.128"),
            ("LDGSTS.E.LTC128B", "LDGSTS.32"),
            ("HMMA.16816.F32.BF16", "HMMA"),
            ("HGMMA.64x8x16.F32.BF16", "HGMMA"),
            ("LDSM.16.M88.4", "LDSM"),
            ("BAR.SYNC.DEFER_BLOCKING", "BAR"),
            ("SHFL.BFLY", "SHFL"),
            ("FFMA", "FFMA"),
        ];
        for (op, class) in cases {
            assert_eq!(opcode_class(&inst(0, None, op, "")), class, "{op}");
        }
    }

    #[test]
    fn pattern_matching() {
        assert!(class_matches("LDG", "LDG.128"));
        assert!(class_matches("LDG.128", "LDG.128"));
        assert!(!class_matches("LDG.128", "LDG.32"));
        assert!(!class_matches("LDG", "LDGSTS.128"));
        assert!(class_matches("LDGSTS", "LDGSTS.128"));
        assert!(!class_matches("HMMA", "HGMMA"));
        let h: BTreeMap<String, u32> = [
            ("LDG.128".to_string(), 2),
            ("LDG.32".to_string(), 1),
            ("LDGSTS.128".to_string(), 4),
        ]
        .into();
        assert_eq!(count_matching(&h, "LDG"), 3);
        let keys = key_class_counts(&h);
        assert_eq!((keys["LDG"], keys["LDGSTS"], keys["HGMMA"]), (3, 4, 0));
    }

    #[test]
    fn normalization_relabels_and_drops_padding() {
        let f = SassFunction {
            name: "k".into(),
            instructions: vec![
                inst(0x00, None, "BSSY", "B0, 0x40"),
                inst(0x10, Some("@P0"), "BRA", "0x30"),
                inst(0x20, None, "NOP", ""),
                inst(0x30, None, "LDG.E.128", "R4, desc[UR4][R4.64]"),
                inst(0x40, None, "EXIT", ""),
                inst(0x50, None, "BRA", "0x50"),
                inst(0x60, None, "NOP", ""),
            ],
        };
        let n = normalize(&f, "k");
        assert_eq!(
            n,
            "k:\n    BSSY B0, .L0 ;\n    @P0 BRA .L1 ;\n.L1:\n    LDG.E.128 R4, desc[UR4][R4.64] ;\n.L0:\n    EXIT ;\n.L2:\n    BRA .L2 ;\n"
        );
        // Shifting every address (as an unrelated code change before the function would) changes nothing.
        let shifted = SassFunction {
            name: "k".into(),
            instructions: f
                .instructions
                .iter()
                .map(|i| {
                    let ops = match branch_target(i) {
                        Some(t) => i
                            .operands
                            .replace(&format!("{t:#x}"), &format!("{:#x}", t + 0x100)),
                        None => i.operands.clone(),
                    };
                    Instruction {
                        address: i.address + 0x100,
                        operands: ops,
                        ..i.clone()
                    }
                })
                .collect(),
        };
        assert_eq!(normalize(&shifted, "k"), n);
        assert_eq!(histogram([&f]).get("NOP"), None);
        assert_eq!(histogram([&f]).get("LDG.128"), Some(&1));
    }

    #[test]
    fn calls() {
        let f = SassFunction {
            name: "k".into(),
            instructions: vec![
                inst(0, None, "CALL.REL.NOINC", "0xe0"),
                inst(0x10, None, "CALL.ABS.NOINC", "`(_Z6helperv)"),
            ],
        };
        let (addrs, names) = call_targets(&f);
        assert_eq!(addrs.into_iter().collect::<Vec<_>>(), vec![0xe0]);
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            vec!["_Z6helperv".to_string()]
        );
    }
}
