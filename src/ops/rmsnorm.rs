//! RMSNorm over the last dimension of row-major `[rows, cols]` tensors (`cuda/rmsnorm.cu`):
//! forward `y = x * rstd * w` with `rstd = 1 / sqrt(mean(x^2) + eps)`, the same with a fused
//! residual add (`h = x + residual` is written back as the residual and normalized), and the
//! backward pass (dx, and dw summed over rows in a fixed order through an fp32 workspace).
//! Any row length, any alignment of the element buffers; bf16, f16 or f32 storage.

use super::buffer;
use super::rows::{
    check_disjoint, check_rows_cols, chunk_elems, entry_name, plan_rows, shape_error, tensor_bytes,
    Launched, RowGeometry, RowKernel, Storage, Threads, Walk,
};
use crate::runtime::launchers::{
    RmsnormBwdBf16, RmsnormBwdF16, RmsnormBwdF32, RmsnormDweightBf16, RmsnormDweightF16,
    RmsnormDweightF32, RmsnormFwdBf16, RmsnormFwdF16, RmsnormFwdF32, RmsnormFwdResidualBf16,
    RmsnormFwdResidualF16, RmsnormFwdResidualF32,
};
use crate::runtime::{Bf16, Error, Gpu, LaunchConfig, LaunchError, F16};
use cust::memory::{DevicePointer, DeviceSlice};
use cust::stream::Stream;

/// The forward kernel: 8 resident chunks per thread, up to 1024 threads per row.
pub const FWD: RowKernel = RowKernel {
    name: "rmsnorm_fwd",
    resident_chunks: 8,
    max_threads: 1024,
};
/// The forward kernel with the residual add (8 resident chunks; x and the residual loaded
/// 2 chunks at a time).
pub const FWD_RESIDUAL: RowKernel = RowKernel {
    name: "rmsnorm_fwd_residual",
    resident_chunks: 8,
    max_threads: 1024,
};
/// The backward kernel (x and dy resident, 4 chunks each; up to 1024 threads per row where
/// the cubin's `__launch_bounds__` allow it: sm_90. Builds for older arches take 512 and
/// stream longer rows; see [`bwd_kernel`]).
pub const BWD: RowKernel = RowKernel {
    name: "rmsnorm_bwd",
    resident_chunks: 4,
    max_threads: 1024,
};

/// The dw reduction kernel: 512 threads, 128 columns per block.
const DWEIGHT_THREADS: u32 = 512;
const DWEIGHT_COLS_PER_BLOCK: usize = 128;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RmsNormOptions {
    pub eps: f32,
    pub threads: Threads,
}

impl Default for RmsNormOptions {
    fn default() -> Self {
        RmsNormOptions {
            eps: 1e-6,
            threads: Threads::Auto,
        }
    }
}

/// The launchers of one storage dtype.
pub trait RmsNormElem: Storage {
    /// # Safety
    /// The pointers address buffers of this context holding `rows * cols` (x, y) and `cols`
    /// (w) elements; y overlaps neither input.
    #[allow(clippy::too_many_arguments)]
    unsafe fn fwd(
        gpu: &Gpu,
        stream: &Stream,
        config: &LaunchConfig,
        x: DevicePointer<Self>,
        w: DevicePointer<Self>,
        y: DevicePointer<Self>,
        rows: u32,
        cols: u32,
        eps: f32,
    ) -> Result<(), Error>;

    /// # Safety
    /// As [`RmsNormElem::fwd`]; `residual_in` may equal `residual_out` (each element is read
    /// before it is written, by the same thread) and overlaps nothing else.
    #[allow(clippy::too_many_arguments)]
    unsafe fn fwd_residual(
        gpu: &Gpu,
        stream: &Stream,
        config: &LaunchConfig,
        x: DevicePointer<Self>,
        residual_in: DevicePointer<Self>,
        residual_out: DevicePointer<Self>,
        w: DevicePointer<Self>,
        y: DevicePointer<Self>,
        rows: u32,
        cols: u32,
        eps: f32,
    ) -> Result<(), Error>;

