//! Row softmax over the last dimension of row-major `[rows, cols]` tensors
//! (`cuda/softmax.cu`): forward `y = exp(x - max) / sum(exp(x - max))` and backward
//! `dx = y * (dy - sum(y * dy))`. Any row length and alignment; bf16, f16 or f32 storage.
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::softmax::softmax;
//! use cubins::ops::Threads;
//! use cubins::runtime::{Gpu, F16};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let (rows, cols) = (1024, 2048);
//! let x = DeviceBuffer::from_slice(&vec![F16::default(); rows * cols])?;
//! let mut y = DeviceBuffer::from_slice(&vec![F16::default(); rows * cols])?;
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! let launched = softmax(&gpu, &stream, &x, &mut y, rows, cols, Threads::Auto)?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?);
//! # Ok(()) }
//! ```

use super::rows::{
    check_disjoint, plan_rows, tensor_bytes, RowKernel, SPREAD_BLOCK_THREADS, SPREAD_CHUNK_THREADS,
    WAVE_SPREAD_THREADS_PER_SM,
};
use super::{Launched, Threads};
use crate::kernels::{SoftmaxBwd, SoftmaxFwd};
use crate::runtime::launchers::Dtype;
use crate::runtime::{DeviceRead, DeviceWrite, StreamHandle};
use crate::runtime::{Error, Gpu, KernelSpec};

/// Forward: x resident, 8 chunks per thread, up to 1024 threads per row, rows spread over up
/// to a wave of threads, over a chunk a thread up to 256 threads.
pub const FWD: RowKernel = RowKernel {
    name: "softmax_fwd",
    resident_chunks: 8,
    max_threads: 1024,
    spread_threads_per_sm: WAVE_SPREAD_THREADS_PER_SM,
    warp_chunks: 0,
    short_threads: 0,
    spread_block_threads: SPREAD_CHUNK_THREADS,
};
/// Backward: y and dy resident, 4 chunks each; rows spread as the forward's.
pub const BWD: RowKernel = RowKernel {
    name: "softmax_bwd",
    resident_chunks: 4,
    max_threads: 1024,
    spread_threads_per_sm: WAVE_SPREAD_THREADS_PER_SM,
    warp_chunks: 0,
    short_threads: 0,
    spread_block_threads: SPREAD_BLOCK_THREADS,
};

/// `y = softmax(x)` over rows of `cols`; x and y hold `rows * cols` elements.
#[allow(clippy::too_many_arguments)]
pub fn softmax<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    y: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    threads: Threads,
) -> Result<Launched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (x.read(stream), y.write(stream));
    let (x, y) = (held.0.view, held.1.view);
    let entry = SoftmaxFwd::<T>::info().name;
    let (r, c, launched) = plan_rows::<T>(&FWD, entry, rows, cols, gpu.device().sm_count, threads)?;
    let (xb, yb) = (x.arg("x"), y.arg("y"));
    xb.at_least(tensor_bytes::<T>(rows, cols))?;
    yb.at_least(tensor_bytes::<T>(rows, cols))?;
    check_disjoint(&[yb], &[xb])?;
    let kernel = gpu.kernel::<SoftmaxFwd<T>>()?;
    // SAFETY: both buffers cover rows * cols elements and do not overlap; the kernel waits on
    // the grid dependency before its first access.
    unsafe { launched.launch_after_previous(&kernel, stream, (x.ptr, y.ptr, r, c)) }
}

/// `dx = y * (dy - sum(y * dy))` per row, from the forward's output y.
#[allow(clippy::too_many_arguments)]
pub fn softmax_backward<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    y: &impl DeviceRead<T, S>,
    dy: &impl DeviceRead<T, S>,
    dx: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    threads: Threads,
) -> Result<Launched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (y.read(stream), dy.read(stream), dx.write(stream));
    let (y, dy, dx) = (held.0.view, held.1.view, held.2.view);
    let entry = SoftmaxBwd::<T>::info().name;
    let (r, c, launched) = plan_rows::<T>(&BWD, entry, rows, cols, gpu.device().sm_count, threads)?;
    let (yb, dyb, dxb) = (y.arg("y"), dy.arg("dy"), dx.arg("dx"));
    for b in [&yb, &dyb, &dxb] {
        b.at_least(tensor_bytes::<T>(rows, cols))?;
    }
    check_disjoint(&[dxb], &[yb, dyb])?;
    let kernel = gpu.kernel::<SoftmaxBwd<T>>()?;
    // SAFETY: all three cover rows * cols elements; dx overlaps neither input; the kernel
    // waits on the grid dependency before its first access.
    unsafe { launched.launch_after_previous(&kernel, stream, (y.ptr, dy.ptr, dx.ptr, r, c)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rows::cu_constant;

    #[test]
    fn kernel_constants_match_cuda_softmax_cu() {
        let cu = include_str!("../../cuda/softmax.cu");
        assert_eq!(FWD.resident_chunks, cu_constant(cu, "kFwdChunks"));
        assert_eq!(BWD.resident_chunks, cu_constant(cu, "kBwdChunks"));
        assert_eq!(FWD.max_threads, cu_constant(cu, "kMaxThreads"));
        assert_eq!(BWD.max_threads, cu_constant(cu, "kMaxThreads"));
    }
}
