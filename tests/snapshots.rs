//! Snapshot tests of every kernel x arch of this build, one test per supported arch: the
//! resource + occupancy report and the normalized SASS, under
//! `snapshots/<toolkit major.minor>/<kernel>@<arch>.{resources,sass}.snap`.
//!
//! An unreviewed change fails. Review with `cargo insta review`; regenerate everything with
//! `cargo insta test --accept -p cubins --test snapshots` (or, without cargo-insta,
//! `INSTA_UPDATE=always cargo test -p cubins --test snapshots`). See docs/inspection.md.

use cubins_inspect::build_script::ReportsFile;
use cubins_inspect::report::kernel_resources_text;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const REGENERATE: &str = "cargo insta test --accept -p cubins --test snapshots";

/// One snapshot: its name (the file stem) and contents.
struct Case {
    name: String,
    arch: String,
    contents: String,
}

fn cases(reports: &ReportsFile) -> Vec<Case> {
    let mut out = Vec::new();
    for f in &reports.files {
        for c in &f.cubins {
            for k in &c.report.kernels {
                // Symbols are file-name safe; demangled C++ names are not.
                let stem = format!("{}@{}", k.mangled, k.arch);
                let arch = k.arch.sm_name();
                out.push(Case {
                    name: format!("{stem}.resources"),
                    arch: arch.clone(),
                    contents: kernel_resources_text(k),
                });
                out.push(Case {
                    name: format!("{stem}.sass"),
                    arch,
                    contents: k.sass.clone(),
                });
            }
        }
    }
    out
}

fn existing_snapshots(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".snap"))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn caller_controls_updates() -> bool {
    ["INSTA_UPDATE", "INSTA_FORCE_PASS"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|s| !s.is_empty()))
}

/// One test per supported arch, so a run's log names every arch it checked.
macro_rules! snapshot_tests {
    ($($test:ident: $arch:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_arch($arch);
            }
        )*
        /// The arches the tests above check.
        const TESTED_ARCHES: &[&str] = &[$($arch),*];
    };
}

snapshot_tests! {
    sm_80_reports_and_sass_match_snapshots: "sm_80",
    sm_86_reports_and_sass_match_snapshots: "sm_86",
    sm_89_reports_and_sass_match_snapshots: "sm_89",
    sm_90_reports_and_sass_match_snapshots: "sm_90",
    sm_90a_reports_and_sass_match_snapshots: "sm_90a",
    sm_100_reports_and_sass_match_snapshots: "sm_100",
    sm_120_reports_and_sass_match_snapshots: "sm_120",
}

#[test]
fn every_supported_arch_has_a_snapshot_test() {
    let supported: Vec<String> = cubins_inspect::arch::SUPPORTED
        .iter()
        .map(|a| a.sm_name())
        .collect();
    assert_eq!(TESTED_ARCHES, supported.as_slice());
}

/// Every kernel x `arch` of this build against its snapshots.
fn check_arch(arch: &str) {
    if let Some(reason) = cubins::build_info().without_kernels {
        eprintln!("\n!!! SKIPPED: snapshot tests need the kernels, and this build has none ({reason}) !!!\n");
        return;
    }
    let text = std::fs::read_to_string(cubins::REPORTS_JSON)
        .unwrap_or_else(|e| panic!("reading the build's reports {}: {e}", cubins::REPORTS_JSON));
    let reports: ReportsFile =
        serde_json::from_str(&text).expect("reports.json matches cubins_inspect's ReportsFile");
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(&reports.toolkit_major_minor);
    let cases: Vec<Case> = cases(&reports)
        .into_iter()
        .filter(|c| c.arch == arch)
        .collect();
    if cases.is_empty() {
        eprintln!("\n!!! NOT CHECKED: {arch} is not in this build (`CUBINS_ARCHS=all` builds every arch) !!!\n");
        return;
    }

    let existing = existing_snapshots(&dir);
    let first_for_toolkit = existing.is_empty() && !caller_controls_updates();
    if first_for_toolkit {
        // One message instead of a diff per kernel: store every snapshot as pending, quietly.
        std::env::set_var("INSTA_UPDATE", "new");
        std::env::set_var("INSTA_FORCE_PASS", "1");
        std::env::set_var("INSTA_OUTPUT", "none");
    }

    let mut failed = Vec::new();
    let mut new = Vec::new();
    for case in &cases {
        if !existing.contains(&case.name) {
            new.push(case.name.clone());
        }
        let result = catch_unwind(AssertUnwindSafe(|| {
            insta::with_settings!({
                snapshot_path => dir.clone(),
                prepend_module_to_snapshot => false,
                omit_expression => true,
            }, {
                insta::assert_snapshot!(case.name.as_str(), &case.contents);
            });
        }));
        if result.is_err() {
            failed.push(case.name.clone());
        }
    }

    if first_for_toolkit {
        panic!(
            "\nNo snapshots exist for CUDA {} yet (snapshots/{}/ is empty or missing).\n\
             Wrote {} pending snapshots there (.snap.new) for review: accept them with `cargo insta review`,\n\
             or regenerate and accept in one step with `{REGENERATE}`.\n",
            reports.toolkit,
            reports.toolkit_major_minor,
            cases.len()
        );
    }

    // Snapshots of a built arch that no kernel produced any more.
    let built_archs: BTreeSet<&str> = cases.iter().map(|c| c.arch.as_str()).collect();
    let produced: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let stale: Vec<&String> = existing
        .iter()
        .filter(|n| !produced.contains(n.as_str()))
        .filter(|n| {
            n.split('@')
                .nth(1)
                .and_then(|r| r.split('.').next())
                .is_some_and(|a| built_archs.contains(a))
        })
        .collect();

    let mut msg = String::new();
    let changed: Vec<&String> = failed.iter().filter(|f| !new.contains(f)).collect();
    if !changed.is_empty() {
        msg.push_str(&format!(
            "{} snapshot(s) changed (review with `cargo insta review`):\n  {}\n",
            changed.len(),
            changed
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n  ")
        ));
    }
    let new_failed: Vec<&String> = new.iter().filter(|n| failed.contains(n)).collect();
    if !new_failed.is_empty() {
        msg.push_str(&format!(
            "{} kernel x arch report(s) have no snapshot yet (a new kernel or arch?): accept them with \
             `cargo insta review` or `{REGENERATE}`:\n  {}\n",
            new_failed.len(),
            new_failed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  ")
        ));
    }
    if !stale.is_empty() {
        msg.push_str(&format!(
            "{} snapshot(s) under snapshots/{}/ belong to no kernel of this build (removed or renamed?); delete them:\n  {}\n",
            stale.len(),
            reports.toolkit_major_minor,
            stale.iter().map(|s| format!("{s}.snap")).collect::<Vec<_>>().join("\n  ")
        ));
    }
    assert!(msg.is_empty(), "\n{msg}");
}