    /// # Safety
    /// x, dy, dx hold `rows * cols` elements, w `cols`, partial `gridDim.x * round_up(cols, 4)`
    /// floats 16-byte aligned; outputs overlap nothing.
    #[allow(clippy::too_many_arguments)]
    unsafe fn bwd(
        gpu: &Gpu,
        stream: &Stream,
        config: &LaunchConfig,
        x: DevicePointer<Self>,
        w: DevicePointer<Self>,
        dy: DevicePointer<Self>,
        dx: DevicePointer<Self>,
        partial: DevicePointer<f32>,
        rows: u32,
        cols: u32,
        rows_per_block: u32,
        eps: f32,
    ) -> Result<(), Error>;

    /// The backward kernel's function handle (for the occupancy calculator).
    /// Resident backward blocks per SM at this block size and dynamic shared memory.
    fn bwd_blocks_per_sm(gpu: &Gpu, threads: u32, smem_bytes: u32) -> Result<u32, Error>;
    /// The loaded backward kernel's threads-per-block limit (its `__launch_bounds__`).
    fn bwd_max_threads(gpu: &Gpu) -> Result<u32, Error>;

    /// # Safety
    /// partial holds `blocks * round_up(cols, 4)` floats, 16-byte aligned; dw `cols` elements.
    unsafe fn dweight(
        gpu: &Gpu,
        stream: &Stream,
        config: &LaunchConfig,
        partial: DevicePointer<f32>,
        dw: DevicePointer<Self>,
        blocks: u32,
        cols: u32,
    ) -> Result<(), Error>;
}

macro_rules! rmsnorm_elem {
    ($t:ty, $fwd:ty, $res:ty, $bwd:ty, $dw:ty) => {
        impl RmsNormElem for $t {
            unsafe fn fwd(
                gpu: &Gpu,
                stream: &Stream,
                config: &LaunchConfig,
                x: DevicePointer<Self>,
                w: DevicePointer<Self>,
                y: DevicePointer<Self>,
                rows: u32,
                cols: u32,
                eps: f32,
            ) -> Result<(), Error> {
                gpu.kernel::<$fwd>()?
                    .launch(stream, config, x, w, y, rows, cols, eps)
            }

            unsafe fn fwd_residual(
                gpu: &Gpu,
                stream: &Stream,
                config: &LaunchConfig,
                x: DevicePointer<Self>,
                residual_in: DevicePointer<Self>,
                residual_out: DevicePointer<Self>,
                w: DevicePointer<Self>,
                y: DevicePointer<Self>,
                rows: u32,
                cols: u32,
                eps: f32,
            ) -> Result<(), Error> {
                gpu.kernel::<$res>()?.launch(
                    stream,
                    config,
                    x,
                    residual_in,
                    residual_out,
                    w,
                    y,
                    rows,
                    cols,
                    eps,
                )
            }

            unsafe fn bwd(
                gpu: &Gpu,
                stream: &Stream,
                config: &LaunchConfig,
                x: DevicePointer<Self>,
                w: DevicePointer<Self>,
                dy: DevicePointer<Self>,
                dx: DevicePointer<Self>,
                partial: DevicePointer<f32>,
                rows: u32,
                cols: u32,
                rows_per_block: u32,
                eps: f32,
            ) -> Result<(), Error> {
                gpu.kernel::<$bwd>()?.launch(
                    stream,
                    config,
                    x,
                    w,
                    dy,
                    dx,
                    partial,
                    rows,
                    cols,
                    rows_per_block,
                    eps,
                )
            }

            fn bwd_blocks_per_sm(gpu: &Gpu, threads: u32, smem_bytes: u32) -> Result<u32, Error> {
                gpu.kernel::<$bwd>()?
                    .max_active_blocks_per_sm(threads, smem_bytes)
            }
            fn bwd_max_threads(gpu: &Gpu) -> Result<u32, Error> {
                Ok(gpu.kernel::<$bwd>()?.limits().max_threads_per_block)
            }

            unsafe fn dweight(
                gpu: &Gpu,
                stream: &Stream,
                config: &LaunchConfig,
                partial: DevicePointer<f32>,
                dw: DevicePointer<Self>,
                blocks: u32,
                cols: u32,
            ) -> Result<(), Error> {
                gpu.kernel::<$dw>()?
                    .launch(stream, config, partial, dw, blocks, cols)
            }
        }
    };
}

