//! Runs the unit tests of the bench harness's host-side modules (statistics, ABBA
//! schedule, separation, rotation, STAMP, tables, plots, evidence manifests) without a GPU.

#[allow(dead_code)]
#[path = "../benches/harness/host/mod.rs"]
mod host;
