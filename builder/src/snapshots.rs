//! Snapshot review of a crate's kernels with insta: the resource + occupancy report and
//! the normalized SASS of every kernel x arch its build compiled, one snapshot each under
//! `<crate>/snapshots/<toolkit major.minor>/<kernel>@<arch>.{resources,sass}.snap`. A crate
//! that builds its kernels through [`crate::Build`] calls [`crate::snapshot_tests!`] in a test
//! file; `cargo insta review` then reviews its kernels as it does cubins'.
//!
//! An unreviewed change fails; a kernel x arch without a snapshot fails once with the
//! pending `.snap.new` written for review; a snapshot no kernel produces any more fails,
//! named. An arch the build did not select is reported as not checked, loudly.

use crate::report::kernel_resources_text;
use crate::schema::ReportsFile;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// One snapshot test per supported arch, for a crate whose build script runs
/// [`crate::Build`]: `cubins_build::snapshot_tests!();` in `tests/snapshots.rs`.
#[macro_export]
macro_rules! snapshot_tests {
    () => {
        $crate::snapshot_tests! {
            sm_80_reports_and_sass_match_snapshots: "sm_80",
            sm_86_reports_and_sass_match_snapshots: "sm_86",
            sm_89_reports_and_sass_match_snapshots: "sm_89",
            sm_90_reports_and_sass_match_snapshots: "sm_90",
            sm_90a_reports_and_sass_match_snapshots: "sm_90a",
            sm_100_reports_and_sass_match_snapshots: "sm_100",
            sm_120_reports_and_sass_match_snapshots: "sm_120",
        }
    };
    ($($test:ident: $arch:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                $crate::snapshots::check_arch(
                    &$crate::snapshots::Crate {
                        name: env!("CARGO_PKG_NAME"),
                        dir: env!("CARGO_MANIFEST_DIR"),
                        reports_json: concat!(env!("OUT_DIR"), "/reports.json"),
                    },
                    $arch,
                );
            }
        )*
    };
}

/// The crate whose kernels are checked: what the test's `env!`s say.
#[derive(Debug, Clone, Copy)]
pub struct Crate {
    /// `CARGO_PKG_NAME`, for the commands the messages name.
    pub name: &'static str,
    /// `CARGO_MANIFEST_DIR`: snapshots live in its `snapshots/`.
    pub dir: &'static str,
    /// The build's `OUT_DIR/reports.json`.
    pub reports_json: &'static str,
}

/// One snapshot: its name (the file stem) and contents.
pub struct Case {
    pub name: String,
    pub arch: String,
    pub contents: String,
}

pub fn cases(reports: &ReportsFile) -> Vec<Case> {
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

/// Every kernel x `arch` of the build of `krate` against its snapshots; panics with what
/// changed, what is new and what is stale.
pub fn check_arch(krate: &Crate, arch: &str) {
    let reports_json = Path::new(krate.reports_json);
    let without = reports_json.with_file_name(crate::builder::WITHOUT_KERNELS);
    if let Ok(reason) = std::fs::read_to_string(&without) {
        eprintln!("\n!!! SKIPPED: snapshot tests need the kernels, and this build has none ({reason}) !!!\n");
        return;
    }
    let text = std::fs::read_to_string(reports_json).unwrap_or_else(|e| {
        panic!(
            "reading the build's reports {}: {e} (does the build script run cubins_build::Build?)",
            reports_json.display()
        )
    });
    let reports: ReportsFile = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not a reports file: {e}", reports_json.display()));
    let regenerate = format!("cargo insta test --accept -p {}", krate.name);
    let dir: PathBuf = Path::new(krate.dir)
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
             or regenerate and accept in one step with `{regenerate}`.\n",
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
             `cargo insta review` or `{regenerate}`:\n  {}\n",
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_macro_has_a_test_for_every_supported_arch() {
        let text = include_str!("snapshots.rs");
        let start = text.find("macro_rules! snapshot_tests").unwrap();
        let arm = &text[start..text[start..].find("};").unwrap() + start];
        for a in crate::arch::SUPPORTED {
            let name = a.sm_name();
            assert!(
                arm.contains(&format!(
                    "{name}_reports_and_sass_match_snapshots: \"{name}\""
                )),
                "{name}"
            );
        }
    }
}