rmsnorm_elem!(
    Bf16,
    RmsnormFwdBf16,
    RmsnormFwdResidualBf16,
    RmsnormBwdBf16,
    RmsnormDweightBf16
);
rmsnorm_elem!(
    F16,
    RmsnormFwdF16,
    RmsnormFwdResidualF16,
    RmsnormBwdF16,
    RmsnormDweightF16
);
rmsnorm_elem!(
    f32,
    RmsnormFwdF32,
    RmsnormFwdResidualF32,
    RmsnormBwdF32,
    RmsnormDweightF32
);

fn check_eps(kernel: &'static str, eps: f32) -> Result<(), Error> {
    if eps.is_finite() && eps >= 0.0 {
        Ok(())
    } else {
        Err(shape_error(kernel, "a finite, non-negative eps"))
    }
}

/// `y = rmsnorm(x) * w` over rows of `cols`: x and y hold `rows * cols` elements, w `cols`.
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm<T: RmsNormElem>(
    gpu: &Gpu,
    stream: &Stream,
    x: &DeviceSlice<T>,
    w: &DeviceSlice<T>,
    y: &mut DeviceSlice<T>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    let (r, c, launched) = plan_rows::<T>(&FWD, rows, cols, opts.threads)?;
    check_eps(launched.kernel, opts.eps)?;
    let (xb, wb, yb) = (buffer("x", x), buffer("w", w), buffer("y", y));
    xb.at_least(tensor_bytes::<T>(rows, cols))?;
    yb.at_least(tensor_bytes::<T>(rows, cols))?;
    wb.at_least(tensor_bytes::<T>(1, cols))?;
    check_disjoint(&[yb], &[xb, wb])?;
    // SAFETY: the lengths cover rows * cols (x, y) and cols (w) elements, y overlaps
    // neither input; the kernel touches exactly those elements.
    unsafe {
        T::fwd(
            gpu,
            stream,
            &launched.config,
            x.as_device_ptr(),
            w.as_device_ptr(),
            y.as_device_ptr(),
            r,
            c,
            opts.eps,
        )?
    };
    Ok(launched)
}

/// The fused residual add, in place: `residual += x` (rounded to the storage type), then
/// `y = rmsnorm(residual) * w` of the updated residual.
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm_residual<T: RmsNormElem>(
    gpu: &Gpu,
    stream: &Stream,
    x: &DeviceSlice<T>,
    residual: &mut DeviceSlice<T>,
    w: &DeviceSlice<T>,
    y: &mut DeviceSlice<T>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    let r = residual.as_device_ptr();
    residual_launch(
        gpu,
        stream,
        x,
        (buffer("residual", residual), r, r),
        w,
        y,
        rows,
        cols,
        opts,
    )
}

/// The fused residual add into a separate buffer: `residual_out = residual_in + x`, then
/// `y = rmsnorm(residual_out) * w`.
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm_residual_into<T: RmsNormElem>(
    gpu: &Gpu,
    stream: &Stream,
    x: &DeviceSlice<T>,
    residual_in: &DeviceSlice<T>,
    residual_out: &mut DeviceSlice<T>,
    w: &DeviceSlice<T>,
    y: &mut DeviceSlice<T>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    let (rin, rout) = (
        buffer("residual_in", residual_in),
        buffer("residual_out", residual_out),
    );
    rin.at_least(tensor_bytes::<T>(rows, cols))?;
    rout.disjoint(&rin)?;
    let ptrs = (
        rout,
        residual_in.as_device_ptr(),
        residual_out.as_device_ptr(),
    );
    residual_launch(gpu, stream, x, ptrs, w, y, rows, cols, opts)
}

