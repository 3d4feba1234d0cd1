//! Snapshot tests of every kernel x arch of this build, one test per supported arch: the
//! resource + occupancy report and the normalized SASS, under
//! `snapshots/<toolkit major.minor>/<kernel>@<arch>.{resources,sass}.snap`, through the same
//! public helper a crate building its own kernels uses.
//!
//! An unreviewed change fails. Review with `cargo insta review`; regenerate everything with
//! `cargo insta test --accept -p cubins --test snapshots` (or, without cargo-insta,
//! `INSTA_UPDATE=always cargo test -p cubins --test snapshots`). See docs/inspection.md.

cubins_build::snapshot_tests!();
