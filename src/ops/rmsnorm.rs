//! RMSNorm over the last dimension of row-major `[rows, cols]` tensors (`cuda/rmsnorm.cu`):
//! forward `y = x * rstd * w` with `rstd = 1 / sqrt(mean(x^2) + eps)`, the same with a fused
//! residual add (`h = x + residual` is written back as the residual and normalized), and the
//! backward pass (dx, and dw summed over rows in a fixed order: through an fp32 workspace
//! where several row ranges share it, directly where one block or cluster takes every row).
//! Any row length, any alignment of the element buffers; bf16, f16 or f32 storage.
//!
//! The backward pass has two kernels: `rmsnorm_bwd` (a block per row group) and, on sm_90
//! cubins, `rmsnorm_bwd_cluster` for rows whose block would hold an SM alone: the two CTAs
//! of a thread-block cluster share each row, one column half each ([`cluster_geometry`]).
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::rmsnorm::{rmsnorm, RmsNormOptions};
//! use cubins::runtime::{Bf16, Gpu};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let (rows, cols) = (8, 4096);
//! let x = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! let w = DeviceBuffer::from_slice(&vec![Bf16::default(); cols])?;
//! let mut y = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! let launched = rmsnorm(&gpu, &stream, &x, &w, &mut y, rows, cols, &RmsNormOptions::default())?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?); // STAMP kernel=rmsnorm_fwd_bf16 ... grid=... block=...
//! # Ok(()) }
//! ```

use super::norm::{
    acc_bytes, acc_smem_bytes, bwd_geometry, bwd_walk_word, check_buffers, check_bwd_buffers,
    check_eps, cluster_words, colsum_launch, dynamic_smem_limit, named_barriers, packed_geometry,
    range_config, ranges, split_rows, sums_words, whole_row_words, within_bound, Extent, Residual,
};
use super::norm_fwd::plan_fwd;
use super::rows::{
    check_rows_cols, RowGeometry, RowKernel, Walk, SPREAD_BLOCK_THREADS, SPREAD_CHUNK_THREADS,
    SPREAD_THREADS_PER_SM, WAVE_SPREAD_THREADS_PER_SM,
};
use super::{Launched, Threads};
use crate::kernels::{
    RmsnormBwd, RmsnormBwdCluster, RmsnormDweight, RmsnormFwd, RmsnormFwdCluster,
    RmsnormFwdResidual, RmsnormFwdResidualCluster,
};
use crate::runtime::launchers::Dtype;
use crate::runtime::{DevicePtr, DeviceRead, DeviceView, DeviceWrite, StreamHandle};
use crate::runtime::{Error, Gpu, KernelSpec, LaunchConfig};

pub use super::norm::{
    check_cluster_grid, half_cols, runs_clusters, BwdEntry, BwdLaunched, CLUSTER_CTAS,
};
pub use super::norm_fwd::{fwd_cluster_geometry, fwd_row_geometry, warp_chunks, FWD_CLUSTER_CTAS};

/// The forward kernel: 8 resident chunks per thread, up to 1024 threads per row, rows spread
/// over up to a wave of threads; 16-bit rows of up to 32 threads of 6 chunks take the warp walk,
/// and other 16-bit rows widen to the short walk's 2 chunks a thread up to 128 threads
/// (`ops::norm_fwd::fwd_row_geometry`).
pub const FWD: RowKernel = RowKernel {
    name: "rmsnorm_fwd",
    resident_chunks: 8,
    max_threads: 1024,
    spread_threads_per_sm: WAVE_SPREAD_THREADS_PER_SM,
    warp_chunks: 6,
    short_threads: 128,
    spread_block_threads: SPREAD_BLOCK_THREADS,
};
/// The forward kernel with the residual add (8 resident chunks; x and the residual loaded
/// 2 chunks at a time; no warp walk; 16-bit rows widen to the short walk up to 192 threads).
pub const FWD_RESIDUAL: RowKernel = RowKernel {
    name: "rmsnorm_fwd_residual",
    warp_chunks: 0,
    short_threads: 192,
    ..FWD
};
/// The backward kernel (x and dy resident, 4 chunks each; up to 1024 threads per row where
/// the cubin's `__launch_bounds__` allow it: sm_90. Builds for older arches take 512 and
/// stream longer rows; see `bwd_kernel`). Few rows spread over a chunk a thread up to 256
/// threads.
pub const BWD: RowKernel = RowKernel {
    name: "rmsnorm_bwd",
    resident_chunks: 4,
    max_threads: 1024,
    spread_threads_per_sm: SPREAD_THREADS_PER_SM,
    warp_chunks: 0,
    short_threads: 0,
    spread_block_threads: SPREAD_CHUNK_THREADS,
};