/// `residual`: the written residual buffer and the (in, out) pointers.
#[allow(clippy::too_many_arguments)]
fn residual_launch<T: RmsNormElem>(
    gpu: &Gpu,
    stream: &Stream,
    x: &DeviceSlice<T>,
    residual: (
        crate::runtime::BufferArg,
        DevicePointer<T>,
        DevicePointer<T>,
    ),
    w: &DeviceSlice<T>,
    y: &mut DeviceSlice<T>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    let (r, c, launched) = plan_rows::<T>(&FWD_RESIDUAL, rows, cols, opts.threads)?;
    check_eps(launched.kernel, opts.eps)?;
    let (rb, rin, rout) = residual;
    let (xb, wb, yb) = (buffer("x", x), buffer("w", w), buffer("y", y));
    for b in [&xb, &rb, &yb] {
        b.at_least(tensor_bytes::<T>(rows, cols))?;
    }
    wb.at_least(tensor_bytes::<T>(1, cols))?;
    check_disjoint(&[yb, rb], &[xb, wb])?;
    // SAFETY: lengths cover the shape; y and the written residual overlap no other buffer
    // (residual_in may be residual_out: each element is read, then written, by one thread).
    unsafe {
        T::fwd_residual(
            gpu,
            stream,
            &launched.config,
            x.as_device_ptr(),
            rin,
            rout,
            w.as_device_ptr(),
            y.as_device_ptr(),
            r,
            c,
            opts.eps,
        )?
    };
    Ok(launched)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RmsNormBwdOptions {
    pub eps: f32,
    pub threads: Threads,
    /// Blocks of the main kernel = rows of the dw workspace. `None`: one wave of resident
    /// blocks on this GPU (its SM count times the kernel's occupancy), at most one per row.
    /// The dw bits depend on it (it fixes the summation order): fix it for digests that
    /// must hold across GPUs.
    pub blocks: Option<u32>,
}

impl Default for RmsNormBwdOptions {
    fn default() -> Self {
        RmsNormBwdOptions {
            eps: 1e-6,
            threads: Threads::Auto,
            blocks: None,
        }
    }
}

/// How a backward launch splits the rows: what the workspace must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RmsNormBwdPlan {
    pub geometry: RowGeometry,
    /// The backward kernel as loaded: its thread limit, and so its walks.
    pub kernel: RowKernel,
    /// Blocks of the main kernel (rows of the workspace).
    pub blocks: u32,
    /// Consecutive rows per block.
    pub rows_per_block: u32,
    /// Dynamic shared memory per block: the dw accumulators of `rows_per_block` row groups.
    pub smem_bytes: u32,
    pub cols: usize,
}

impl RmsNormBwdPlan {
    /// Workspace length in f32 elements: one row of round_up(cols, 4) per block.
    pub fn workspace_len(&self) -> usize {
        self.blocks as usize * self.cols.div_ceil(4) * 4
    }

    /// The walk of a row whose tensors are 16-byte aligned, in words.
    pub fn walk<T>(&self) -> &'static str {
        match self.geometry.walk::<T>(&self.kernel, self.cols) {
            Walk::Resident => "resident",
            Walk::Streamed if bwd_streams(&self.kernel) => "streamed",
            Walk::Streamed => "elementwise",
        }
    }
}

/// The backward kernel with the thread limit of the loaded cubin (`max_threads_per_block`:
/// 1024 on sm_90, 512 on older arches and the PTX fallback).
fn bwd_kernel(max_threads_per_block: u32) -> RowKernel {
    RowKernel {
        max_threads: BWD.max_threads.min(max_threads_per_block),
        ..BWD
    }
}

/// Whether the loaded backward kernel streams rows longer than a resident tile. Only the
/// 512-thread builds do (`kBwdStreams` in cuda/rmsnorm.cu); the 1024-thread build's register
/// budget leaves no room for the streamed walk, so those rows go element by element.
fn bwd_streams(kernel: &RowKernel) -> bool {
    kernel.max_threads < BWD.max_threads
}

/// The dw accumulators of one row group (cuda/rmsnorm.cu `DwAcc::floats`), bytes.
fn acc_bytes<T>(cols: usize) -> u64 {
    let vec = chunk_elems::<T>() as u64;
    ((cols as u64) / vec + 1) * vec * 4
}

