//! Fuzzing as property tests: every parser gets real tool output (the captures under
//! `fixtures/tool-output/`, the repository's `cuda/kernels.toml` and kernel sources) cut,
//! spliced, shuffled and corrupted, plus arbitrary text, and must return a value or an error,
//! never panic. Parsers: the ptxas log, `cuobjdump -res-usage`, `-sass` (and its
//! normalization), `-elf` (`.nv.info`), the manifest (parsed and validated), nvcc's depfiles,
//! kernel declarations (source and demangled), and the cubin header check.
//!
//! Bounded: `CUBINS_FUZZ_CASES` inputs per target (default 512), so the file runs in seconds
//! in CI; raise it for a longer local run. Each target prints how many inputs it tried (see
//! them with `-- --nocapture`); a panic fails the test with the input that caused it.

mod common;

use common::*;
use cubins_build::analyze::{analyze_cubin, KernelNames};
use cubins_build::arch::Arch;
use cubins_build::compile::check_cubin;
use cubins_build::contract;
use cubins_build::launcher::{self, signature};
use cubins_build::manifest::Manifest;
use cubins_build::model::{CubinOutputs, CubinReport};
use cubins_build::parse;
use cubins_build::schema::{CubinEntry, FileEntry, ReportsFile};
use cubins_build::shapes::LaunchShapes;
use cubins_build::toolchain::nvcc::parse_depfile;
use cubins_build::{diff, report, sass};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use std::cell::Cell;
use std::sync::OnceLock;

fn cases() -> u32 {
    std::env::var("CUBINS_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `check` on `cases()` inputs from `strategy`; prints how many it tried and how many
/// were accepted (`check` returns whether the parser gave a value, for the every-parser
/// targets whether any did); fails on a panic.
fn fuzz<S: Strategy>(target: &str, strategy: S, check: impl Fn(S::Value) -> bool) {
    let tried = Cell::new(0u64);
    let accepted = Cell::new(0u64);
    let mut runner = TestRunner::new(config());
    let result = runner.run(&strategy, |v| {
        tried.set(tried.get() + 1);
        if check(v) {
            accepted.set(accepted.get() + 1);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("fuzz {target}: {e}");
    }
    println!(
        "fuzz {target}: {} inputs ({} accepted), 0 panics",
        tried.get(),
        accepted.get()
    );
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

/// Seeds for one tool: that tool's output of every fixture.
fn seeds(pick: fn(&CubinOutputs) -> &str) -> Vec<Vec<u8>> {
    corpus()
        .iter()
        .map(|(_, _, o)| pick(o).as_bytes().to_vec())
        .collect()
}

/// The reports of every fixture, for the manifest target's validation.
fn fixture_reports() -> &'static Vec<(String, CubinReport)> {
    static R: OnceLock<Vec<(String, CubinReport)>> = OnceLock::new();
    R.get_or_init(|| {
        corpus()
            .iter()
            .map(|(l, a, o)| {
                let r = analyze_cubin(*a, o, &LaunchShapes::default()).unwrap();
                (l.split('.').next().unwrap_or(l).to_string(), r)
            })
            .collect()
    })
}

/// Feeds `text` to every text parser; whether any accepted it.
fn parse_all(text: &str) -> bool {
    let ok = [
        parse::ptxas::parse(text).is_ok(),
        parse::res_usage::parse(text).is_ok(),
        parse::sass::parse(text).is_ok(),
        parse::elf::parse(text).is_ok(),
        Manifest::parse(text, "fuzz.toml").is_ok(),
    ];
    let _ = parse_depfile(text);
    let _ = signature::declarations(text);
    ok.contains(&true)
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
        "\\[kernels\\.[a-z_\"]{1,10}(\\.contract|\\.arch\\.sm_[0-9]{2,3}a?)?\\]",
        "(max_registers|block_sizes|dynamic_smem_bytes|min_blocks_per_sm|params|file) = [ -~]{0,30}",
        "[a-z./ ]{1,20}(: | :)?([a-z./]{1,10}( \\\\)?)?",
        "(extern \"C\" )?__(global__|attribute__\\(\\(global\\)\\)) [ -~]{0,60}",
        "[ -~]{0,80}",
        "\\PC{0,40}",
    ]
}

/// A mutation of a real output.
#[derive(Debug, Clone)]
enum Mutation {
    /// Keep the first n bytes.
    Truncate(usize),
    /// XOR one byte with a non-zero mask.
    FlipByte(usize, u8),
    /// Insert arbitrary bytes.
    InsertBytes(usize, Vec<u8>),
    DropLine(usize),
    DuplicateLine(usize),
    /// Replace one digit by another character.
    CorruptDigit(usize, char),
    InsertLine(usize, String),
    /// Move a line elsewhere (out-of-order records).
    MoveLine(usize, usize),
    /// Shuffle up to 8 lines starting at one (records interleaved).
    ShuffleLines(usize, u64),
    /// Replace one decimal number by another (the text stays well-formed; the figure may
    /// overflow what a field holds).
    ReplaceNumber(usize, u64),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1u8..=255).prop_map(|(i, m)| Mutation::FlipByte(i, m)),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(i, b)| Mutation::InsertBytes(i, b)),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (
            any::<usize>(),
            prop_oneof![Just('x'), Just('9'), Just('-'), Just(' '), Just('\u{e9}')]
        )
            .prop_map(|(i, c)| Mutation::CorruptDigit(i, c)),
        (any::<usize>(), tool_like_line()).prop_map(|(i, l)| Mutation::InsertLine(i, l)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::MoveLine(a, b)),
        (any::<usize>(), any::<u64>()).prop_map(|(a, s)| Mutation::ShuffleLines(a, s)),
        (
            any::<usize>(),
            prop_oneof![
                0u64..2,
                0u64..70_000,
                Just(u64::from(u32::MAX)),
                any::<u64>()
            ]
        )
            .prop_map(|(i, v)| Mutation::ReplaceNumber(i, v)),
    ]
}

fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect()
}

fn apply(bytes: &[u8], m: &Mutation) -> Vec<u8> {
    let mut lines = lines_of(bytes);
    let n = lines.len().max(1);
    match m {
        Mutation::Truncate(at) => return bytes[..at % (bytes.len() + 1)].to_vec(),
        Mutation::FlipByte(i, mask) if !bytes.is_empty() => {
            let mut b = bytes.to_vec();
            b[i % bytes.len()] ^= mask;
            return b;
        }
        Mutation::InsertBytes(i, ins) => {
            let mut b = bytes.to_vec();
            let at = i % (b.len() + 1);
            b.splice(at..at, ins.iter().copied());
            return b;
        }
        Mutation::CorruptDigit(i, c) => {
            let digits: Vec<usize> = bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_ascii_digit())
                .map(|(p, _)| p)
                .collect();
            if let Some(&p) = digits.get(i % digits.len().max(1)) {
                let mut b = bytes.to_vec();
                let mut buf = [0u8; 4];
                b.splice(p..p + 1, c.encode_utf8(&mut buf).bytes());
                return b;
            }
        }
        Mutation::ReplaceNumber(i, v) => {
            let numbers = number_spans(bytes);
            if let Some(&(start, end)) = numbers.get(i % numbers.len().max(1)) {
                let mut b = bytes.to_vec();
                b.splice(start..end, v.to_string().bytes());
                return b;
            }
        }
        Mutation::DropLine(i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::InsertLine(i, l) => lines.insert(i % (lines.len() + 1), l.as_bytes().to_vec()),
        Mutation::MoveLine(a, b) => {
            let l = lines.remove(a % n);
            lines.insert(b % (lines.len() + 1), l);
        }
        Mutation::ShuffleLines(start, seed) => {
            let start = start % n;
            let end = (start + 8).min(lines.len());
            let mut s = *seed;
            for i in (start + 1..end).rev() {
                // A small LCG: enough to permute a window, reproducible from the seed.
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let j = start + (s >> 33) as usize % (i - start + 1);
                lines.swap(i, j);
            }
        }
        _ => {}
    }
    lines.join(&b'\n')
}