/// The backward kernel whose rows are shared by the CTAs of a cluster: each CTA takes one
/// column half of each row, x and dy resident (4 chunks each), up to 512 threads, built for 2
/// CTAs per SM at 64 registers. Selected only on sm_90 cubins ([`cluster_geometry`]).
pub const BWD_CLUSTER: RowKernel = RowKernel {
    name: "rmsnorm_bwd_cluster",
    resident_chunks: 4,
    max_threads: 512,
    spread_threads_per_sm: SPREAD_THREADS_PER_SM,
    warp_chunks: 0,
    short_threads: 0,
    spread_block_threads: SPREAD_BLOCK_THREADS,
};

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

/// `y = rmsnorm(x) * w` over rows of `cols`: x and y hold `rows * cols` elements, w `cols`.
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    w: &impl DeviceRead<T, S>,
    y: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (x.read(stream), w.read(stream), y.write(stream));
    let (x, w, y) = (held.0.view, held.1.view, held.2.view);
    let plan = plan_fwd::<T, RmsnormFwd<T>, RmsnormFwdCluster<T>>(
        gpu,
        &FWD,
        rows,
        cols,
        opts.threads,
        opts.eps,
    )?;
    let inputs = [(x.arg("x"), Extent::Rows), (w.arg("w"), Extent::Row)];
    check_buffers::<T>(rows, cols, &inputs, &[(y.arg("y"), Extent::Rows)])?;
    let (r, c) = (plan.rows, plan.cols);
    // SAFETY: the lengths cover rows * cols (x, y) and cols (w) elements, y overlaps
    // neither input; either kernel touches exactly those elements (the whole-row one after
    // the grid dependency).
    unsafe { plan.launch(gpu, stream, (x.ptr, w.ptr, y.ptr, r, c, opts.eps)) }
}

/// The fused residual add, in place: `residual += x` (rounded to the storage type), then
/// `y = rmsnorm(residual) * w` of the updated residual.
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm_residual<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    residual: &mut impl DeviceWrite<T, S>,
    w: &impl DeviceRead<T, S>,
    y: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (
        x.read(stream),
        w.read(stream),
        residual.write(stream),
        y.write(stream),
    );
    let (x, w, residual, y) = (held.0.view, held.1.view, held.2.view, held.3.view);
    let residual = Residual::in_place(&residual);
    residual_launch(gpu, stream, x, residual, w, y, rows, cols, opts)
}

/// The fused residual add into a separate buffer: `residual_out = residual_in + x`, then
/// `y = rmsnorm(residual_out) * w`.
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm_residual_into<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    residual_in: &impl DeviceRead<T, S>,
    residual_out: &mut impl DeviceWrite<T, S>,
    w: &impl DeviceRead<T, S>,
    y: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (
        x.read(stream),
        residual_in.read(stream),
        w.read(stream),
        residual_out.write(stream),
        y.write(stream),
    );
    let (x, residual_in, w, residual_out, y) = (
        held.0.view,
        held.1.view,
        held.2.view,
        held.3.view,
        held.4.view,
    );
    let residual = Residual::into(&residual_in, &residual_out);
    residual_launch(gpu, stream, x, residual, w, y, rows, cols, opts)
}

