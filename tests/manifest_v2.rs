//! `cuda/kernels.toml` (written with defaults, families, arch groups and sets; docs/manifest.md)
//! against the plain manifest it replaced, kept as `tests/fixtures/kernels.v1.toml`: both expand
//! to the same entries exactly, and the rewrite is a fraction of the length.

use cubins_build::manifest::{KernelEntry, Manifest};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const V1: &str = "tests/fixtures/kernels.v1.toml";
const V2: &str = "cuda/kernels.toml";

fn path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The manifest at `relative`, its entries without their provenance (which family made
/// them): what is compared is what each entry says.
fn load(relative: &str) -> Manifest {
    let mut m = Manifest::load(&path(relative)).unwrap_or_else(|e| panic!("{e}"));
    for entry in m.kernels.values_mut() {
        entry.family = None;
    }
    m
}

fn line_count(relative: &str) -> usize {
    std::fs::read_to_string(path(relative))
        .unwrap()
        .lines()
        .count()
}

/// `value` as JSON without its unset fields: what an entry's table says.
fn shown(value: &impl serde::Serialize) -> String {
    let mut v = serde_json::to_value(value).unwrap();
    if let Some(fields) = v.as_object_mut() {
        fields.retain(|_, f| !f.is_null());
    }
    v.to_string()
}

/// The fields of two entries that differ, one `field: v1 / v2` block each.
fn differences(v1: &KernelEntry, v2: &KernelEntry) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |name: String, a: String, b: String| {
        if a != b {
            out.push(format!("  {name}:\n    v1: {a}\n    v2: {b}"));
        }
    };
    field("file".into(), shown(&v1.file), shown(&v2.file));
    field("params".into(), shown(&v1.params), shown(&v2.params));
    field(
        "block_sizes".into(),
        shown(&v1.block_sizes),
        shown(&v2.block_sizes),
    );
    field(
        "dynamic_smem_bytes".into(),
        shown(&v1.dynamic_smem_bytes),
        shown(&v2.dynamic_smem_bytes),
    );
    field("contract".into(), shown(&v1.contract), shown(&v2.contract));
    let archs: BTreeSet<&String> = v1.arch.keys().chain(v2.arch.keys()).collect();
    for a in archs {
        field(
            format!("arch.{a}"),
            shown(&v1.arch.get(a)),
            shown(&v2.arch.get(a)),
        );
    }
    out
}

#[test]
fn kernels_toml_expands_to_the_v1_manifest_exactly() {
    let v1 = load(V1);
    let v2 = load(V2);
    let names: BTreeSet<&String> = v1.kernels.keys().chain(v2.kernels.keys()).collect();
    for name in names {
        match (v1.kernels.get(name), v2.kernels.get(name)) {
            (Some(a), Some(b)) if a != b => {
                panic!("entry `{name}` differs:\n{}", differences(a, b).join("\n"))
            }
            (Some(_), None) => panic!("entry `{name}` is in {V1} but {V2} does not make it"),
            (None, Some(_)) => panic!("{V2} makes entry `{name}`, which {V1} does not have"),
            _ => {}
        }
    }
    assert_eq!(v1.arch_specific, v2.arch_specific);
    assert_eq!(v1, v2);
    println!("{} entries, equal", v2.kernels.len());
}

#[test]
fn kernels_toml_is_at_most_30_percent_of_v1() {
    let before = line_count(V1);
    let after = line_count(V2);
    println!(
        "{V1}: {before} lines; {V2}: {after} lines ({:.1}%)",
        100.0 * after as f64 / before as f64
    );
    assert!(
        after * 10 <= before * 3,
        "{V2} has {after} lines, more than 30% of {V1}'s {before}"
    );
}