/// Byte ranges of the runs of decimal digits in `bytes`.
fn number_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, b) in bytes.iter().chain(std::iter::once(&b' ')).enumerate() {
        match (b.is_ascii_digit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    spans
}

/// A seed, then 1 to 4 mutations applied in order.
fn mutated(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    assert!(!seeds.is_empty());
    (0..seeds.len(), proptest::collection::vec(mutation(), 1..5))
        .prop_map(move |(i, muts)| muts.iter().fold(seeds[i].clone(), |b, m| apply(&b, m)))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn fuzz_ptxas_log() {
    let mut s = seeds(|o| &o.ptxas_log);
    s.push(std::fs::read(tool_output_dir("ptxas_fatal", "sm_90").join(PTXAS_LOG)).unwrap());
    fuzz("ptxas log", mutated(s), |b| {
        parse::ptxas::parse(&text(&b)).is_ok()
    });
}

#[test]
fn fuzz_res_usage() {
    fuzz("res-usage", mutated(seeds(|o| &o.res_usage)), |b| {
        parse::res_usage::parse(&text(&b)).is_ok()
    });
}

#[test]
fn fuzz_sass_and_its_normalization() {
    fuzz("SASS", mutated(seeds(|o| &o.sass)), |b| {
        let Ok(listing) = parse::sass::parse(&text(&b)) else {
            return false;
        };
        for f in &listing.functions {
            let _ = sass::normalize(f, &f.name);
            let _ = sass::call_targets(f);
        }
        let _ = sass::histogram(listing.functions.iter());
        true
    });
}

#[test]
fn fuzz_elf_dump_and_nv_info() {
    fuzz(".nv.info / ELF", mutated(seeds(|o| &o.elf)), |b| {
        let Ok(dump) = parse::elf::parse(&text(&b)) else {
            return false;
        };
        let _ = dump.entries().count();
        for k in dump.kernels.values() {
            let _ = k.max_threads_per_block();
        }
        true
    });
}

/// Seeds for the manifest: the real one (families, defaults, arch groups, sets) whole and
/// family by family, the plain manifest it replaced (`tests/fixtures/kernels.v1.toml`) whole
/// and entry by entry (each with its tables), one of the format's less common features, and
/// one naming the fixtures' kernels, so that validation meets the fixture reports.
fn manifest_seeds() -> Vec<Vec<u8>> {
    let real = std::fs::read_to_string(workspace_root().join("cuda").join("kernels.toml")).unwrap();
    let v1 =
        std::fs::read_to_string(workspace_root().join("tests/fixtures/kernels.v1.toml")).unwrap();
    let mut seeds = vec![real.clone().into_bytes(), v1.clone().into_bytes()];
    seeds.extend(chunks(&v1, |l| {
        l.starts_with("[kernels.") && !l.contains(".contract]") && !l.contains(".arch.")
    }));
    // Each family or entry after the tables it uses ([arch_groups], [defaults], [sets]).
    let first = |l: &str| l.starts_with("[kernels.") || l.starts_with("[families.");
    let preamble_end = real.lines().position(first).unwrap_or(0);
    let preamble: String = real
        .lines()
        .take(preamble_end)
        .map(|l| format!("{l}\n"))
        .collect();
    let rest: String = real
        .lines()
        .skip(preamble_end)
        .map(|l| format!("{l}\n"))
        .collect();
    let entry_start = |l: &str| first(l) && l.matches('.').count() == 1;
    for chunk in chunks(&rest, entry_start) {
        seeds.push([preamble.as_bytes(), &chunk].concat());
    }
    seeds.push(MANIFEST_FEATURES.as_bytes().to_vec());
    let mut fixtures = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for (file, r) in fixture_reports() {
        for k in &r.kernels {
            let key = format!("{:?}", KernelNames::of(&k.mangled).short);
            if !seen.insert(key.clone()) {
                continue;
            }
            fixtures.push_str(&format!(
                "[kernels.{key}]\nfile = \"{file}.cu\"\nblock_sizes = [64, 256, 1024]\n\
                 dynamic_smem_bytes = 1024\n[kernels.{key}.contract]\nmax_registers = 64\n\
                 min_blocks_per_sm = {{ block_size = 256, blocks = 2 }}\n\
                 [kernels.{key}.arch.sm_80]\nmax_registers = 32\ndynamic_smem_bytes = 2048\n"
            ));
        }
    }
    seeds.push(fixtures.into_bytes());
    seeds
}

/// `text` cut before every line `starts` holds for.
fn chunks(text: &str, starts: impl Fn(&str) -> bool) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut chunk = String::new();
    for line in text.lines() {
        if starts(line) && !chunk.is_empty() {
            out.push(std::mem::take(&mut chunk).into_bytes());
        }
        chunk.push_str(line);
        chunk.push('\n');
    }
    out.push(chunk.into_bytes());
    out
}

/// The manifest format's features the real manifest does not use.
const MANIFEST_FEATURES: &str = r#"
[arch_groups]
hopper = ["sm_90", "sm_90a"]
[defaults]
block_sizes = [128]
arch.hopper.max_registers = 128
[sets]
base = [{ name = "a", n = 1, t = { k = "x" } }, "b"]
all = ["@base", 3]
tail = ["n: u32"]
more = ["@tail", "m: u64"]
[families.f]
name = "f_{v}_{w}"
axes = { v = "@all", w = [{ name = "p", s = "{v}!" }, { name = "q", s = "{{lit}}" }] }
exclude = [{ v = 3, w = "q" }]
file = "f.cu"
params = ["x: *const u8", "@more"]
arch.sm_90.exception = { allow = ["spills"], reason = "{w.s}" }
when = [{ match = { v = { t = { k = "x" } } }, dynamic_smem_bytes = "{v.n}" }, { match = { w = ["p"] }, arch.hopper.spills = true }]
"#;

/// Template syntax to put where the manifest has some: placeholders good and bad, set
/// references, arch group keys, stray braces.
const TEMPLATE_TOKENS: &[&str] = &[
    "{dtype}",
    "{dtype.ty}",
    "{tile}",
    "{tile.threads}",
    "{tile.nope}",
    "{op.params}",
    "{nope}",
    "{",
    "}",
    "{{",
    "}}",
    "{}",
    "{a b}",
    "{tile..x}",
    "@gemm_params",
    "@dtypes",
    "@nope",
    "@",
    "arch.small_sm",
    "arch.blackwell",
    "arch.nope",
    "arch.sm_99",
    "arch.sm_90a",
];

/// `seeds` with some of their template syntax replaced by other (`TEMPLATE_TOKENS`).
fn template_mutated(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let spans = regex::Regex::new(r"\{[\w.]*\}|@[\w-]+|arch\.\w+").unwrap();
    let subs = proptest::collection::vec((any::<usize>(), 0..TEMPLATE_TOKENS.len()), 1..6);
    (0..seeds.len(), subs).prop_map(move |(i, subs)| {
        subs.iter().fold(seeds[i].clone(), |b, (at, token)| {
            let t = text(&b);
            let found: Vec<_> = spans.find_iter(&t).collect();
            match found.get(at % found.len().max(1)) {
                Some(m) => format!(
                    "{}{}{}",
                    &t[..m.start()],
                    TEMPLATE_TOKENS[*token],
                    &t[m.end()..]
                )
                .into_bytes(),
                None => b,
            }
        })
    })
}

fn check_manifest(b: &[u8]) -> bool {
    static REPORTS: OnceLock<Vec<(String, &'static CubinReport)>> = OnceLock::new();
    let reports = REPORTS.get_or_init(|| {
        fixture_reports()
            .iter()
            .map(|(f, r)| (f.clone(), r))
            .collect()
    });
    let Ok(m) = Manifest::parse(&text(b), "kernels.toml") else {
        return false;
    };
    let _ = contract::check_all(&m, reports);
    let _ = launcher::generate(&m, reports);
    true
}

#[test]
fn fuzz_manifest_parse_and_validation() {
    assert!(
        check_manifest(MANIFEST_FEATURES.as_bytes()),
        "the features seed parses"
    );
    let mut seeds = manifest_seeds();
    // The plain manifest's arch tables for other entries trail its end: that chunk stands alone.
    seeds.retain(|s| check_manifest(s));
    assert!(seeds.len() > 50, "{} seeds parse", seeds.len());
    fuzz("manifest", mutated(seeds.clone()), |b| check_manifest(&b));
    fuzz("manifest templates", template_mutated(seeds.clone()), |b| {
        check_manifest(&b)
    });
    // Figures only: the TOML stays well-formed, so validation meets every kind of number.
    let figures = (
        0..seeds.len(),
        proptest::collection::vec((any::<usize>(), any::<u64>()), 1..6),
    )
        .prop_map(move |(i, subs)| {
            subs.iter().fold(seeds[i].clone(), |b, (at, v)| {
                apply(&b, &Mutation::ReplaceNumber(*at, v % 300_000))
            })
        });
    fuzz("manifest figures", figures, |b| check_manifest(&b));
}

/// The fixture reports as a build's `reports.json`.
fn reports_json() -> ReportsFile {
    ReportsFile {
        toolkit: "13.0.88".into(),
        toolkit_major_minor: "13.0".into(),
        files: fixture_reports()
            .iter()
            .map(|(name, r)| FileEntry {
                name: name.clone(),
                source_digest: String::new(),
                cubins: vec![CubinEntry {
                    sha256: String::new(),
                    report: r.clone(),
                }],
            })
            .collect(),
    }
}

#[test]
fn fuzz_reports_json_and_what_reads_it() {
    // `report --build` and `diff` read these files; a hand-edited one may hold anything.
    let base = reports_json();
    let seed = serde_json::to_vec_pretty(&base).unwrap();
    fuzz("reports JSON", mutated(vec![seed]), |b| {
        let Ok(r) = serde_json::from_slice::<ReportsFile>(&b) else {
            return false;
        };
        let _ = report::markdown_table(&r);
        for k in r
            .files
            .iter()
            .flat_map(|f| &f.cubins)
            .flat_map(|c| &c.report.kernels)
        {
            let _ = report::kernel_resources_text(k);
        }
        let deltas = diff::diff(&base, &r);
        let _ = diff::render("a", "b", &base, &deltas, &r);
        true
    });
}

#[test]
fn fuzz_depfile() {
    let s: Vec<Vec<u8>> = fixture_depfiles()
        .into_iter()
        .map(|(_, t)| t.into_bytes())
        .collect();
    // A depfile parser has no errors: it keeps what reads as paths.
    fuzz("depfile", mutated(s), |b| {
        !parse_depfile(&text(&b)).is_empty()
    });
}

#[test]
fn fuzz_kernel_declarations() {
    let mut s = Vec::new();
    for dir in [workspace_root().join("cuda"), fixtures().join("kernels")] {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "cu") {
                s.push(std::fs::read(e.path()).unwrap());
            }
        }
    }
    // The preprocessor's spelling, as the build reads it.
    s.push(
        b"# 1 \"copy.cu\"\nextern \"C\" __attribute__((global)) void __attribute__((launch_bounds(256))) \
          copy_vec16(const uint4* __restrict__ src, uint4* __restrict__ dst, uint64_t n_vec) { }\n"
            .to_vec(),
    );
    fuzz("kernel declarations", mutated(s), |b| {
        !signature::declarations(&text(&b)).is_empty()
    });
}