#[allow(clippy::too_many_arguments)]
fn residual_launch<T: Dtype>(
    gpu: &Gpu,
    stream: &impl StreamHandle,
    x: DeviceView<T>,
    residual: Residual<T>,
    w: DeviceView<T>,
    y: DeviceView<T>,
    rows: usize,
    cols: usize,
    opts: &RmsNormOptions,
) -> Result<Launched, Error> {
    let plan = plan_fwd::<T, RmsnormFwdResidual<T>, RmsnormFwdResidualCluster<T>>(
        gpu,
        &FWD_RESIDUAL,
        rows,
        cols,
        opts.threads,
        opts.eps,
    )?;
    let inputs = [(x.arg("x"), Extent::Rows), (w.arg("w"), Extent::Row)];
    residual.check(rows, cols, &inputs, y.arg("y"))?;
    let (rin, rout) = residual.ptrs;
    let (r, c) = (plan.rows, plan.cols);
    // SAFETY: lengths cover the shape; y and the written residual overlap no other buffer
    // (residual_in may be residual_out: each element is read, then written, by one thread);
    // the whole-row kernel waits on the grid dependency first.
    unsafe {
        plan.launch(
            gpu,
            stream,
            (x.ptr, rin, rout, w.ptr, y.ptr, r, c, opts.eps),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RmsNormBwdOptions {
    pub eps: f32,
    /// `Auto` lets the plan take the cluster kernel where it applies; a fixed count keeps
    /// the whole-row kernel at that many threads per row.
    pub threads: Threads,
    /// Row ranges = rows of the dw workspace: blocks of the whole-row kernel, clusters of the
    /// cluster kernel. `None`: one wave of them on this GPU (its SM count times the kernel's
    /// occupancy, divided by the CTAs that share a row), at most one per row. The dw bits
    /// depend on it (it fixes the summation order): fix it for digests that must hold across
    /// GPUs.
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

/// A backward entry's kernel for `T`: `rmsnorm_bwd_bf16`, `rmsnorm_bwd_cluster_bf16`.
fn entry_name<T: Dtype>(entry: BwdEntry) -> &'static str {
    match entry {
        BwdEntry::WholeRow => RmsnormBwd::<T>::info().name,
        BwdEntry::ClusterHalves => RmsnormBwdCluster::<T>::info().name,
    }
}

/// How a backward launch splits the rows: what the workspace must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RmsNormBwdPlan {
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
    /// Dynamic shared memory per block: the dw accumulators of `rows_per_block` row groups
    /// (of the first, wider half of the columns for the cluster kernel).
    pub smem_bytes: u32,
    pub cols: usize,
}

impl RmsNormBwdPlan {
    /// Workspace length in f32 elements: one row of round_up(cols, 4) per row range.
    pub fn workspace_len(&self) -> usize {
        super::norm::workspace_len(self.blocks, 1, self.cols)
    }

    /// The walk of a row whose tensors are 16-byte aligned, in words: `cluster2` for the
    /// cluster kernel (whose halves are resident).
    pub fn walk<T>(&self) -> &'static str {
        if self.entry == BwdEntry::ClusterHalves {
            return "cluster2";
        }
        let streams = bwd_streams(&self.kernel);
        bwd_walk_word::<T>(&self.geometry, &self.kernel, self.cols, streams)
    }

    /// The main kernel's launch: `ctas_per_row` CTAs per row range.
    pub fn config(&self) -> LaunchConfig {
        let ctas = self.blocks * self.entry.ctas_per_row();
        range_config(&self.geometry, ctas, self.smem_bytes)
    }

    /// The geometry in words, for the launch record (and so the STAMP line).
    pub fn describe<T>(&self) -> String {
        let words = match self.entry {
            BwdEntry::WholeRow => {
                whole_row_words(&self.geometry, self.rows_per_block, self.walk::<T>())
            }
            BwdEntry::ClusterHalves => {
                cluster_words(&self.geometry, self.rows_per_block, self.walk::<T>())
            }
        };
        format!("{words} {}", sums_words(self.blocks))
    }
}

/// The backward kernel with the thread limit of the loaded cubin (`max_threads_per_block`:
/// 1024 on sm_90, 512 on older arches and the PTX fallback).
fn bwd_kernel(max_threads_per_block: u32) -> RowKernel {
    within_bound(&BWD, max_threads_per_block)
}

/// Whether the loaded backward kernel streams rows longer than a resident tile. Only the
/// 512-thread builds do (`kBwdStreams` in cuda/rmsnorm.cu); the 1024-thread build's register
/// budget leaves no room for the streamed walk, so those rows go element by element.
fn bwd_streams(kernel: &RowKernel) -> bool {
    kernel.max_threads < BWD.max_threads
}

/// Dynamic shared memory the backward kernel takes for `row_groups` rows of `cols` columns
/// (their dw accumulators), saturating at `u32::MAX`.
pub fn accumulator_bytes<T>(cols: usize, row_groups: u32) -> u32 {
    u32::try_from(acc_bytes::<T>(cols) * u64::from(row_groups)).unwrap_or(u32::MAX)
}

/// The cluster kernel's per-CTA geometry for rows of `cols`, where it takes them: automatic
/// threads, a whole-row block that would hold its SM alone (`whole_blocks_per_sm == 1`:
/// nothing overlaps its reduction and writes but its own prefetch), and halves that stay
/// resident in [`BWD_CLUSTER`]'s threads (bf16 and f16 rows of 16392 to 32768 columns on
/// sm_90, f32 rows of 8196 to 16384). `None`: the whole-row kernel keeps them. Only for
/// routes that [`runs_clusters`].
pub fn cluster_geometry<T>(
    threads: Threads,
    whole_blocks_per_sm: u32,
    cols: usize,
) -> Option<RowGeometry> {
    if threads != Threads::Auto || whole_blocks_per_sm != 1 {
        return None;
    }
    let half = half_cols::<T>(cols);
    let g = RowGeometry::select::<T>(&BWD_CLUSTER, half, Threads::Auto).ok()?;
    (g.walk::<T>(&BWD_CLUSTER, half) == Walk::Resident).then_some(g)
}

/// Plans a backward launch of `rows x cols` on this GPU (for the workspace size).
pub fn rmsnorm_backward_plan<T: Dtype>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    opts: &RmsNormBwdOptions,
) -> Result<RmsNormBwdPlan, Error> {
    let name = entry_name::<T>(BwdEntry::WholeRow);
    check_rows_cols(name, rows, cols)?;
    let limits = gpu.kernel::<RmsnormBwd<T>>()?.limits();
    let route = gpu.route(name)?;
    let kernel = bwd_kernel(limits.max_threads_per_block);
    let choice = (opts.threads, opts.blocks);
    let whole = bwd_geometry::<T>(
        gpu,
        &kernel,
        limits.static_smem_bytes,
        (rows, cols),
        choice,
        1,
    )?;
    let whole_smem = acc_smem_bytes::<T>(name, cols, whole.rows_per_block, 1)?;
    // Whether a whole-row block would hold its SM alone is asked of the driver only where
    // the answer matters.
    let cluster_if_alone =
        |whole_blocks_per_sm| cluster_geometry::<T>(opts.threads, whole_blocks_per_sm, cols);
    let cluster = if cluster_if_alone(1).is_some() && runs_clusters(&route) {
        cluster_if_alone(resident_blocks::<T>(
            gpu,
            BwdEntry::WholeRow,
            whole.threads(),
            whole_smem,
        )?)
    } else {
        None
    };
    let (entry, geometry, kernel, smem_bytes) = match cluster {
        Some(g) => {
            let smem = acc_smem_bytes::<T>(name, half_cols::<T>(cols), g.rows_per_block, 1)?;
            (BwdEntry::ClusterHalves, g, BWD_CLUSTER, smem)
        }
        None => {
            // Packed after the cluster choice, which asks whether one row group a block
            // would hold its SM alone.
            let packed = packed_geometry::<T>(
                whole,
                &kernel,
                (rows, cols),
                choice,
                (1, dynamic_smem_limit(gpu, limits.static_smem_bytes)),
                (gpu.device().sm_count, named_barriers(&route)),
            );
            let smem = acc_smem_bytes::<T>(name, cols, packed.rows_per_block, 1)?;
            (BwdEntry::WholeRow, packed, kernel, smem)
        }
    };
    let ranges = ranges(gpu, name, opts.blocks, (entry, &geometry), || {
        resident_blocks::<T>(gpu, entry, geometry.threads(), smem_bytes)
    })?;
    let (rows_per_block, blocks) = split_rows(rows, geometry.rows_per_block, ranges);
    Ok(RmsNormBwdPlan {
        entry,
        geometry,
        kernel,
        blocks,
        rows_per_block,
        smem_bytes,
        cols,
    })
}

