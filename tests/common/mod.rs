//! Shared by the fused-kernel tests (and open to other families): float64 CPU references,
//! storage dtypes, deterministic inputs, tolerances and FNV-1a digests.
#![allow(dead_code)]

pub mod data;
pub mod digest;
pub mod reference;