#[test]
fn fuzz_demangled_signatures() {
    // C++ entry points of the fixtures: (demangled name, name without return type and parameters).
    let names: Vec<(String, String)> = fixture_reports()
        .iter()
        .flat_map(|(_, r)| &r.kernels)
        .filter(|k| k.mangled.starts_with("_Z"))
        .map(|k| (k.demangled.clone(), KernelNames::of(&k.mangled).short))
        .collect();
    assert!(!names.is_empty(), "the fixtures have C++ kernels");
    let strategy = (0..names.len(), proptest::collection::vec(mutation(), 1..5));
    fuzz("demangled signatures", strategy, |(i, muts)| {
        let (demangled, short) = &names[i];
        let b = muts
            .iter()
            .fold(demangled.as_bytes().to_vec(), |b, m| apply(&b, m));
        signature::demangled_params(&text(&b), short).is_some()
    });
}

/// A minimal cubin-shaped ELF (header, one 16-byte section, the section header table): the
/// fixtures hold tool outputs, not cubins.
fn tiny_cubin() -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(b"\x7fELF");
    b[4] = 2;
    b[5] = 1;
    b[18..20].copy_from_slice(&190u16.to_le_bytes());
    b.extend_from_slice(&[0xab; 16]);
    let shoff = b.len() as u64;
    b[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    b[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    b[0x3c..0x3e].copy_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&[0u8; 64]);
    let mut sh = [0u8; 64];
    sh[4..8].copy_from_slice(&1u32.to_le_bytes());
    sh[0x18..0x20].copy_from_slice(&64u64.to_le_bytes());
    sh[0x20..0x28].copy_from_slice(&16u64.to_le_bytes());
    b.extend_from_slice(&sh);
    b
}