/// Plans a backward launch of `rows x cols` on this GPU (for the workspace size).
pub fn rmsnorm_backward_plan<T: RmsNormElem>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    opts: &RmsNormBwdOptions,
) -> Result<RmsNormBwdPlan, Error> {
    let name = entry_name::<T>(BWD.name)?;
    check_rows_cols(name, rows, cols)?;
    let kernel = bwd_kernel(T::bwd_max_threads(gpu)?);
    let geometry = RowGeometry::select::<T>(&kernel, cols, opts.threads)?;
    let smem = acc_bytes::<T>(cols) * u64::from(geometry.rows_per_block);
    let smem_bytes = u32::try_from(smem)
        .map_err(|_| shape_error(name, "dw accumulators within shared memory"))?;
    let groups = rows.div_ceil(geometry.rows_per_block as usize);
    let blocks = match opts.blocks {
        Some(0) => return Err(shape_error(name, "at least one block")),
        Some(b) => b as usize,
        None => {
            let per_sm = resident_blocks::<T>(gpu, geometry.threads(), smem_bytes)?;
            per_sm as usize * gpu.device().sm_count.max(1) as usize
        }
    }
    .min(groups)
    .max(1);
    // Whole row groups per block, then as few blocks as that needs.
    let rows_per_block = groups.div_ceil(blocks) * geometry.rows_per_block as usize;
    let blocks = rows.div_ceil(rows_per_block);
    Ok(RmsNormBwdPlan {
        geometry,
        kernel,
        blocks: blocks as u32,
        rows_per_block: rows_per_block as u32,
        smem_bytes,
        cols,
    })
}

/// Resident blocks per SM of the backward kernel at this block size and shared memory
/// (the driver's occupancy calculator, with the function's limit already raised), at least 1.
fn resident_blocks<T: RmsNormElem>(gpu: &Gpu, threads: u32, smem_bytes: u32) -> Result<u32, Error> {
    Ok(T::bwd_blocks_per_sm(gpu, threads, smem_bytes)?.max(1))
}

