//! Property tests: no parser (nor `analyze_cubin`) panics, on arbitrary text or on real
//! tool output that has been cut, spliced or corrupted. Bounded (256 cases per property)
//! so that CI time stays flat.

mod common;

use common::*;
use cubins_inspect::analyze::analyze_cubin;
use cubins_inspect::arch::Arch;
use cubins_inspect::manifest::Manifest;
use cubins_inspect::model::CubinOutputs;
use cubins_inspect::parse;
use proptest::prelude::*;
use std::sync::OnceLock;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Every captured output, loaded once: (label, arch, outputs).
fn corpus() -> &'static Vec<(String, Arch, CubinOutputs)> {
    static C: OnceLock<Vec<(String, Arch, CubinOutputs)>> = OnceLock::new();
    C.get_or_init(|| {
        all_fixtures()
            .into_iter()
            .map(|(l, a)| (l.to_string(), a, fixture_outputs(l, &a.sm_name())))
            .collect()
    })
}

fn parse_all(text: &str) {
    let _ = parse::ptxas::parse(text);
    let _ = parse::res_usage::parse(text);
    let _ = parse::sass::parse(text);
    let _ = parse::elf::parse(text);
}

/// Lines that look like tool output, to steer arbitrary input into the parsers' branches.
fn tool_like_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "ptxas (info|warning|error|fatal)    : [ -~]{0,60}",
        "ptxas info    : Used [0-9]{1,12} registers(, used [0-9]{1,3} barriers)?(, [0-9]{1,12} bytes (smem|cmem\\[[0-9]{1,3}\\]))?",
        "ptxas info    : (Compiling entry function '[a-z_]{1,8}' for 'sm_[0-9]{2}a?'|Function properties for [a-z_]{1,8})",
        "    [0-9]{1,12} bytes stack frame, [0-9]{1,12} bytes spill stores, [0-9]{1,12} bytes spill loads",
        " (Function [a-z_$]{1,8}:|Common:|Resource usage:)",
        "  ([A-Z]{1,8}(\\[[0-9]{1,3}\\])?:[0-9]{0,12} ?){1,6}",
        "\t\tFunction : [A-Za-z_$0-9]{1,12}",
        "        /\\*[0-9a-f]{1,9}\\*/ +(@!?P[0-9T] )?[A-Z]{1,7}(\\.[A-Z0-9]{1,4}){0,3} [ -:<-~]{0,30} ;( +/\\* 0x[0-9a-f]{16} \\*/)?",
        "Index Offset   Size ES Align +Type +Flags Link +Info Name",
        " +[0-9a-f]{1,3} +[0-9a-f]{1,5} +[0-9a-f]{1,5} +[0-9a-f]{1,2} +[0-9a-f]{1,2} +[A-Z_]{1,10} +[0-9a-f]{1,3} +[0-9a-f]{1,2} +[0-9a-f]{1,2} \\.[a-z.]{1,20}",
        "\\.(nv\\.info\\.[a-z]{1,4}|section \\.symtab)",
        "\t<0x[0-9a-f]{1,2}>",
        "\t(Attribute|Format|Value):\t[ -~]{0,40}",
        "\tValue:\tIndex : 0x[0-9a-f]{1,9}\tOrdinal : 0x[0-9a-f]{1,9}\tOffset  : 0x[0-9a-f]{1,9}\tSize    : 0x[0-9a-f]{1,9}",
        " +(0x[0-9a-f]{1,17}|[0-9]{1,3}) +(0x[0-9a-f]{1,17}|0) +(0x[0-9a-f]{1,17}|0) +0x[0-9a-f]{1,9} +0x[0-9a-f]{1,9} +0x[0-9a-f]{1,9} +\\$?[a-z_$]{1,12}",
        "[ -~]{0,80}",
        "\\PC{0,40}",
    ]
}

/// A mutation of a real output.
#[derive(Debug, Clone)]
enum Mutation {
    /// Keep the first n bytes (rounded down to a char boundary).
    Truncate(usize),
    DropLine(usize),
    DuplicateLine(usize),
    /// Replace one digit by another character.
    CorruptDigit(usize, char),
    InsertLine(usize, String),
    /// Move a line elsewhere (out-of-order records).
    MoveLine(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (
            any::<usize>(),
            prop_oneof![Just('x'), Just('9'), Just('-'), Just(' '), Just('\u{e9}')]
        )
            .prop_map(|(i, c)| Mutation::CorruptDigit(i, c)),
        (any::<usize>(), tool_like_line()).prop_map(|(i, l)| Mutation::InsertLine(i, l)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::MoveLine(a, b)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match m {
        Mutation::Truncate(at) => {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            return text[..at].to_string();
        }
        Mutation::DropLine(i) if !lines.is_empty() => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) if !lines.is_empty() => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::CorruptDigit(i, c) => {
            let digits: Vec<usize> = text
                .char_indices()
                .filter(|(_, ch)| ch.is_ascii_digit())
                .map(|(p, _)| p)
                .collect();
            if let Some(&p) = digits.get(i % digits.len().max(1)) {
                let mut s = text.to_string();
                s.replace_range(p..p + 1, &c.to_string());
                return s;
            }
        }
        Mutation::InsertLine(i, l) => lines.insert(i % (lines.len() + 1), l.clone()),
        Mutation::MoveLine(a, b) if !lines.is_empty() => {
            let l = lines.remove(a % n);
            lines.insert(b % (lines.len() + 1), l);
        }
        _ => {}
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics(lines in proptest::collection::vec(tool_like_line(), 0..40)) {
        parse_all(&lines.join("\n"));
    }

    #[test]
    fn arbitrary_bytes_never_panic(s in "\\PC{0,400}") {
        parse_all(&s);
    }

    #[test]
    fn mutated_real_outputs_never_panic(pick in any::<usize>(), tool in 0usize..4, muts in proptest::collection::vec(mutation(), 1..4)) {
        let (label, arch, outputs) = &corpus()[pick % corpus().len()];
        let mut o = outputs.clone();
        let field = match tool {
            0 => &mut o.ptxas_log,
            1 => &mut o.res_usage,
            2 => &mut o.sass,
            _ => &mut o.elf,
        };
        for m in &muts {
            *field = apply(field, m);
        }
        parse_all(field);
        // Analysis of a corrupted cubin's outputs errors or reports; it never panics.
        let r = analyze_cubin(*arch, &o, &Manifest::default());
        if let Ok(report) = r {
            prop_assert!(report.kernels.iter().all(|k| k.arch == *arch), "{label}");
        }
    }
}

#[test]
fn mutations_do_what_they_say_and_start_from_valid_outputs() {
    let t = "a1\nb2\nc3";
    assert_eq!(apply(t, &Mutation::Truncate(4)), "a1\nb");
    assert_eq!(apply(t, &Mutation::DropLine(1)), "a1\nc3");
    assert_eq!(apply(t, &Mutation::DuplicateLine(0)), "a1\na1\nb2\nc3");
    assert_eq!(apply(t, &Mutation::CorruptDigit(2, 'x')), "a1\nb2\ncx");
    assert_eq!(apply(t, &Mutation::MoveLine(0, 2)), "b2\nc3\na1");
    assert_eq!(
        apply(t, &Mutation::InsertLine(1, "z".into())),
        "a1\nz\nb2\nc3"
    );
    for (label, arch, o) in corpus() {
        assert!(
            analyze_cubin(*arch, o, &Manifest::default()).is_ok(),
            "{label}.{arch}"
        );
    }
}
