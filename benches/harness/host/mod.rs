//! The host-side half of the harness: statistics, the paired-window protocol, rotation
//! plans, STAMP lines, readings, tables, plots, evidence folders, baseline artifacts and
//! torch's readings.
//! Nothing here touches a GPU, so `cargo test` checks all of it on any machine
//! (`tests/bench_harness.rs` includes this module).

pub mod artifacts;
pub mod cli;
pub mod compare;
pub mod evidence;
pub mod gemm;
pub mod plot;
pub mod random;
pub mod reading;
pub mod rotation;
pub mod runs;
pub mod schedule;
pub mod splitmix;
pub mod stamp;
pub mod stats;
pub mod table;
pub mod torch;

#[cfg(test)]
mod fixtures;
