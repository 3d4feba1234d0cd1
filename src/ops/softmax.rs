//! Row softmax over the last dimension of row-major `[rows, cols]` tensors
//! (`cuda/softmax.cu`): forward `y = exp(x - max) / sum(exp(x - max))` and backward
//! `dx = y * (dy - sum(y * dy))`. Any row length and alignment; bf16, f16 or f32 storage.

use super::buffer;
use super::rows::{check_disjoint, plan_rows, tensor_bytes, Launched, RowKernel, Storage, Threads};
use crate::kernels::{
    SoftmaxBwdBf16, SoftmaxBwdF16, SoftmaxBwdF32, SoftmaxFwdBf16, SoftmaxFwdF16, SoftmaxFwdF32,
};
use crate::runtime::{Bf16, Error, Gpu, LaunchConfig, F16};
use cust::memory::{DevicePointer, DeviceSlice};
use cust::stream::Stream;

/// Forward: x resident, 8 chunks per thread, up to 1024 threads per row.
pub const FWD: RowKernel = RowKernel {
    name: "softmax_fwd",
    resident_chunks: 8,
    max_threads: 1024,
};
/// Backward: y and dy resident, 4 chunks each.
pub const BWD: RowKernel = RowKernel {
    name: "softmax_bwd",
    resident_chunks: 4,
    max_threads: 1024,
};

/// The launchers of one storage dtype.
pub trait SoftmaxElem: Storage {
    /// # Safety
    /// x and y hold `rows * cols` elements of this context and do not overlap.
    unsafe fn fwd(
        gpu: &Gpu,
        stream: &Stream,
        config: &LaunchConfig,
        x: DevicePointer<Self>,
        y: DevicePointer<Self>,
        rows: u32,
        cols: u32,
    ) -> Result<(), Error>;

    /// # Safety
    /// y, dy and dx hold `rows * cols` elements; dx overlaps neither input.
    #[allow(clippy::too_many_arguments)]
    unsafe fn bwd(
        gpu: &Gpu,
        stream: &Stream,
        config: &LaunchConfig,
        y: DevicePointer<Self>,
        dy: DevicePointer<Self>,
        dx: DevicePointer<Self>,
        rows: u32,
        cols: u32,
    ) -> Result<(), Error>;
}

macro_rules! softmax_elem {
    ($t:ty, $fwd:ty, $bwd:ty) => {
        impl SoftmaxElem for $t {
            unsafe fn fwd(
                gpu: &Gpu,
                stream: &Stream,
                config: &LaunchConfig,
                x: DevicePointer<Self>,
                y: DevicePointer<Self>,
                rows: u32,
                cols: u32,
            ) -> Result<(), Error> {
                gpu.kernel::<$fwd>()?
                    .launch(stream, config, (x, y, rows, cols))
            }

            unsafe fn bwd(
                gpu: &Gpu,
                stream: &Stream,
                config: &LaunchConfig,
                y: DevicePointer<Self>,
                dy: DevicePointer<Self>,
                dx: DevicePointer<Self>,
                rows: u32,
                cols: u32,
            ) -> Result<(), Error> {
                gpu.kernel::<$bwd>()?
                    .launch(stream, config, (y, dy, dx, rows, cols))
            }
        }
    };
}

softmax_elem!(Bf16, SoftmaxFwdBf16, SoftmaxBwdBf16);
softmax_elem!(F16, SoftmaxFwdF16, SoftmaxBwdF16);
softmax_elem!(f32, SoftmaxFwdF32, SoftmaxBwdF32);

/// `y = softmax(x)` over rows of `cols`; x and y hold `rows * cols` elements.
#[allow(clippy::too_many_arguments)]
pub fn softmax<T: SoftmaxElem>(
    gpu: &Gpu,
    stream: &Stream,
    x: &DeviceSlice<T>,
    y: &mut DeviceSlice<T>,
    rows: usize,
    cols: usize,
    threads: Threads,
) -> Result<Launched, Error> {
    let (r, c, launched) = plan_rows::<T>(&FWD, rows, cols, threads)?;
    let (xb, yb) = (buffer("x", x), buffer("y", y));
    xb.at_least(tensor_bytes::<T>(rows, cols))?;
    yb.at_least(tensor_bytes::<T>(rows, cols))?;
    check_disjoint(&[yb], &[xb])?;
    // SAFETY: both buffers cover rows * cols elements and do not overlap.
    unsafe {
        T::fwd(
            gpu,
            stream,
            &launched.config,
            x.as_device_ptr(),
            y.as_device_ptr(),
            r,
            c,
        )?
    };
    Ok(launched)
}

/// `dx = y * (dy - sum(y * dy))` per row, from the forward's output y.
#[allow(clippy::too_many_arguments)]
pub fn softmax_backward<T: SoftmaxElem>(
    gpu: &Gpu,
    stream: &Stream,
    y: &DeviceSlice<T>,
    dy: &DeviceSlice<T>,
    dx: &mut DeviceSlice<T>,
    rows: usize,
    cols: usize,
    threads: Threads,
) -> Result<Launched, Error> {
    let (r, c, launched) = plan_rows::<T>(&BWD, rows, cols, threads)?;
    let (yb, dyb, dxb) = (buffer("y", y), buffer("dy", dy), buffer("dx", dx));
    for b in [&yb, &dyb, &dxb] {
        b.at_least(tensor_bytes::<T>(rows, cols))?;
    }
    check_disjoint(&[dxb], &[yb, dyb])?;
    // SAFETY: all three cover rows * cols elements; dx overlaps neither input.
    unsafe {
        T::bwd(
            gpu,
            stream,
            &launched.config,
            y.as_device_ptr(),
            dy.as_device_ptr(),
            dx.as_device_ptr(),
            r,
            c,
        )?
    };
    Ok(launched)
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