#[test]
fn fuzz_cubin_header_check() {
    assert_eq!(check_cubin(&tiny_cubin()), Ok(()));
    fuzz("cubin header", mutated(vec![tiny_cubin()]), |b| {
        check_cubin(&b).is_ok()
    });
}

#[test]
fn fuzz_arbitrary_text_into_every_parser() {
    fuzz(
        "tool-like lines, every parser",
        proptest::collection::vec(tool_like_line(), 0..40),
        |lines| parse_all(&lines.join("\n")),
    );
    fuzz("arbitrary text, every parser", "\\PC{0,400}", |s| {
        parse_all(&s)
    });
}

#[test]
fn fuzz_analysis_of_mutated_outputs() {
    let strategy = (
        0..corpus().len(),
        0usize..4,
        proptest::collection::vec(mutation(), 1..4),
    );
    let tried = Cell::new(0u64);
    let mut runner = TestRunner::new(config());
    let result = runner.run(&strategy, |(pick, tool, muts)| {
        tried.set(tried.get() + 1);
        let (label, arch, outputs) = &corpus()[pick];
        let mut o = outputs.clone();
        let field = match tool {
            0 => &mut o.ptxas_log,
            1 => &mut o.res_usage,
            2 => &mut o.sass,
            _ => &mut o.elf,
        };
        *field = text(
            &muts
                .iter()
                .fold(field.as_bytes().to_vec(), |b, m| apply(&b, m)),
        );
        let _ = parse_all(field);
        // Analysis of a corrupted cubin's outputs errors or reports; it never panics.
        if let Ok(report) = analyze_cubin(*arch, &o, &LaunchShapes::default()) {
            if report.kernels.iter().any(|k| k.arch != *arch) {
                return Err(TestCaseError::fail(format!(
                    "{label}: a kernel of another arch"
                )));
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("fuzz analysis: {e}");
    }
    println!(
        "fuzz analysis of mutated outputs: {} inputs, 0 panics",
        tried.get()
    );
}

/// Found by the fuzzing above: a figure of `u32::MAX` (a spill count, say) overflowed a sum
/// in the analysis. Every number of every fixture's ptxas log, one at a time, at the top of
/// its range: analysis, contracts and the report table take it without a panic.
#[test]
fn the_largest_figures_overflow_nothing() {
    let manifest = Manifest::load(&workspace_root().join("cuda").join("kernels.toml")).unwrap();
    let mut analyzed = 0;
    for (label, arch, o) in corpus() {
        let log = o.ptxas_log.as_bytes();
        for i in 0..number_spans(log).len() {
            let mut m = o.clone();
            m.ptxas_log = text(&apply(
                log,
                &Mutation::ReplaceNumber(i, u64::from(u32::MAX)),
            ));
            let Ok(r) = analyze_cubin(*arch, &m, &LaunchShapes::of(&manifest)) else {
                continue;
            };
            analyzed += 1;
            let _ = contract::check_all(&manifest, &[(label.clone(), &r)]);
            let mut file = reports_json();
            file.files.truncate(1);
            file.files[0].cubins[0].report = r;
            let _ = report::markdown_table(&file);
            let _ = diff::diff(&reports_json(), &file);
        }
    }
    assert!(analyzed > 100, "{analyzed} analyzed");
}

#[test]
fn mutations_do_what_they_say_and_start_from_valid_outputs() {
    let t = b"a1\nb2\nc3";
    let s = |m: Mutation| text(&apply(t, &m));
    assert_eq!(s(Mutation::Truncate(4)), "a1\nb");
    assert_eq!(s(Mutation::FlipByte(0, 0x20)), "A1\nb2\nc3");
    assert_eq!(s(Mutation::InsertBytes(2, b"!!".to_vec())), "a1!!\nb2\nc3");
    assert_eq!(s(Mutation::DropLine(1)), "a1\nc3");
    assert_eq!(s(Mutation::DuplicateLine(0)), "a1\na1\nb2\nc3");
    assert_eq!(s(Mutation::CorruptDigit(2, 'x')), "a1\nb2\ncx");
    assert_eq!(s(Mutation::MoveLine(0, 2)), "b2\nc3\na1");
    assert_eq!(s(Mutation::InsertLine(1, "z".into())), "a1\nz\nb2\nc3");
    assert_eq!(s(Mutation::ReplaceNumber(1, 4096)), "a1\nb4096\nc3");
    let shuffled = s(Mutation::ShuffleLines(0, 7));
    let mut sorted: Vec<&str> = shuffled.lines().collect();
    sorted.sort();
    assert_eq!(sorted, ["a1", "b2", "c3"]);
    for (label, arch, o) in corpus() {
        assert!(
            analyze_cubin(*arch, o, &LaunchShapes::default()).is_ok(),
            "{label}.{arch}"
        );
    }
    for (label, d) in fixture_depfiles() {
        assert!(parse_depfile(&d).len() > 10, "{label}: {d}");
    }
    let m = Manifest::load(&workspace_root().join("cuda").join("kernels.toml")).unwrap();
    assert!(m.kernels.len() > 50);
}
