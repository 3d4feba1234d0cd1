//! LayerNorm over the last dimension of row-major `[rows, cols]` tensors (`cuda/layernorm.cu`):
//! forward `y = (x - mean) * rstd * w + b` with `rstd = 1 / sqrt(var + eps)` and `var` the
//! biased variance `mean((x - mean)^2)`, the same with a fused residual add (`h = x +
//! residual` is written back as the residual and normalized), and the backward pass (dx; dw
//! and db summed over rows in a fixed order through an fp32 workspace). Any row length, any
//! alignment of the element buffers; bf16, f16 or f32 storage.
//!
//! The backward pass has two kernels: `layernorm_bwd` (a block per row group) and, on sm_90
//! cubins, `layernorm_bwd_cluster` for rows whose dw and db accumulators exceed a block's
//! shared memory (past 29 007 columns): the two CTAs of a thread-block cluster share each
//! row, one column half each ([`cluster_geometry`]). Elsewhere such rows are refused.
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
    acc_smem_bytes, bwd_geometry, bwd_walk_word, check_buffers, check_bwd_buffers,
    check_cluster_grid, check_eps, cluster_words, colsum_launch, dynamic_smem_limit,
    packed_geometry, range_config, ranges, row_groups_step_apart, split_rows, sums_words,
    whole_row_words, within_bound, Extent, Residual,
};
use super::norm_fwd::plan_fwd;
use super::rows::{check_rows_cols, RowGeometry, RowKernel, Walk};
use super::{rmsnorm, Launched, Threads};
use crate::kernels::{
    LayernormBwd, LayernormBwdCluster, LayernormDweight, LayernormFwd, LayernormFwdCluster,
    LayernormFwdResidual, LayernormFwdResidualCluster,
};
use crate::runtime::launchers::Dtype;
use crate::runtime::{DevicePtr, DeviceRead, DeviceView, DeviceWrite, StreamHandle};
use crate::runtime::{Error, Gpu, KernelSpec, LaunchConfig};

pub use super::norm::{
    half_cols, named_barriers, runs_clusters, BwdEntry, BwdLaunched, CLUSTER_CTAS,
};

