//! Shared by the GPU test binaries (`tests/gpu_*.rs`). These tests are `#[ignore]`d so that
//! `cargo test` on a machine without a GPU lists them as ignored; the GPU bundle runs them with
//! `--include-ignored`, and without a GPU they fail rather than pass.
#![allow(dead_code)]

use cubins::runtime::{Gpu, RoutePolicy};
use cust::context::CurrentContext;
use cust::error::CudaResult;
use cust::memory::{DeviceBuffer, DeviceCopy};

/// The reason every GPU test carries in its `#[ignore]`.
pub const NEEDS_GPU: &str =
    "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)";

/// A `Gpu` on device 0 with automatic routes, or a panic that says why there is none.
pub fn gpu() -> Gpu {
    gpu_with(RoutePolicy::Auto)
}

pub fn gpu_with(policy: RoutePolicy) -> Gpu {
    match Gpu::with_policy(0, policy) {
        Ok(g) => g,
        Err(e) => panic!("this GPU test needs a CUDA device and found none: {e}"),
    }
}

/// The driver's CUDA version (12030 = 12.3), read from the driver itself rather than through
/// the runtime's answers the tests check.
pub fn driver_version() -> i32 {
    let mut version = 0;
    // SAFETY: an out-pointer to one int.
    let status = unsafe { cust::sys::cuDriverGetVersion(&mut version) };
    assert_eq!(status, cust::sys::CUresult::CUDA_SUCCESS);
    version
}

/// The driver version from which programmatic dependent launches exist (`cuLaunchKernelEx`,
/// CUDA 12.3).
pub const PROGRAMMATIC_DRIVER: i32 = 12030;

/// `values` in a new device buffer, the copy complete before it returns. A synchronous copy
/// from pageable memory returns once its bytes are staged, possibly before they reach the
/// device, and the non-blocking streams ops launch on (`Gpu::stream`) do not wait for the
/// legacy stream it ran on: without the context synchronize a kernel could read them early.
pub fn uploaded<T: DeviceCopy>(values: &[T]) -> CudaResult<DeviceBuffer<T>> {
    let buf = DeviceBuffer::from_slice(values)?;
    CurrentContext::synchronize()?;
    Ok(buf)
}

// Binaries that also include tests/common hold a second, private copy (see common/data.rs).
#[allow(clippy::duplicate_mod)]
#[path = "../../benches/harness/host/splitmix.rs"]
mod splitmix;
use splitmix::SplitMix64;

/// Deterministic pseudo-random bytes (splitmix64), so a failure reproduces.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    out.truncate(len);
    out
}

/// The byte outputs are filled with before a kernel runs; a slot the kernel failed to write
/// still holds it (random inputs contain it too, so comparisons are against the input, never
/// against "not poison").
pub const POISON: u8 = 0xA5;

/// Deterministic values in [-1, 1) from `seed` (bf16 holds them with no NaN or infinity).
pub fn values(len: usize, seed: u64) -> Vec<f32> {
    random_bytes(len * 4, seed)
        .chunks_exact(4)
        .map(|c| (u32::from_le_bytes(c.try_into().unwrap()) >> 8) as f32 / (1 << 23) as f32 - 1.0)
        .collect()
}

/// The first index where `got` differs from `want`, with both bytes, for a readable failure.
pub fn first_difference(got: &[u8], want: &[u8]) -> Option<(usize, u8, u8)> {
    if got.len() != want.len() {
        return Some((got.len().min(want.len()), 0, 0));
    }
    got.iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .map(|i| (i, got[i], want[i]))
}
