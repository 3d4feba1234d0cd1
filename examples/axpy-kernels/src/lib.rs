//! A crate with CUDA kernels of its own, built, inspected, contract-checked and embedded by
//! `cubins-build`, and launched through cubins' runtime exactly as cubins' own kernels are:
//! the same route selection, STAMP lines and launch checks.
//!
//! - `cuda/axpy.cu`: the kernel; `cuda/kernels.toml`: its launcher and contract.
//! - `build.rs`: `cubins_build::Build::new().compile()`.
//! - [`kernels`]: what the build generated (`cubins::include_kernels!()`).
//! - [`axpy`] (feature `cust` or `cudarc`): a safe launch that checks its buffers first, on
//!   either runtime's buffers and streams.

/// This crate's kernels: `kernels::LIBRARY`, and `kernels::AxpyF32` for `Gpu::kernel`.
pub mod kernels {
    cubins::include_kernels!();
}

#[cfg(any(feature = "cust", feature = "cudarc"))]
pub use launch::axpy;

#[cfg(any(feature = "cust", feature = "cudarc"))]
mod launch {
    use super::kernels::AxpyF32;
    use cubins::runtime::{DeviceRead, DeviceWrite, Error, Gpu, LaunchConfig, Route, StreamHandle};

    /// Threads per block (the contract's `min_blocks_per_sm` is stated for it).
    const BLOCK: u32 = 256;

    /// `y = a * x + y` on `stream`; returns the route it ran on. Lengths that differ, or
    /// buffers not 16-byte aligned (the kernel's vector width), are an `Err` before
    /// anything reaches the GPU.
    pub fn axpy<S: StreamHandle>(
        gpu: &Gpu,
        stream: &S,
        a: f32,
        x: &impl DeviceRead<f32, S>,
        y: &mut impl DeviceWrite<f32, S>,
    ) -> Result<Route, Error> {
        // Held until the launch is queued (cudarc records the accesses when they drop).
        let held = (x.read(stream), y.write(stream));
        let (x, y) = (held.0.view, held.1.view);
        let (xb, yb) = (x.arg("x"), y.arg("y"));
        xb.same_length(&yb)?;
        xb.aligned(16)?;
        yb.aligned(16)?;
        let kernel = gpu.kernel::<AxpyF32>()?;
        let n = x.len as u64;
        let quads = n.div_ceil(4).max(1);
        let blocks = quads
            .div_ceil(BLOCK as u64)
            .min(gpu.device().sm_count as u64 * 8) as u32;
        let config = LaunchConfig::linear(blocks, BLOCK);
        // SAFETY: x and y are device buffers of this context holding n floats each, 16-byte
        // aligned as the kernel's float4 accesses need; `x` is read-only and distinct from
        // `y` (one is borrowed shared, the other exclusively).
        unsafe { kernel.launch(stream, &config, (x.ptr, y.ptr, a, n))? };
        Ok(kernel.route().clone())
    }
}
