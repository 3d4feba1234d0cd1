//! This crate's kernels against their reviewed snapshots (`snapshots/`), one test per arch:
//! `cargo insta review` after a kernel change.

cubins_build::snapshot_tests!();
