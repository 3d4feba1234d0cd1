//! LayerNorm over the last dimension of row-major `[rows, cols]` tensors (`cuda/layernorm.cu`):
//! forward `y = (x - mean) * rstd * w + b` with `rstd = 1 / sqrt(var + eps)` and `var` the
//! biased variance `mean((x - mean)^2)`, the same with a fused residual add (`h = x +
//! residual` is written back as the residual and normalized), and the backward pass (dx; dw
//! and db summed over rows in a fixed order through an fp32 workspace). Any row length, any
//! alignment of the element buffers; bf16, f16 or f32 storage.
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::layernorm::{layernorm, LayerNormOptions};
//! use cubins::runtime::{Gpu, F16};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (gpu, (rows, cols)) = (Gpu::new()?, (16, 768));
//! let zeros = |n| DeviceBuffer::from_slice(&vec![F16::default(); n]);
//! let (x, w, b, mut y) = (zeros(rows * cols)?, zeros(cols)?, zeros(cols)?, zeros(rows * cols)?);
//! gpu.synchronize()?; // the uploads ran on the legacy stream; a new stream does not wait for it
//! let stream = gpu.stream()?;
//! let opts = LayerNormOptions::default();
//! let launched = layernorm(&gpu, &stream, &x, &w, &b, &mut y, rows, cols, &opts)?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?); // STAMP kernel=layernorm_fwd_f16 ... walk=resident
//! # Ok(()) }
//! ```

use super::norm::{
    acc_smem_bytes, bwd_geometry, bwd_walk_word, check_buffers, check_bwd_buffers, check_eps,
    colsum_launch, dynamic_smem_limit, packed_geometry, range_config, ranges, split_rows,
    sums_words, whole_row_words, within_bound, Extent, Residual,
};
use super::norm_fwd::plan_fwd;
use super::rows::{check_rows_cols, RowGeometry, RowKernel, Walk};
use super::{rmsnorm, Launched, Threads};
use crate::kernels::{
    LayernormBwd, LayernormDweight, LayernormFwd, LayernormFwdCluster, LayernormFwdResidual,
    LayernormFwdResidualCluster,
};
use crate::runtime::launchers::Dtype;
use crate::runtime::{DevicePtr, DeviceRead, DeviceView, DeviceWrite, StreamHandle};
use crate::runtime::{Error, Gpu, KernelSpec, LaunchConfig};

pub use super::norm::BwdLaunched;

/// The forward kernel, built as RMSNorm's: 8 resident chunks per thread, up to 1024 threads
/// per row.
pub const FWD: RowKernel = RowKernel {
    name: "layernorm_fwd",
    ..rmsnorm::FWD
};
/// The forward kernel with the residual add, built as RMSNorm's (8 resident chunks; x and
/// the residual loaded 2 chunks at a time, 1 on Blackwell).
pub const FWD_RESIDUAL: RowKernel = RowKernel {
    name: "layernorm_fwd_residual",
    ..rmsnorm::FWD_RESIDUAL
};
/// The backward kernel: x and dy resident, 4 chunks each (as RMSNorm's), up to 512 threads
/// per row (384 in the Blackwell builds; the plan reads the loaded cubin's bound). A row
/// longer than a resident tile streams a chunk at a time in the 512-thread builds and goes
/// element by element in the Blackwell ones ([`bwd_streams`]).
pub const BWD: RowKernel = RowKernel {
    name: "layernorm_bwd",
    max_threads: 512,
    ..rmsnorm::BWD
};

/// Column sums of the backward, and so partial rows per row range of its workspace: dw, db.
const SUMS: u32 = 2;

/// PyTorch's `LayerNorm` default.
const EPS: f32 = 1e-5;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerNormOptions {
    pub eps: f32,
    pub threads: Threads,
}

impl Default for LayerNormOptions {
    fn default() -> Self {
        let (eps, threads) = (EPS, Threads::Auto);
        LayerNormOptions { eps, threads }
    }
}