/// The backward pass: dx (`rows * cols`) and dw (`cols`) from x, w and dy. `workspace`
/// holds at least [`RmsNormBwdPlan::workspace_len`] floats (16-byte aligned) of the plan
/// [`rmsnorm_backward_plan`] makes with the same options. Two launches: the rows, then the
/// fixed-order sum of the per-block dw rows.
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm_backward<T: RmsNormElem>(
    gpu: &Gpu,
    stream: &Stream,
    x: &DeviceSlice<T>,
    w: &DeviceSlice<T>,
    dy: &DeviceSlice<T>,
    dx: &mut DeviceSlice<T>,
    dw: &mut DeviceSlice<T>,
    workspace: &mut DeviceSlice<f32>,
    rows: usize,
    cols: usize,
    opts: &RmsNormBwdOptions,
) -> Result<[Launched; 2], Error> {
    let name = entry_name::<T>(BWD.name)?;
    let dw_name = entry_name::<T>("rmsnorm_dweight")?;
    let (r, c) = check_rows_cols(name, rows, cols)?;
    check_eps(name, opts.eps)?;
    let plan = rmsnorm_backward_plan::<T>(gpu, rows, cols, opts)?;
    let (xb, wb, dyb, dxb, dwb, ws) = (
        buffer("x", x),
        buffer("w", w),
        buffer("dy", dy),
        buffer("dx", dx),
        buffer("dw", dw),
        buffer("workspace", workspace),
    );
    for b in [&xb, &dyb, &dxb] {
        b.at_least(tensor_bytes::<T>(rows, cols))?;
    }
    for b in [&wb, &dwb] {
        b.at_least(tensor_bytes::<T>(1, cols))?;
    }
    ws.at_least(plan.workspace_len() as u64 * 4)?;
    ws.aligned(16)?;
    check_disjoint(&[dxb, dwb, ws], &[xb, wb, dyb])?;

    let main = Launched {
        kernel: name,
        config: LaunchConfig {
            grid: [plan.blocks, 1, 1],
            block: [
                plan.geometry.threads_per_row,
                plan.geometry.rows_per_block,
                1,
            ],
            dynamic_smem_bytes: plan.smem_bytes,
        },
        choice: format!(
            "threads_per_row={} rows_per_block={} rows_per_grid_block={} walk={}",
            plan.geometry.threads_per_row,
            plan.geometry.rows_per_block,
            plan.rows_per_block,
            plan.walk::<T>()
        ),
    };
    let reduce = Launched {
        kernel: dw_name,
        config: LaunchConfig::linear(
            cols.div_ceil(DWEIGHT_COLS_PER_BLOCK) as u32,
            DWEIGHT_THREADS,
        ),
        choice: format!("partial_rows={}", plan.blocks),
    };
    if reduce.config.grid[0] > i32::MAX as u32 {
        return Err(LaunchError::Geometry {
            kernel: dw_name,
            requirement: "a grid within 2^31 - 1 blocks",
            config: reduce.config,
        }
        .into());
    }
    let partial = workspace.as_device_ptr();
    // SAFETY: lengths cover the shape and the plan's workspace (16-byte aligned, as the
    // float4 stores need); the outputs overlap no other buffer. The second launch reads the
    // workspace the first wrote, in stream order.
    unsafe {
        T::bwd(
            gpu,
            stream,
            &main.config,
            x.as_device_ptr(),
            w.as_device_ptr(),
            dy.as_device_ptr(),
            dx.as_device_ptr(),
            partial,
            r,
            c,
            plan.rows_per_block,
            opts.eps,
        )?;
        T::dweight(
            gpu,
            stream,
            &reduce.config,
            partial,
            dw.as_device_ptr(),
            plan.blocks,
            c,
        )?;
    }
    Ok([main, reduce])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rows::cu_constant;

    #[test]
    fn kernel_constants_match_cuda_rmsnorm_cu() {
        let cu = include_str!("../../cuda/rmsnorm.cu");
        assert_eq!(FWD.resident_chunks, cu_constant(cu, "kFwdChunks"));
        assert_eq!(
            FWD_RESIDUAL.resident_chunks,
            cu_constant(cu, "kResidualChunks")
        );
        assert_eq!(BWD.resident_chunks, cu_constant(cu, "kBwdChunks"));
        assert_eq!(FWD.max_threads, cu_constant(cu, "kMaxThreads"));
        assert_eq!(FWD_RESIDUAL.max_threads, cu_constant(cu, "kMaxThreads"));
        assert_eq!(BWD.max_threads, cu_constant(cu, "kBwdMaxThreads"));
        assert_eq!(DWEIGHT_THREADS, 32 * cu_constant(cu, "kDwWarps"));
    }

    #[test]
    fn the_backward_kernel_follows_the_cubins_thread_limit() {
        let sm90 = bwd_kernel(1024);
        let older = bwd_kernel(512);
        assert_eq!((sm90.max_threads, older.max_threads), (1024, 512));
        assert!(!bwd_streams(&sm90) && bwd_streams(&older));
        // 32768 bf16 columns: resident at 1024 threads; 512 threads stream them.
        let wide = RowGeometry::select::<Bf16>(&sm90, 32768, Threads::Auto).unwrap();
        assert_eq!(wide.threads_per_row, 1024);
        assert_eq!(wide.walk::<Bf16>(&sm90, 32768), Walk::Resident);
        let narrow = RowGeometry::select::<Bf16>(&older, 32768, Threads::Auto).unwrap();
        assert_eq!(narrow.threads_per_row, 512);
        assert_eq!(narrow.walk::<Bf16>(&older, 32768), Walk::Streamed);
        // 14336 columns: 448 threads either way.
        let mid = RowGeometry::select::<Bf16>(&sm90, 14336, Threads::Auto).unwrap();
        assert_eq!(mid.threads_per_row, 448);
        assert!(RowGeometry::select::<Bf16>(&older, 32, Threads::PerRow(1024)).is_err());
    }

    #[test]
    fn dw_accumulators_match_the_kernel_layout() {
        // DwAcc::floats(cols) = (cols / kVec + 1) * kVec floats per row group.
        assert_eq!(acc_bytes::<Bf16>(4096), (512 + 1) * 8 * 4);
        assert_eq!(acc_bytes::<f32>(7), (1 + 1) * 4 * 4);
        assert_eq!(acc_bytes::<F16>(1), 8 * 4);
    }
}