/// Resident blocks per SM of a backward kernel at this block size and shared memory (the
/// driver's occupancy calculator, with the function's limit already raised), at least 1.
fn resident_blocks<T: Dtype>(
    gpu: &Gpu,
    entry: BwdEntry,
    threads: u32,
    smem_bytes: u32,
) -> Result<u32, Error> {
    let blocks = match entry {
        BwdEntry::WholeRow => gpu
            .kernel::<RmsnormBwd<T>>()?
            .max_active_blocks_per_sm(threads, smem_bytes)?,
        BwdEntry::ClusterHalves => gpu
            .kernel::<RmsnormBwdCluster<T>>()?
            .max_active_blocks_per_sm(threads, smem_bytes)?,
    };
    Ok(blocks.max(1))
}

/// The backward pass: dx (`rows * cols`) and dw (`cols`) from x, w and dy. `workspace`
/// holds at least [`RmsNormBwdPlan::workspace_len`] floats (16-byte aligned) of the plan
/// [`rmsnorm_backward_plan`] makes with the same options. Two launches where several row
/// ranges share the rows: the rows, then the fixed-order sum of the per-range dw rows. One
/// where one range takes every row: it writes dw itself ([`BwdLaunched::sums`] is `None`;
/// the plan's workspace length is 0).
#[allow(clippy::too_many_arguments)]
pub fn rmsnorm_backward<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    x: &impl DeviceRead<T, S>,
    w: &impl DeviceRead<T, S>,
    dy: &impl DeviceRead<T, S>,
    dx: &mut impl DeviceWrite<T, S>,
    dw: &mut impl DeviceWrite<T, S>,
    workspace: &mut impl DeviceWrite<f32, S>,
    rows: usize,
    cols: usize,
    opts: &RmsNormBwdOptions,
) -> Result<BwdLaunched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (
        x.read(stream),
        w.read(stream),
        dy.read(stream),
        dx.write(stream),
        dw.write(stream),
        workspace.write(stream),
    );
    let (x, w, dy, dx, dw, workspace) = (
        held.0.view,
        held.1.view,
        held.2.view,
        held.3.view,
        held.4.view,
        held.5.view,
    );
    let name = entry_name::<T>(BwdEntry::WholeRow);
    let dw_name = RmsnormDweight::<T>::info().name;
    let (r, c) = check_rows_cols(name, rows, cols)?;
    check_eps(name, opts.eps)?;
    let plan = rmsnorm_backward_plan::<T>(gpu, rows, cols, opts)?;
    let inputs = [
        (x.arg("x"), Extent::Rows),
        (w.arg("w"), Extent::Row),
        (dy.arg("dy"), Extent::Rows),
    ];
    let outputs = [(dx.arg("dx"), Extent::Rows), (dw.arg("dw"), Extent::Row)];
    let ws = workspace.arg("workspace");
    check_bwd_buffers::<T>(rows, cols, &inputs, &outputs, ws, plan.workspace_len())?;

    let main = Launched {
        kernel: entry_name::<T>(plan.entry),
        config: plan.config(),
        choice: plan.describe::<T>().into(),
    };
    let reduce = colsum_launch(dw_name, cols, plan.blocks, 1)?;
    // The workspace, or (one range) dw written by the rows' launch itself.
    let (partial, dw_itself) = match reduce {
        Some(_) => (workspace.ptr, DevicePtr::null()),
        None => (DevicePtr::null(), dw.ptr),
    };
    let (x, w, dy, dx) = (x.ptr, w.ptr, dy.ptr, dx.ptr);
    let args = (
        x,
        w,
        dy,
        dx,
        partial,
        dw_itself,
        r,
        c,
        plan.rows_per_block,
        opts.eps,
    );
    if plan.entry == BwdEntry::ClusterHalves {
        check_cluster_grid(main.kernel, &main.config)?;
    }
    // Both kernels found before either launches.
    let dweight = gpu.kernel::<RmsnormDweight<T>>()?;
    // SAFETY: lengths cover the shape and the plan's workspace (16-byte aligned, as the
    // float4 stores need) where it has one; the outputs overlap no other buffer; a cluster
    // launch is whole clusters (and plain: a cluster launch of its own). The second launch
    // reads the workspace the first wrote, in stream order, after the grid dependency.
    unsafe {
        let rows = match plan.entry {
            BwdEntry::WholeRow => {
                main.launch_after_previous(&gpu.kernel::<RmsnormBwd<T>>()?, stream, args)?
            }
            BwdEntry::ClusterHalves => {
                gpu.kernel::<RmsnormBwdCluster<T>>()?
                    .launch(stream, &main.config, args)?;
                main
            }
        };
        let sums_args = (partial, dw.ptr, plan.blocks, c);
        let sums = reduce
            .map(|r| r.launch_after_previous(&dweight, stream, sums_args))
            .transpose()?;
        Ok(BwdLaunched { rows, sums })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rows::cu_constant;
    use crate::runtime::{ArtifactKind, Bf16, LaunchError, Route};

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
        assert_eq!(BWD_CLUSTER.resident_chunks, cu_constant(cu, "kBwdChunks"));
        assert_eq!(BWD_CLUSTER.max_threads, cu_constant(cu, "kClusterThreads"));
        assert_eq!(CLUSTER_CTAS, cu_constant(cu, "kClusterCtas"));
    }

    fn route(kind: ArtifactKind, arch: &'static str, code_cc: u32) -> Route {
        Route {
            kernel: "rmsnorm_bwd_bf16",
            file: "rmsnorm",
            kind,
            arch,
            code_cc,
            sha256: "",
            toolkit: "13.0.88",
            origin: crate::registry::Origin::Nvcc,
            device: crate::runtime::DeviceId {
                name: "NVIDIA H200".into(),
                cc: 90,
            },
            policy: crate::runtime::RoutePolicy::Auto,
        }
    }

    #[test]
    fn only_sm_90_cubins_run_the_cluster_kernel() {
        use ArtifactKind::{Cubin, PtxJit};
        assert!(runs_clusters(&route(Cubin, "sm_90", 90)));
        assert!(runs_clusters(&route(Cubin, "sm_90a", 90)));
        assert!(!runs_clusters(&route(PtxJit, "compute_80", 80)));
        assert!(!runs_clusters(&route(PtxJit, "compute_90", 90)));
        let others = [
            ("sm_80", 80),
            ("sm_86", 86),
            ("sm_89", 89),
            ("sm_100", 100),
            ("sm_120", 120),
        ];
        for (arch, cc) in others {
            assert!(!runs_clusters(&route(Cubin, arch, cc)), "{arch}");
        }
    }

    #[test]
    fn the_cluster_kernel_takes_rows_whose_block_would_hold_an_sm_alone() {
        let take = |threads, alone, cols| {
            cluster_geometry::<Bf16>(threads, alone, cols).map(|g| g.threads_per_row)
        };
        // 32768 bf16 columns: a 1024-thread block holds the SM alone; two CTAs of 512.
        assert_eq!(take(Threads::Auto, 1, 32768), Some(512));
        // 20000: 640 threads alone; halves of 10000 columns, 313 -> 320 threads.
        assert_eq!(take(Threads::Auto, 1, 20000), Some(320));
        assert_eq!(take(Threads::Auto, 1, 16392), Some(288));
        // Two blocks share the SM (16384 columns, 512 threads): the whole-row kernel.
        assert_eq!(take(Threads::Auto, 2, 16384), None);
        // A fixed thread count keeps the whole-row kernel.
        assert_eq!(take(Threads::PerRow(1024), 1, 32768), None);
        // Halves past 512 x 4 chunks would not stay resident.
        assert_eq!(take(Threads::Auto, 1, 32776), None);
        assert_eq!(take(Threads::Auto, 1, 65536), None);
        // f32: 16384 columns fill 1024 threads; halves of 8192 take 512.
        let f32_take = cluster_geometry::<f32>(Threads::Auto, 1, 16384).unwrap();
        assert_eq!(
            (f32_take.threads_per_row, f32_take.rows_per_block),
            (512, 1)
        );
        assert_eq!(
            cluster_geometry::<f32>(Threads::Auto, 1, 12000).map(|g| g.threads_per_row),
            Some(384)
        );
    }

    #[test]
    fn halves_split_on_whole_chunks() {
        assert_eq!(half_cols::<Bf16>(32768), 16384);
        // 2500 whole chunks and a tail of one column: 1250 chunks each, the tail second.
        assert_eq!(half_cols::<Bf16>(20001), 10000);
        // An odd chunk count: the first half takes the extra chunk.
        assert_eq!(half_cols::<Bf16>(16392), 8200);
        assert_eq!(half_cols::<f32>(16383), 8192);
        // Each half's accumulators fit the first half's shared memory.
        for cols in [16392, 20001, 32767, 32768] {
            let first = half_cols::<Bf16>(cols);
            assert!(
                acc_bytes::<Bf16>(cols - first) <= acc_bytes::<Bf16>(first),
                "{cols}"
            );
        }
    }

    #[test]
    fn a_cluster_launch_needs_whole_clusters() {
        let config = |blocks| LaunchConfig {
            grid: [blocks, 1, 1],
            block: [512, 1, 1],
            dynamic_smem_bytes: 65568,
            programmatic_dependent: false,
        };
        assert!(check_cluster_grid("rmsnorm_bwd_cluster_bf16", &config(264)).is_ok());
        let e = check_cluster_grid("rmsnorm_bwd_cluster_bf16", &config(263)).unwrap_err();
        assert!(
            matches!(e, Error::Launch(LaunchError::Geometry { .. })),
            "{e:?}"
        );
        assert!(e.to_string().contains("whole clusters of 2 CTAs"), "{e}");
    }

    #[test]
    fn a_cluster_plan_launches_two_ctas_per_row_range_and_says_so() {
        let plan = RmsNormBwdPlan {
            entry: BwdEntry::ClusterHalves,
            geometry: cluster_geometry::<Bf16>(Threads::Auto, 1, 32768).unwrap(),
            kernel: BWD_CLUSTER,
            blocks: 128,
            rows_per_block: 32,
            smem_bytes: acc_bytes::<Bf16>(16384) as u32,
            cols: 32768,
        };
        assert_eq!(plan.config().grid, [256, 1, 1]);
        assert_eq!(plan.config().block, [512, 1, 1]);
        assert_eq!(plan.config().dynamic_smem_bytes, 65568);
        // One workspace row per cluster, both halves' columns.
        assert_eq!(plan.workspace_len(), 128 * 32768);
        assert_eq!(
            plan.describe::<Bf16>(),
            "threads_per_cta=512 ctas_per_row=2 rows_per_cluster=32 walk=cluster2 sums=partial_rows"
        );
        let whole = RmsNormBwdPlan {
            entry: BwdEntry::WholeRow,
            geometry: RowGeometry::select::<Bf16>(&bwd_kernel(1024), 32768, Threads::Auto).unwrap(),
            kernel: bwd_kernel(1024),
            blocks: 132,
            rows_per_block: 32,
            smem_bytes: acc_bytes::<Bf16>(32768) as u32,
            cols: 32768,
        };
        assert_eq!(whole.config().grid, [132, 1, 1]);
        assert_eq!(
            whole.describe::<Bf16>(),
            "threads_per_row=1024 rows_per_block=1 rows_per_grid_block=32 walk=resident sums=partial_rows"
        );
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
}