/// The forward kernel, built as RMSNorm's: 8 resident chunks per thread, up to 1024 threads
/// per row; its warp walk holds 4 chunks a thread (x, w and b); its rows are not widened to the
/// short walk (slower at 16384 and 32768 rows of 2048 columns, run132).
pub const FWD: RowKernel = RowKernel {
    name: "layernorm_fwd",
    warp_chunks: 4,
    short_threads: 0,
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

/// The backward kernel whose rows are shared by the CTAs of a cluster, one column half each:
/// the whole-row kernel's walks (x and dy resident, 4 chunks each, or streamed) over half the
/// columns, up to 512 threads a CTA. Selected only on sm_90 cubins ([`cluster_geometry`]).
pub const BWD_CLUSTER: RowKernel = RowKernel {
    name: "layernorm_bwd_cluster",
    ..BWD
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
    pub entry: BwdEntry,
    /// Per block (for the cluster kernel: per CTA, over its half of the columns).
    pub geometry: RowGeometry,
    /// The backward kernel as loaded: its thread limit, and so its walks.
    pub kernel: RowKernel,
    /// Row ranges: blocks of the whole-row kernel, clusters of the cluster kernel (rows of
    /// the workspace).
    pub blocks: u32,
    /// Consecutive rows per range.
    pub rows_per_block: u32,
    /// Dynamic shared memory per block: the dw and db accumulators of its row groups (of the
    /// first, wider half of the columns for the cluster kernel).
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

    /// Columns of the row (or, for the cluster kernel, of its first, wider half) a block walks.
    fn span_cols<T>(&self) -> usize {
        match self.entry {
            BwdEntry::WholeRow => self.cols,
            BwdEntry::ClusterHalves => half_cols::<T>(self.cols),
        }
    }

    /// The walk of a row (a half, for the cluster kernel) whose tensors are 16-byte aligned
    /// (past a resident tile: streamed where [`bwd_streams`], else element by element).
    pub fn walk<T>(&self) -> Walk {
        self.geometry.walk::<T>(&self.kernel, self.span_cols::<T>())
    }

    /// The main kernel's launch: `ctas_per_row` CTAs per row range.
    pub fn config(&self) -> LaunchConfig {
        let ctas = self.blocks * self.entry.ctas_per_row();
        range_config(&self.geometry, ctas, self.smem_bytes)
    }

    /// The geometry in words, for the launch record (and so the STAMP line).
    pub fn describe<T>(&self) -> String {
        let streams = bwd_streams(&self.kernel);
        let walk = bwd_walk_word::<T>(&self.geometry, &self.kernel, self.span_cols::<T>(), streams);
        let words = match self.entry {
            BwdEntry::WholeRow => whole_row_words(&self.geometry, self.rows_per_block, walk),
            BwdEntry::ClusterHalves => cluster_words(&self.geometry, self.rows_per_block, walk),
        };
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

/// The cluster kernel's per-CTA geometry for rows of `cols`, where it takes them: automatic
/// threads and rows whose whole-row accumulators (`whole_smem_bytes`) exceed the
/// `max_dynamic_smem` a block may take, the fewest threads that keep a half resident (512 at
/// most: longer halves stream). `None`: the whole-row kernel keeps them. Only for routes that
/// [`runs_clusters`].
pub fn cluster_geometry<T>(
    threads: Threads,
    whole_smem_bytes: u32,
    max_dynamic_smem: u32,
    cols: usize,
) -> Option<RowGeometry> {
    if threads != Threads::Auto || whole_smem_bytes <= max_dynamic_smem {
        return None;
    }
    RowGeometry::select::<T>(&BWD_CLUSTER, half_cols::<T>(cols), Threads::Auto).ok()
}

/// Plans a backward launch of `rows x cols` on this GPU (for the workspace size), after
/// checking the shape and the options. Rows whose accumulators (8 bytes per column and row
/// group) exceed the GPU's shared memory per block take the cluster kernel where the route
/// runs it (automatic threads), and are refused elsewhere, as are halves past it.
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
    let route = gpu.route(name)?;
    let named = named_barriers(&route);
    let whole_kernel = within_bound(&BWD, limits.max_threads_per_block);
    let choice = (opts.threads, opts.blocks);
    let max_dynamic_smem = dynamic_smem_limit(gpu, limits.static_smem_bytes);
    let whole = packed_geometry::<T>(
        bwd_geometry::<T>(
            gpu,
            &whole_kernel,
            limits.static_smem_bytes,
            (rows, cols),
            choice,
            SUMS,
        )?,
        &whole_kernel,
        (rows, cols),
        choice,
        (SUMS, max_dynamic_smem),
        (gpu.device().sm_count, named),
    );
    let whole_smem = acc_smem_bytes::<T>(name, cols, whole.rows_per_block, SUMS)?;
    let cluster = match cluster_geometry::<T>(opts.threads, whole_smem, max_dynamic_smem, cols) {
        Some(g) if runs_clusters(&route) => Some(g),
        _ => None,
    };
    let (entry, geometry, kernel, smem_bytes) = match cluster {
        Some(g) => {
            let smem = acc_smem_bytes::<T>(name, half_cols::<T>(cols), g.rows_per_block, SUMS)?;
            (BwdEntry::ClusterHalves, g, BWD_CLUSTER, smem)
        }
        None => (BwdEntry::WholeRow, whole, whole_kernel, whole_smem),
    };
    // Asked even for a fixed block count: it decides the prefetch (which moves no bits).
    let per_sm = match entry {
        BwdEntry::WholeRow => function.max_active_blocks_per_sm(geometry.threads(), smem_bytes)?,
        BwdEntry::ClusterHalves => gpu
            .kernel::<LayernormBwdCluster<T>>()?
            .max_active_blocks_per_sm(geometry.threads(), smem_bytes)?,
    };
    let ranges = ranges(gpu, name, opts.blocks, (entry, &geometry), || Ok(per_sm))?;
    let (rows_per_block, blocks) = split_rows(rows, geometry.rows_per_block, ranges);
    Ok(LayerNormBwdPlan {
        entry,
        geometry,
        kernel,
        blocks,
        rows_per_block,
        smem_bytes,
        // The cluster kernel's CTAs never prefetch (cluster_half.cuh); row groups that step
        // apart overlap each other as blocks do.
        alone_on_sm: entry == BwdEntry::WholeRow
            && per_sm <= 1
            && !row_groups_step_apart(&geometry, named),
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

    let sums_kernel = gpu.kernel::<LayernormDweight<T>>()?;
    let main = Launched {
        kernel: match plan.entry {
            BwdEntry::WholeRow => LayernormBwd::<T>::info().name,
            BwdEntry::ClusterHalves => LayernormBwdCluster::<T>::info().name,
        },
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
    if plan.entry == BwdEntry::ClusterHalves {
        check_cluster_grid(main.kernel, &main.config)?;
    }
    let (x, w, dy, dx) = (x.ptr, w.ptr, dy.ptr, dx.ptr);
    let sums_args = (partial, dw.ptr, db.ptr, plan.blocks, c);
    // The rows' launch writes dw and db itself only where it is one range.
    let (dw, db, rows_per_range) = (dw_itself, db_itself, plan.rows_per_block);
    // SAFETY: lengths cover the shape and the plan's workspace (16-byte aligned, as the
    // float4 stores need) where it has one; the outputs overlap no other buffer; a cluster
    // launch is whole clusters (and plain: the cluster kernel does not wait on the grid
    // dependency). The second launch reads the workspace the first wrote, in stream order,
    // after the grid dependency.
    unsafe {
        let rows = match plan.entry {
            BwdEntry::WholeRow => {
                let alone = u32::from(plan.alone_on_sm);
                let args = (
                    x,
                    w,
                    dy,
                    dx,
                    partial,
                    dw,
                    db,
                    r,
                    c,
                    rows_per_range,
                    opts.eps,
                    alone,
                );
                main.launch_after_previous(&gpu.kernel::<LayernormBwd<T>>()?, stream, args)?
            }
            BwdEntry::ClusterHalves => {
                let args = (
                    x,
                    w,
                    dy,
                    dx,
                    partial,
                    dw,
                    db,
                    r,
                    c,
                    rows_per_range,
                    opts.eps,
                );
                gpu.kernel::<LayernormBwdCluster<T>>()?
                    .launch(stream, &main.config, args)?;
                main
            }
        };
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
            (BWD_CLUSTER.max_threads, "kBwdMaxThreads"),
            (CLUSTER_CTAS, "kClusterCtas"),
        ];
        for (rust, name) in pairs {
            assert_eq!(rust, crate::ops::rows::cu_constant(cu, name), "{name}");
        }
    }

    fn plan(max_threads: u32, cols: usize, blocks: u32, alone_on_sm: bool) -> LayerNormBwdPlan {
        let kernel = within_bound(&BWD, max_threads);
        let geometry = RowGeometry::select::<Bf16>(&kernel, cols, Threads::Auto).unwrap();
        LayerNormBwdPlan {
            entry: BwdEntry::WholeRow,
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

    #[test]
    fn rows_past_shared_memory_take_cluster_halves() {
        // sm_90: 227 KB a block, less the kernel's static shared memory.
        let max_dynamic = 227 * 1024 - 512;
        let whole = |cols| accumulator_bytes::<Bf16>(cols, 1);
        // 28 000 columns' dw and db fit a block: the whole-row kernel keeps them.
        assert!(
            cluster_geometry::<Bf16>(Threads::Auto, whole(28000), max_dynamic, 28000).is_none()
        );
        // 32 768: 262 KB. Halves of 16 384, resident in 512 threads (4 chunks each).
        let g = cluster_geometry::<Bf16>(Threads::Auto, whole(32768), max_dynamic, 32768).unwrap();
        assert_eq!(g.threads_per_row, 512);
        assert_eq!(
            g.walk::<Bf16>(&BWD_CLUSTER, half_cols::<Bf16>(32768)),
            Walk::Resident
        );
        // Fixed threads keep the whole-row kernel (and its refusal).
        let fixed = Threads::PerRow(512);
        assert!(cluster_geometry::<Bf16>(fixed, whole(32768), max_dynamic, 32768).is_none());
        let plan = LayerNormBwdPlan {
            entry: BwdEntry::ClusterHalves,
            geometry: g,
            kernel: BWD_CLUSTER,
            blocks: 66,
            rows_per_block: 2,
            smem_bytes: accumulator_bytes::<Bf16>(half_cols::<Bf16>(32768), 1),
            alone_on_sm: false,
            cols: 32768,
        };
        // Two CTAs per range; each holds the dw and db accumulators of its half.
        assert_eq!(plan.config().grid, [132, 1, 1]);
        assert_eq!(
            plan.config().dynamic_smem_bytes,
            2 * (16384 / 8 + 1) * 8 * 4
        );
        assert_eq!(plan.workspace_len(), 66 * 2 * 32768);
        assert_eq!(
            plan.describe::<Bf16>(),
            "threads_per_cta=512 ctas_per_row=2 rows_per_cluster=2 walk=resident prefetch=none sums=partial_rows"
        );
        // f32 halves of 16 384 stream (512 threads x 4 chunks hold 8192).
        let f32_half =
            RowGeometry::select::<f32>(&BWD_CLUSTER, half_cols::<f32>(32768), Threads::Auto)
                .unwrap();
        assert_eq!(
            f32_half.walk::<f32>(&BWD_CLUSTER, half_cols::<f32>(32768)),
            Walk::Streamed
        );
    }
}
