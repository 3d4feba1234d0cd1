//! Shared by the GEMM tests: the host model of the kernels' schedule, CTA emulators built on
//! it, and the references and digests the GPU gates compare against.
#![allow(dead_code)]

pub mod emulate;
pub mod fingerprint;
pub mod model;
/// The crate's GEMM planner, compiled into the test from its source so that the host tests
/// run with or without the `cust` feature (the `ops` module needs it).
#[path = "../../src/ops/gemm/plan.rs"]
pub mod plan;
pub mod reference;