/// `y = layernorm(x) * w + b` over rows of `cols`: x and y hold `rows * cols` elements, w
/// and b `cols`.
#[allow(clippy::too_many_arguments)]
pub fn layernorm<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    w: &impl DeviceRead<T, S>,
    b: &impl DeviceRead<T, S>,
    y: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    opts: &LayerNormOptions,
) -> Result<Launched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses when
    // they drop, after the launches (so in every op here).
    let (ins, out) = (
        (x.read(stream), w.read(stream), b.read(stream)),
        y.write(stream),
    );
    let (x, w, b, y) = (ins.0.view, ins.1.view, ins.2.view, out.view);
    let plan = plan_fwd::<T, LayernormFwd<T>, LayernormFwdCluster<T>>(
        gpu,
        &FWD,
        rows,
        cols,
        opts.threads,
        opts.eps,
    )?;
    let inputs = [
        (x.arg("x"), Extent::Rows),
        (w.arg("w"), Extent::Row),
        (b.arg("b"), Extent::Row),
    ];
    check_buffers::<T>(rows, cols, &inputs, &[(y.arg("y"), Extent::Rows)])?;
    let (r, c) = (plan.rows, plan.cols);
    // SAFETY: the lengths cover rows * cols (x, y) and cols (w, b) elements, y overlaps no
    // input; either kernel touches exactly those elements (the whole-row one after the grid
    // dependency).
    unsafe { plan.launch(gpu, stream, (x.ptr, w.ptr, b.ptr, y.ptr, r, c, opts.eps)) }
}

/// The fused residual add, in place: `residual += x` (rounded to the storage type), then
/// `y = layernorm(residual) * w + b` of the updated residual.
#[allow(clippy::too_many_arguments)]
pub fn layernorm_residual<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    residual: &mut impl DeviceWrite<T, S>,
    w: &impl DeviceRead<T, S>,
    b: &impl DeviceRead<T, S>,
    y: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    opts: &LayerNormOptions,
) -> Result<Launched, Error> {
    let (ins, weights) = (x.read(stream), (w.read(stream), b.read(stream)));
    let outs = (residual.write(stream), y.write(stream));
    let residual = Residual::in_place(&outs.0.view);
    let (x, y) = (ins.view, outs.1.view);
    let wb = (weights.0.view, weights.1.view);
    residual_launch(gpu, stream, x, residual, wb, y, (rows, cols), opts)
}

/// The fused residual add into a separate buffer: `residual_out = residual_in + x`, then
/// `y = layernorm(residual_out) * w + b`.
#[allow(clippy::too_many_arguments)]
pub fn layernorm_residual_into<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    residual_in: &impl DeviceRead<T, S>,
    residual_out: &mut impl DeviceWrite<T, S>,
    w: &impl DeviceRead<T, S>,
    b: &impl DeviceRead<T, S>,
    y: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    opts: &LayerNormOptions,
) -> Result<Launched, Error> {
    let ins = (x.read(stream), residual_in.read(stream));
    let weights = (w.read(stream), b.read(stream));
    let outs = (residual_out.write(stream), y.write(stream));
    let residual = Residual::into(&ins.1.view, &outs.0.view);
    let (x, y) = (ins.0.view, outs.1.view);
    let wb = (weights.0.view, weights.1.view);
    residual_launch(gpu, stream, x, residual, wb, y, (rows, cols), opts)
}

