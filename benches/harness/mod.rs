//! The benchmark harness the bench targets share (`mod harness;` in each). `host` is pure
//! logic, unit-tested without a GPU (`tests/bench_harness.rs`); `gpu` times on the device.
//! See docs/benchmarking.md.

// Each bench target uses part of the shared harness; and when cargo checks bench targets
// with cfg(test), the harness-less targets drop the `#[test]` fns, leaving their imports unused.
#![allow(dead_code)]
#![cfg_attr(test, allow(unused_imports))]

pub mod gpu;
pub mod host;
