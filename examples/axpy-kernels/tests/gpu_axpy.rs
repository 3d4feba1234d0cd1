//! The example's kernel on a GPU, launched through cubins' runtime from this crate's own
//! library: parity against a float64 reference at tail and odd sizes, the route's STAMP line,
//! and wrong sizes or alignment refused before anything reaches the GPU. `#[ignore]`d (no
//! GPU in CI); the GPU bundle runs it with `--include-ignored`, where it fails without one.
#![cfg(feature = "cust")]

use axpy_kernels::{axpy, kernels};
use cubins::cust::memory::{CopyDestination, DeviceBuffer};
use cubins::runtime::{Error, Gpu, LaunchError, RoutePolicy};

const NEEDS_GPU: &str =
    "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)";

fn gpu() -> Gpu {
    Gpu::with_policy(0, RoutePolicy::Auto)
        .unwrap_or_else(|e| panic!("this GPU test needs a CUDA device and found none: {e}"))
}

/// Deterministic values in [-1, 1) (splitmix64), so a failure reproduces.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn axpy_matches_the_f64_reference_at_every_size() {
    let _ = NEEDS_GPU;
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let a = 0.75f32;
    for n in [1usize, 3, 4, 5, 1021, 4096, (1 << 20) + 3] {
        let (x, y) = (values(n, 1 + n as u64), values(n, 2 + n as u64));
        let dx = DeviceBuffer::from_slice(&x).unwrap();
        let mut dy = DeviceBuffer::from_slice(&y).unwrap();
        let route = axpy(&gpu, &stream, a, &dx, &mut dy).unwrap();
        stream.synchronize().unwrap();
        if n == 1 {
            println!("{}", route.stamp());
            assert_eq!(route.kernel, "axpy_f32");
            assert!(
                !route.is_fallback(),
                "an H200 runs the sm_90 cubin: {route}"
            );
        }
        let mut got = vec![f32::NAN; n];
        dy.copy_to(&mut got).unwrap();
        for i in 0..n {
            // One rounding of the exact a*x+y: what fmaf gives, to within an ulp of the f64.
            let want = (f64::from(a) * f64::from(x[i]) + f64::from(y[i])) as f32;
            assert!(
                (got[i] - want).abs() <= f32::EPSILON * want.abs().max(1e-3),
                "n={n} i={i}: got {} want {want}",
                got[i]
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn wrong_sizes_and_alignment_are_errors_before_the_launch() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let dx = DeviceBuffer::from_slice(&values(64, 3)).unwrap();
    let mut short = DeviceBuffer::from_slice(&values(60, 4)).unwrap();
    let e = axpy(&gpu, &stream, 1.0, &dx, &mut short).unwrap_err();
    assert!(
        matches!(e, Error::Launch(LaunchError::LengthMismatch { .. })),
        "{e}"
    );
    let dy = DeviceBuffer::from_slice(&values(65, 5)).unwrap();
    let mut tail = dy.index(1..);
    let e = axpy(&gpu, &stream, 1.0, &dx, &mut tail).unwrap_err();
    assert!(
        matches!(e, Error::Launch(LaunchError::Misaligned { param: "y", .. })),
        "{e}"
    );
    // The library is this crate's, not cubins'.
    assert_eq!(kernels::LIBRARY.crate_name, "axpy-kernels");
}