/// `weights`: w and b.
#[allow(clippy::too_many_arguments)]
fn residual_launch<T: Dtype>(
    gpu: &Gpu,
    stream: &impl StreamHandle,
    x: DeviceView<T>,
    residual: Residual<T>,
    (w, b): (DeviceView<T>, DeviceView<T>),
    y: DeviceView<T>,
    (rows, cols): (usize, usize),
    opts: &LayerNormOptions,
) -> Result<Launched, Error> {
    let plan = plan_fwd::<T, LayernormFwdResidual<T>, LayernormFwdResidualCluster<T>>(
        gpu,
        &FWD_RESIDUAL,
        rows,
        cols,
        opts.threads,
        opts.eps,
    )?;
    let inputs = [
        (x.arg("x"), Extent::Rows),
        (w.arg("w"), Extent::Row),
        (b.arg("b"), Extent::Row),
    ];
    let (rin, rout) = residual.ptrs;
    residual.check(rows, cols, &inputs, y.arg("y"))?;
    let (r, c) = (plan.rows, plan.cols);
    // SAFETY: the checks above: every buffer covers the shape, y and the written residual
    // overlap nothing else, and an in-place residual is read, then written, by one thread;
    // the whole-row kernel waits on the grid dependency first.
    unsafe {
        plan.launch(
            gpu,
            stream,
            (x.ptr, rin, rout, w.ptr, b.ptr, y.ptr, r, c, opts.eps),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerNormBwdOptions {
    pub eps: f32,
    pub threads: Threads,
    /// Row ranges = blocks, each writing one dw and one db row of the workspace. `None`: one
    /// wave of them on this GPU (its SM count times the kernel's occupancy), at most one per
    /// row group. The dw and db bits depend on it (it fixes the summation order): fix it for
    /// digests that must hold across GPUs.
    pub blocks: Option<u32>,
}

impl Default for LayerNormBwdOptions {
    fn default() -> Self {
        let (eps, threads, blocks) = (EPS, Threads::Auto, None);
        LayerNormBwdOptions {
            eps,
            threads,
            blocks,
        }
    }
}

/// How a backward launch splits the rows: what the workspace must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerNormBwdPlan {
    pub geometry: RowGeometry,
    /// The backward kernel as loaded: its thread limit, and so its walks.
    pub kernel: RowKernel,
    /// Row ranges (blocks).
    pub blocks: u32,
    /// Consecutive rows per range.
    pub rows_per_block: u32,
    /// Dynamic shared memory per block: the dw and db accumulators of its row groups.
    pub smem_bytes: u32,
    /// The occupancy calculator holds one block per SM: nothing overlaps a block's reduction
    /// and writes, so its row groups prefetch their next rows of x and dy into L2.
    pub alone_on_sm: bool,
    pub cols: usize,
}

impl LayerNormBwdPlan {
    /// Workspace length in f32 elements: a dw and a db row of round_up(cols, 4) per range.
    pub fn workspace_len(&self) -> usize {
        super::norm::workspace_len(self.blocks, SUMS, self.cols)
    }

    /// The walk of a row whose tensors are 16-byte aligned (past a resident tile: streamed
    /// where [`bwd_streams`], else element by element).
    pub fn walk<T>(&self) -> Walk {
        self.geometry.walk::<T>(&self.kernel, self.cols)
    }

    pub fn config(&self) -> LaunchConfig {
        range_config(&self.geometry, self.blocks, self.smem_bytes)
    }

    /// The geometry in words, for the launch record (and so the STAMP line).
    pub fn describe<T>(&self) -> String {
        let streams = bwd_streams(&self.kernel);
        let walk = bwd_walk_word::<T>(&self.geometry, &self.kernel, self.cols, streams);
        let words = whole_row_words(&self.geometry, self.rows_per_block, walk);
        let prefetch = if self.alone_on_sm { "next_row" } else { "none" };
        format!("{words} prefetch={prefetch} {}", sums_words(self.blocks))
    }
}

/// Whether the loaded backward kernel streams rows longer than a resident tile: the
/// 512-thread builds do (`kBwdStreamChunks` in cuda/layernorm.cu); the Blackwell builds'
/// 384 threads at 168 registers leave no room for it, so those rows go element by element.
pub fn bwd_streams(kernel: &RowKernel) -> bool {
    kernel.max_threads == BWD.max_threads
}

/// Dynamic shared memory the backward kernel takes for `row_groups` rows of `cols` columns:
/// their dw and db accumulators (`u32::MAX` past it).
pub fn accumulator_bytes<T>(cols: usize, row_groups: u32) -> u32 {
    acc_smem_bytes::<T>(BWD.name, cols, row_groups, SUMS).unwrap_or(u32::MAX)
}

/// Plans a backward launch of `rows x cols` on this GPU (for the workspace size), after
/// checking the shape and the options. A row whose accumulators (8 bytes per column and row
/// group) exceed the GPU's shared memory per block is refused.
pub fn layernorm_backward_plan<T: Dtype>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    opts: &LayerNormBwdOptions,
) -> Result<LayerNormBwdPlan, Error> {
    let name = LayernormBwd::<T>::info().name;
    check_rows_cols(name, rows, cols)?;
    check_eps(name, opts.eps)?;
    let function = gpu.kernel::<LayernormBwd<T>>()?;
    let limits = function.limits();
    let kernel = within_bound(&BWD, limits.max_threads_per_block);
    let choice = (opts.threads, opts.blocks);
    let geometry = packed_geometry::<T>(
        bwd_geometry::<T>(
            gpu,
            &kernel,
            limits.static_smem_bytes,
            (rows, cols),
            choice,
            SUMS,
        )?,
        &kernel,
        (rows, cols),
        choice,
        (SUMS, dynamic_smem_limit(gpu, limits.static_smem_bytes)),
        gpu.device().sm_count,
    );
    let smem_bytes = acc_smem_bytes::<T>(name, cols, geometry.rows_per_block, SUMS)?;
    // Asked even for a fixed block count: it decides the prefetch (which moves no bits).
    let per_sm = function.max_active_blocks_per_sm(geometry.threads(), smem_bytes)?;
    let ranges = ranges(gpu, name, opts.blocks, 1, || Ok(per_sm))?;
    let (rows_per_block, blocks) = split_rows(rows, geometry.rows_per_block, ranges);
    Ok(LayerNormBwdPlan {
        geometry,
        kernel,
        blocks,
        rows_per_block,
        smem_bytes,
        alone_on_sm: per_sm <= 1,
        cols,
    })
}

/// The backward pass: dx (`rows * cols`), dw and db (`cols` each) from x, w and dy.
/// `workspace` holds at least [`LayerNormBwdPlan::workspace_len`] floats (16-byte aligned)
/// of the plan [`layernorm_backward_plan`] makes with the same options. Two launches where
/// several row ranges share the rows: the rows, then the fixed-order sums of the per-range dw
/// and db rows. One where one range takes every row: it writes dw and db itself
/// ([`BwdLaunched::sums`] is `None`; the plan's workspace length is 0).
#[allow(clippy::too_many_arguments)]
pub fn layernorm_backward<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    w: &impl DeviceRead<T, S>,
    dy: &impl DeviceRead<T, S>,
    dx: &mut impl DeviceWrite<T, S>,
    dw: &mut impl DeviceWrite<T, S>,
    db: &mut impl DeviceWrite<T, S>,
    workspace: &mut impl DeviceWrite<f32, S>,
    rows: usize,
    cols: usize,
    opts: &LayerNormBwdOptions,
) -> Result<BwdLaunched, Error> {
    let ins = (x.read(stream), w.read(stream), dy.read(stream));
    let outs = (dx.write(stream), dw.write(stream), db.write(stream));
    let ws = workspace.write(stream);
    let (x, w, dy) = (ins.0.view, ins.1.view, ins.2.view);
    let (dx, dw, db) = (outs.0.view, outs.1.view, outs.2.view);
    let plan = layernorm_backward_plan::<T>(gpu, rows, cols, opts)?;
    let (r, c) = (rows as u32, cols as u32); // checked by the plan
    let inputs = [
        (x.arg("x"), Extent::Rows),
        (w.arg("w"), Extent::Row),
        (dy.arg("dy"), Extent::Rows),
    ];
    let outputs = [
        (dx.arg("dx"), Extent::Rows),
        (dw.arg("dw"), Extent::Row),
        (db.arg("db"), Extent::Row),
    ];
    let workspace_arg = ws.view.arg("workspace");
    check_bwd_buffers::<T>(
        rows,
        cols,
        &inputs,
        &outputs,
        workspace_arg,
        plan.workspace_len(),
    )?;

    let (rows_kernel, sums_kernel) = (
        gpu.kernel::<LayernormBwd<T>>()?,
        gpu.kernel::<LayernormDweight<T>>()?,
    );
    let main = Launched {
        kernel: LayernormBwd::<T>::info().name,
        config: plan.config(),
        choice: plan.describe::<T>().into(),
    };
    let sums_name = LayernormDweight::<T>::info().name;
    let sums = colsum_launch(sums_name, cols, plan.blocks, SUMS)?;
    // The workspace, or (one range) dw and db written by the rows' launch itself.
    let (partial, dw_itself, db_itself) = match sums {
        Some(_) => (ws.view.ptr, DevicePtr::null(), DevicePtr::null()),
        None => (DevicePtr::null(), dw.ptr, db.ptr),
    };
    let alone = u32::from(plan.alone_on_sm);
    let args = (
        x.ptr,
        w.ptr,
        dy.ptr,
        dx.ptr,
        partial,
        dw_itself,
        db_itself,
        r,
        c,
        plan.rows_per_block,
        opts.eps,
        alone,
    );
    let sums_args = (partial, dw.ptr, db.ptr, plan.blocks, c);
    // SAFETY: lengths cover the shape and the plan's workspace (16-byte aligned, as the
    // float4 stores need) where it has one; the outputs overlap no other buffer. The second
    // launch reads the workspace the first wrote, in stream order; both wait on the grid
    // dependency first.
    unsafe {
        let rows = main.launch_after_previous(&rows_kernel, stream, args)?;
        let sums = sums
            .map(|s| s.launch_after_previous(&sums_kernel, stream, sums_args))
            .transpose()?;
        Ok(BwdLaunched { rows, sums })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Bf16;

    #[test]
    fn kernel_constants_match_cuda_layernorm_cu() {
        let cu = include_str!("../../cuda/layernorm.cu");
        let pairs = [
            (FWD.resident_chunks, "kFwdChunks"),
            (FWD_RESIDUAL.resident_chunks, "kResidualChunks"),
            (BWD.resident_chunks, "kBwdChunks"),
            (FWD.max_threads, "kMaxThreads"),
            (FWD_RESIDUAL.max_threads, "kMaxThreads"),
            (BWD.max_threads, "kBwdMaxThreads"),
        ];
        for (rust, name) in pairs {
            assert_eq!(rust, crate::ops::rows::cu_constant(cu, name), "{name}");
        }
    }

    fn plan(max_threads: u32, cols: usize, blocks: u32, alone_on_sm: bool) -> LayerNormBwdPlan {
        let kernel = within_bound(&BWD, max_threads);
        let geometry = RowGeometry::select::<Bf16>(&kernel, cols, Threads::Auto).unwrap();
        LayerNormBwdPlan {
            geometry,
            kernel,
            blocks,
            rows_per_block: 32,
            smem_bytes: acc_smem_bytes::<Bf16>("k", cols, geometry.rows_per_block, SUMS).unwrap(),
            alone_on_sm,
            cols,
        }
    }

    #[test]
    fn a_backward_plan_launches_its_ranges_and_says_so() {
        let p = plan(512, 4096, 132, false);
        assert_eq!(p.config().grid, [132, 1, 1]);
        assert_eq!(p.config().block, [128, 1, 1]);
        // Two accumulators of (4096 / 8 + 1) * 8 floats.
        assert_eq!(p.config().dynamic_smem_bytes, 32832);
        // A dw and a db row per range.
        assert_eq!(p.workspace_len(), 132 * 2 * 4096);
        assert_eq!(
            p.describe::<Bf16>(),
            "threads_per_row=128 rows_per_block=1 rows_per_grid_block=32 walk=resident prefetch=none sums=partial_rows"
        );
        let wide = plan(512, 14336, 132, true);
        assert_eq!(wide.geometry.threads_per_row, 448);
        assert!(wide
            .describe::<Bf16>()
            .ends_with("walk=resident prefetch=next_row sums=partial_rows"));
        // One range writes dw and db itself: no workspace.
        let one = plan(512, 4096, 1, false);
        assert_eq!(one.workspace_len(), 0);
        assert!(one.describe::<Bf16>().ends_with("sums=direct"));
    }

    #[test]
    fn rows_past_a_resident_tile_stream_or_go_element_by_element() {
        // 512 threads x 4 chunks x 8 bf16: 16384 columns resident; the Blackwell build's 384
        // threads hold 12288.
        assert_eq!(plan(512, 16384, 1, true).walk::<Bf16>(), Walk::Resident);
        let long = plan(512, 16392, 1, true);
        assert_eq!(long.walk::<Bf16>(), Walk::Streamed);
        assert!(long.describe::<Bf16>().contains("walk=streamed"));
        let blackwell = plan(384, 14336, 1, true);
        assert_eq!(blackwell.geometry.threads_per_row, 384);
        assert_eq!(blackwell.walk::<Bf16>(), Walk::Streamed);
        assert!(blackwell.describe::<Bf16>().contains("walk=elementwise"));
    }
}
