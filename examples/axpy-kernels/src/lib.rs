//! A crate with CUDA kernels of its own, built, inspected, contract-checked and embedded by
//! `cubins-build`, and launched through cubins' runtime exactly as cubins' own kernels are:
//! the same route selection, STAMP lines and launch checks.
//!
//! - `cuda/axpy.cu`: the kernel; `cuda/kernels.toml`: its launcher and contract.
//! - `build.rs`: `cubins_build::Build::new().compile()`.
//! - [`kernels`]: what the build generated (`cubins::include_kernels!()`).
//! - [`axpy`] (feature `cust`): a safe launch that checks its buffers first.

/// This crate's kernels: `kernels::LIBRARY`, and `kernels::AxpyF32` for `Gpu::kernel`.
pub mod kernels {
    cubins::include_kernels!();
}

#[cfg(feature = "cust")]
pub use launch::axpy;

#[cfg(feature = "cust")]
mod launch {
    use super::kernels::AxpyF32;
    use cubins::cust::memory::DeviceSlice;
    use cubins::cust::stream::Stream;
    use cubins::ops::buffer;
    use cubins::runtime::{Error, Gpu, LaunchConfig, Route};

    /// Threads per block (the contract's `min_blocks_per_sm` is stated for it).
    const BLOCK: u32 = 256;

    /// `y = a * x + y` on `stream`; returns the route it ran on. Lengths that differ, or
    /// buffers not 16-byte aligned (the kernel's vector width), are an `Err` before
    /// anything reaches the GPU.
    pub fn axpy(
        gpu: &Gpu,
        stream: &Stream,
        a: f32,
        x: &DeviceSlice<f32>,
        y: &mut DeviceSlice<f32>,
    ) -> Result<Route, Error> {
        let (xb, yb) = (buffer("x", x), buffer("y", y));
        xb.same_length(&yb)?;
        xb.aligned(16)?;
        yb.aligned(16)?;
        let kernel = gpu.kernel::<AxpyF32>()?;
        let n = x.len() as u64;
        let quads = n.div_ceil(4).max(1);
        let blocks = quads
            .div_ceil(BLOCK as u64)
            .min(gpu.device().sm_count as u64 * 8) as u32;
        let config = LaunchConfig::linear(blocks, BLOCK);
        // SAFETY: x and y are device buffers of this context holding n floats each, 16-byte
        // aligned as the kernel's float4 accesses need; `x` is read-only and distinct from
        // `y` (one is borrowed shared, the other exclusively).
        unsafe {
            kernel.launch(
                stream,
                &config,
                (x.as_device_ptr(), y.as_device_ptr(), a, n),
            )?
        };
        Ok(kernel.route().clone())
    }
}
