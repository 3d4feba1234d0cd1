//! What the normalizations (`rmsnorm`, `layernorm`) share on the host: the eps and buffer
//! checks, and the backward's row ranges, column-sum accumulators, workspace and the
//! launch of the fixed-order sum of its partial rows (`cuda/include/cubins/colsum.cuh`).

use super::rows::{
    check_disjoint, chunk_elems, shape_error, tensor_bytes, RowGeometry, RowKernel, Threads, Walk,
};
use super::Launched;
use crate::runtime::{ArtifactKind, Route};
use crate::runtime::{BufferArg, DevicePtr, DeviceView, Error, Gpu, LaunchConfig, LaunchError};

/// Whether a route runs the cluster kernels (the forward norms' `*_cluster` entry points,
/// `rmsnorm_bwd_cluster`, `layernorm_bwd_cluster`): an sm_90 or sm_90a cubin, the only builds with their bodies (tuned
/// to sm_90's budgets). The PTX JIT and every other cubin carry stubs that trap.
pub fn runs_clusters(route: &Route) -> bool {
    route.kind == ArtifactKind::Cubin && route.code_cc == 90
}

/// Which backward kernel a plan launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BwdEntry {
    /// `*_bwd`: a block takes whole rows.
    WholeRow,
    /// `*_bwd_cluster`: the [`CLUSTER_CTAS`] CTAs of a cluster share each row, one column half
    /// each, and exchange their row sums through distributed shared memory
    /// (`cuda/include/cubins/cluster_half.cuh`).
    ClusterHalves,
}

impl BwdEntry {
    /// CTAs that share each row.
    pub fn ctas_per_row(self) -> u32 {
        match self {
            BwdEntry::WholeRow => 1,
            BwdEntry::ClusterHalves => CLUSTER_CTAS,
        }
    }
}

/// CTAs per cluster of the backward cluster kernels (their `__cluster_dims__`), one column
/// half of a row each.
pub const CLUSTER_CTAS: u32 = 2;

/// Columns of a row's first half (cluster_half.cuh `ClusterHalf::half_cols`): the first
/// ceil(chunks / 2) whole 16-byte chunks. The second half, the rest, is no wider.
pub fn half_cols<T>(cols: usize) -> usize {
    let vec = chunk_elems::<T>() as usize;
    (cols / vec).div_ceil(2) * vec
}

/// A launch of a cluster kernel must be whole clusters: a plain `cuLaunchKernel` takes the
/// cluster shape from the cubin and fails on a grid that is not a multiple of it.
pub fn check_cluster_grid(kernel: &'static str, config: &LaunchConfig) -> Result<(), Error> {
    if config.grid[0] % CLUSTER_CTAS == 0 {
        return Ok(());
    }
    Err(LaunchError::Geometry {
        kernel,
        requirement: "whole clusters of 2 CTAs (an even grid.x)",
        config: *config,
    }
    .into())
}

/// A cluster backward's geometry words for its launch record (and so the STAMP line).
pub(crate) fn cluster_words(geometry: &RowGeometry, rows_per_cluster: u32, walk: &str) -> String {
    format!(
        "threads_per_cta={} ctas_per_row={CLUSTER_CTAS} rows_per_cluster={rows_per_cluster} walk={walk}",
        geometry.threads_per_row,
    )
}

/// The partial-row sum kernel (`sum_partial_rows`): 512 threads, 128 columns per block.
pub(crate) const DWEIGHT_THREADS: u32 = 512;
const DWEIGHT_COLS_PER_BLOCK: usize = 128;

pub(crate) fn check_eps(kernel: &'static str, eps: f32) -> Result<(), Error> {
    if eps.is_finite() && eps >= 0.0 {
        Ok(())
    } else {
        Err(shape_error(kernel, "a finite, non-negative eps"))
    }
}

/// How much of a buffer a normalization touches: every row, or one row's worth (a weight).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extent {
    Rows,
    Row,
}

/// Lengths of the inputs, then of the outputs, against `rows x cols`, then each output
/// against every other buffer (the kernels declare them `__restrict__`).
pub(crate) fn check_buffers<T>(
    rows: usize,
    cols: usize,
    inputs: &[(BufferArg, Extent)],
    outputs: &[(BufferArg, Extent)],
) -> Result<(), Error> {
    for (b, extent) in inputs.iter().chain(outputs) {
        let rows = if *extent == Extent::Rows { rows } else { 1 };
        b.at_least(tensor_bytes::<T>(rows, cols))?;
    }
    let args = |bs: &[(BufferArg, Extent)]| bs.iter().map(|b| b.0).collect::<Vec<_>>();
    check_disjoint(&args(outputs), &args(inputs))?;
    Ok(())
}

/// A residual forward's residual buffers: the one it reads where that is not the one it
/// writes (the `_into` variants), the one it writes, and the (in, out) pointers the kernel
/// takes (the same pointer twice in place: each element is read, then written, by one
/// thread).
pub(crate) struct Residual<T> {
    read: Option<BufferArg>,
    written: BufferArg,
    pub ptrs: (DevicePtr<T>, DevicePtr<T>),
}

impl<T> Residual<T> {
    pub fn in_place(residual: &DeviceView<T>) -> Self {
        Residual {
            read: None,
            written: residual.arg("residual"),
            ptrs: (residual.ptr, residual.ptr),
        }
    }

    pub fn into(residual_in: &DeviceView<T>, residual_out: &DeviceView<T>) -> Self {
        Residual {
            read: Some(residual_in.arg("residual_in")),
            written: residual_out.arg("residual_out"),
            ptrs: (residual_in.ptr, residual_out.ptr),
        }
    }

    /// [`check_buffers`] of the forward's `inputs` (x and its weight rows), the residual and
    /// `y`.
    pub fn check(
        &self,
        rows: usize,
        cols: usize,
        inputs: &[(BufferArg, Extent)],
        y: BufferArg,
    ) -> Result<(), Error> {
        let mut all = inputs.to_vec();
        all.extend(self.read.map(|b| (b, Extent::Rows)));
        let outputs = [(y, Extent::Rows), (self.written, Extent::Rows)];
        check_buffers::<T>(rows, cols, &all, &outputs)
    }
}

/// A backward kernel as loaded: its thread limit is the cubin's `max_threads_per_block`
/// where that is lower (arches build for fewer threads, and walk their rows otherwise).
pub(crate) fn within_bound(kernel: &RowKernel, max_threads_per_block: u32) -> RowKernel {
    RowKernel {
        max_threads: kernel.max_threads.min(max_threads_per_block),
        ..*kernel
    }
}

/// One column-sum accumulator of one row group (`DwAcc::floats` in colsum.cuh), bytes.
pub(crate) fn acc_bytes<T>(cols: usize) -> u64 {
    let vec = chunk_elems::<T>() as u64;
    ((cols as u64) / vec + 1) * vec * 4
}

/// Dynamic shared memory of `sums` accumulators for each of `row_groups` rows of `cols`
/// columns, within a `u32`.
pub(crate) fn acc_smem_bytes<T>(
    kernel: &'static str,
    cols: usize,
    row_groups: u32,
    sums: u32,
) -> Result<u32, Error> {
    u32::try_from(acc_bytes::<T>(cols) * u64::from(row_groups) * u64::from(sums))
        .map_err(|_| shape_error(kernel, "column-sum accumulators within shared memory"))
}

/// Rows of automatic threads and ranges few and short enough that one block takes them
/// all, a row group each: row groups of 32 or 16 threads (the widest that keeps a row
/// resident), at most [`ONE_BLOCK_ROWS`] of them within the kernel's threads, their `sums`
/// accumulators within `max_dynamic_smem` bytes. One launch then writes dx and the weight
/// gradients, adding its row groups in row order (no partial rows to sum). `None` where
/// they are not.
pub(crate) fn one_block_geometry<T>(
    kernel: &RowKernel,
    (rows, cols): (usize, usize),
    (threads, blocks): (Threads, Option<u32>),
    sums: u32,
    max_dynamic_smem: u32,
) -> Option<RowGeometry> {
    let auto = threads == Threads::Auto && blocks.is_none();
    if !auto || !(2..=ONE_BLOCK_ROWS).contains(&rows) {
        return None;
    }
    let smem = acc_bytes::<T>(cols) * rows as u64 * u64::from(sums);
    if smem > u64::from(max_dynamic_smem) {
        return None;
    }
    [32, 16]
        .into_iter()
        .map(|per_row| RowGeometry {
            threads_per_row: per_row,
            rows_per_block: rows as u32,
        })
        .find(|g| g.threads() <= kernel.max_threads && g.walk::<T>(kernel, cols) == Walk::Resident)
}

/// Dynamic shared memory a block of a kernel with `static_smem_bytes` may take on this GPU.
pub(crate) fn dynamic_smem_limit(gpu: &Gpu, static_smem_bytes: u32) -> u32 {
    gpu.device().limits.max_smem_per_block_optin - static_smem_bytes
}

/// A backward's row geometry on this GPU: [`one_block_geometry`] where it applies (the
/// kernel's `static_smem_bytes` taken from the GPU's shared memory per block), else
/// [`RowGeometry::select_for`]'s.
pub(crate) fn bwd_geometry<T>(
    gpu: &Gpu,
    kernel: &RowKernel,
    static_smem_bytes: u32,
    (rows, cols): (usize, usize),
    (threads, blocks): (Threads, Option<u32>),
    sums: u32,
) -> Result<RowGeometry, Error> {
    let device = gpu.device();
    let max_dynamic_smem = dynamic_smem_limit(gpu, static_smem_bytes);
    let choice = (threads, blocks);
    match one_block_geometry::<T>(kernel, (rows, cols), choice, sums, max_dynamic_smem) {
        Some(g) => Ok(g),
        None => Ok(RowGeometry::select_for::<T>(
            kernel,
            rows,
            cols,
            device.sm_count,
            threads,
        )?),
    }
}

/// The most rows [`one_block_geometry`] puts in one block: one SM then moves them all, where
/// more rows would spread over more SMs.
pub(crate) const ONE_BLOCK_ROWS: usize = 16;

/// Named barriers a block's row groups take, one each (`kNamedRowGroups` in
/// `cuda/include/cubins/reduce.cuh`): barriers 1 to 15, 0 being the block's.
pub(crate) const NAMED_ROW_GROUPS: u32 = 15;

/// Whether a route's backward norms give row groups named barriers (reduce.cuh
/// `kNamedBarriers`): every build but sm_120's, where the 16 barriers a kernel then counts
/// would leave one block an SM.
pub fn named_barriers(route: &Route) -> bool {
    route.code_cc != 120
}

/// The widest row group [`packed_geometry`] packs where the groups step through each
/// reduction together (no named barriers): two warps. Past that the lockstep cost more than
/// the partial rows it saves (H100, run124: RMSNorm 16384 x 8192, four 256-thread groups a
/// block, 0.87x the unpacked plan; 4000 x 8192 and 1024 x 14336 0.96x), where groups of
/// 32-64 threads took 1.06-1.85x.
pub(crate) const LOCKSTEP_MAX_ROW_THREADS: u32 = 64;

/// Whether a block's row groups span warps and each reduces behind a named barrier of its
/// own (reduce.cuh `row_groups_step_apart`; `named`: [`named_barriers`] of the route): one
/// group's loads then overlap another's reduction and writes, as separate blocks' do.
pub(crate) fn row_groups_step_apart(geometry: &RowGeometry, named: bool) -> bool {
    named
        && geometry.threads_per_row > 32
        && (2..=NAMED_ROW_GROUPS).contains(&geometry.rows_per_block)
}

/// The whole-row backward's geometry with its row groups packed where the rows outnumber the
/// SMs: about `rows / sms` row groups a block (at least `geometry`'s, within the kernel's
/// threads, the `sums` accumulators within `max_dynamic_smem` bytes, and, for groups that
/// span warps, the named barriers; without them (`named` false) groups of at most
/// [`LOCKSTEP_MAX_ROW_THREADS`]), as evenly as the steps allow, so a wave of blocks takes
/// every row in a few steps. Every block (row range) writes a partial row per column sum,
/// which the second launch reads back: a block of one row group a row (1024 x 768 took 1024
/// ranges) moved as many partial-row bytes as the rows themselves, and the sums' launch (6
/// blocks at 768 columns) added 1024 partial rows a column. Automatic threads and ranges
/// only: fixed counts keep their geometry (and so their bits).
pub(crate) fn packed_geometry<T>(
    geometry: RowGeometry,
    kernel: &RowKernel,
    (rows, cols): (usize, usize),
    (threads, blocks): (Threads, Option<u32>),
    (sums, max_dynamic_smem): (u32, u32),
    (sms, named): (u32, bool),
) -> RowGeometry {
    let auto = threads == Threads::Auto && blocks.is_none();
    let sms = sms.max(1) as usize;
    let lockstep_too_wide = !named && geometry.threads_per_row > LOCKSTEP_MAX_ROW_THREADS;
    if !auto || rows <= sms || lockstep_too_wide {
        return geometry;
    }
    let by_threads = kernel.max_threads / geometry.threads_per_row;
    let by_barriers = if named && geometry.threads_per_row > 32 {
        NAMED_ROW_GROUPS
    } else {
        u32::MAX
    };
    let group_smem = acc_bytes::<T>(cols) * u64::from(sums);
    let by_smem = (u64::from(max_dynamic_smem) / group_smem.max(1)).min(u64::from(u32::MAX)) as u32;
    let wanted = rows.div_ceil(sms).min(u32::MAX as usize) as u32;
    let most = by_threads.min(by_barriers).min(by_smem).max(1);
    // The fewest steps `most` groups allow, then the fewest groups that keep to them.
    let steps = wanted.div_ceil(most);
    RowGeometry {
        rows_per_block: wanted.div_ceil(steps).max(geometry.rows_per_block),
        ..geometry
    }
}

/// The most threads per SM a default wave of one-row blocks takes. Each row range writes a
/// partial row per column sum that the sums' launch reads back, so a wave of every resident
/// block of a short row can move more partial-row bytes than the rows: on the H100 (run139,
/// RMSNorm backward bf16, fixed ranges) 1024 x 3072 took 22.19 us in 1024 ranges of 96
/// threads and 18.06 in 528, 1024 x 8192 37.05 us in 528 ranges of 256 threads and 30.35 in
/// 264. As a rule (run143, both backward norms, rows 1024-32768 x cols 768-32768): 1.04-1.23x
/// at the 6 cells it changes, the other 42 within 0.988-1.012x.
pub(crate) const RANGE_THREADS_PER_SM: u32 = 512;

/// Blocks per SM in a backward's default wave: the occupancy calculator's `per_sm`; for blocks
/// of one whole row (the sweep's case) at most [`RANGE_THREADS_PER_SM`] threads' worth.
pub(crate) fn wave_blocks_per_sm(entry: BwdEntry, geometry: &RowGeometry, per_sm: u32) -> u32 {
    let per_sm = per_sm.max(1);
    if entry == BwdEntry::WholeRow && geometry.rows_per_block == 1 {
        per_sm.min(RANGE_THREADS_PER_SM.div_ceil(geometry.threads()))
    } else {
        per_sm
    }
}

/// Row ranges of a backward launch: `blocks`, or by default one wave of them:
/// [`wave_blocks_per_sm`] of the `per_sm()` resident blocks (asked only then) on each SM,
/// over the CTAs that share a row range.
pub(crate) fn ranges(
    gpu: &Gpu,
    kernel: &'static str,
    blocks: Option<u32>,
    (entry, geometry): (BwdEntry, &RowGeometry),
    per_sm: impl FnOnce() -> Result<u32, Error>,
) -> Result<usize, Error> {
    match blocks {
        Some(0) => Err(shape_error(kernel, "at least one block")),
        Some(b) => Ok(b as usize),
        None => {
            let per_sm = wave_blocks_per_sm(entry, geometry, per_sm()?);
            let wave = per_sm as usize * gpu.device().sm_count.max(1) as usize;
            Ok(wave / entry.ctas_per_row() as usize)
        }
    }
}

/// `rows` in consecutive ranges of whole row groups, as few as `ranges` allows (at least
/// one, at most one per group): (rows per range, ranges).
pub(crate) fn split_rows(rows: usize, rows_per_group: u32, ranges: usize) -> (u32, u32) {
    let groups = rows.div_ceil(rows_per_group as usize);
    let ranges = ranges.min(groups).max(1);
    let rows_per_range = groups.div_ceil(ranges) * rows_per_group as usize;
    (rows_per_range as u32, rows.div_ceil(rows_per_range) as u32)
}

/// A whole-row backward's walk of a 16-byte aligned row, in words: `resident`, or past a
/// resident tile `streamed` where the loaded kernel's build streams such rows (`streams`),
/// else `elementwise`.
pub(crate) fn bwd_walk_word<T>(
    geometry: &RowGeometry,
    kernel: &RowKernel,
    cols: usize,
    streams: bool,
) -> &'static str {
    match geometry.walk::<T>(kernel, cols) {
        Walk::Resident => "resident",
        Walk::Streamed if streams => "streamed",
        Walk::Streamed => "elementwise",
        Walk::Warp => "warp",
    }
}

/// A whole-row backward's geometry in words, for the launch record (`walk`:
/// [`bwd_walk_word`]).
pub(crate) fn whole_row_words(geometry: &RowGeometry, rows_per_range: u32, walk: &str) -> String {
    format!(
        "threads_per_row={} rows_per_block={} rows_per_grid_block={} walk={walk}",
        geometry.threads_per_row, geometry.rows_per_block, rows_per_range
    )
}

/// What a backward launched: the rows, then, where several row ranges each summed their
/// rows' weight-gradient terms, the fixed-order sum of those partial rows. One range writes
/// the gradients itself (the same bits as the sum of its one partial row): one launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwdLaunched {
    pub rows: Launched,
    pub sums: Option<Launched>,
}

impl BwdLaunched {
    /// The launches in stream order.
    pub fn iter(&self) -> impl Iterator<Item = &Launched> {
        std::iter::once(&self.rows).chain(self.sums.as_ref())
    }
}

/// Whether a backward launch of `ranges` row ranges writes the weight gradients itself.
pub(crate) fn one_range(ranges: u32) -> bool {
    ranges == 1
}

/// Where a backward launch of `ranges` row ranges puts its weight-gradient sums, in words
/// for its launch record: the outputs, or partial rows of the workspace.
pub(crate) fn sums_words(ranges: u32) -> &'static str {
    if one_range(ranges) {
        "sums=direct"
    } else {
        "sums=partial_rows"
    }
}

/// The backward's workspace: `ranges` row ranges of `sums` partial rows of
/// round_up(cols, 4) f32 each (at least that long, 16-byte aligned for the float4 stores);
/// none for one range, which writes the gradients itself.
pub(crate) fn workspace_len(ranges: u32, sums: u32, cols: usize) -> usize {
    if one_range(ranges) {
        return 0;
    }
    ranges as usize * sums as usize * cols.div_ceil(4) * 4
}

pub(crate) fn check_workspace(workspace: &BufferArg, len: usize) -> Result<(), Error> {
    workspace.at_least(len as u64 * 4)?;
    workspace.aligned(16)?;
    Ok(())
}

/// A backward's buffers: [`check_buffers`], then the workspace ([`check_workspace`]) against
/// every other buffer, where the launch uses one (`workspace_len` > 0).
pub(crate) fn check_bwd_buffers<T>(
    rows: usize,
    cols: usize,
    inputs: &[(BufferArg, Extent)],
    outputs: &[(BufferArg, Extent)],
    workspace: BufferArg,
    workspace_len: usize,
) -> Result<(), Error> {
    check_buffers::<T>(rows, cols, inputs, outputs)?;
    if workspace_len == 0 {
        return Ok(());
    }
    check_workspace(&workspace, workspace_len)?;
    let others: Vec<BufferArg> = inputs.iter().chain(outputs).map(|b| b.0).collect();
    check_disjoint(&[workspace], &others)?;
    Ok(())
}

/// A backward's launch: `ctas` CTAs of `geometry`, each with `smem_bytes` of accumulators.
pub(crate) fn range_config(geometry: &RowGeometry, ctas: u32, smem_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [ctas, 1, 1],
        block: [geometry.threads_per_row, geometry.rows_per_block, 1],
        dynamic_smem_bytes: smem_bytes,
        programmatic_dependent: false,
    }
}

/// The launch record of the fixed-order sum of `partial_rows` ranges' partial rows into
/// `sums` outputs of `cols` (grid.y: the output); none for one range.
pub(crate) fn colsum_launch(
    kernel: &'static str,
    cols: usize,
    partial_rows: u32,
    sums: u32,
) -> Result<Option<Launched>, Error> {
    if one_range(partial_rows) {
        return Ok(None);
    }
    let mut config = LaunchConfig::linear(
        cols.div_ceil(DWEIGHT_COLS_PER_BLOCK) as u32,
        DWEIGHT_THREADS,
    );
    config.grid[1] = sums;
    if config.grid[0] > i32::MAX as u32 {
        return Err(LaunchError::Geometry {
            kernel,
            requirement: "a grid within 2^31 - 1 blocks",
            config,
        }
        .into());
    }
    Ok(Some(Launched {
        kernel,
        config,
        choice: format!("partial_rows={partial_rows}").into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rows::cu_constant;
    use crate::runtime::{Bf16, F16};

    #[test]
    fn kernel_constants_match_colsum_and_norm_cuh() {
        let cu = include_str!("../../cuda/include/cubins/colsum.cuh");
        assert_eq!(DWEIGHT_THREADS, 32 * cu_constant(cu, "kDwWarps"));
        // The rows the selector spreads take the forward's short walk (weights loaded ahead).
        let norm = include_str!("../../cuda/include/cubins/norm.cuh");
        assert_eq!(
            crate::ops::rows::SPREAD_CHUNKS,
            u64::from(cu_constant(norm, "kShortChunks"))
        );
        let reduce = include_str!("../../cuda/include/cubins/reduce.cuh");
        assert_eq!(NAMED_ROW_GROUPS, cu_constant(reduce, "kNamedRowGroups"));
    }

    #[test]
    fn packed_groups_that_span_warps_step_apart() {
        let g = |threads_per_row, rows_per_block| RowGeometry {
            threads_per_row,
            rows_per_block,
        };
        assert!(row_groups_step_apart(&g(96, 8), true));
        assert!(row_groups_step_apart(&g(64, 15), true));
        // One group a block, groups within a warp (no barriers), more groups than barriers,
        // a build without named barriers.
        assert!(!row_groups_step_apart(&g(1024, 1), true));
        assert!(!row_groups_step_apart(&g(32, 8), true));
        assert!(!row_groups_step_apart(&g(64, 16), true));
        assert!(!row_groups_step_apart(&g(96, 8), false));
    }

    #[test]
    fn many_rows_pack_row_groups_within_threads_and_shared_memory() {
        let rms = crate::ops::rmsnorm::BWD;
        let ln = crate::ops::layernorm::BWD;
        let at = |threads_per_row| RowGeometry {
            threads_per_row,
            rows_per_block: 1,
        };
        let auto = (Threads::Auto, None);
        let h100_smem = 227 * 1024;
        let pack = |kernel: &RowKernel, g, shape, choice, sums| {
            packed_geometry::<Bf16>(g, kernel, shape, choice, (sums, h100_smem), (132, true))
                .rows_per_block
        };
        // 1024 x 768 on 132 SMs: ceil(1024 / 132) = 8 row groups a block, 128 blocks.
        assert_eq!(pack(&rms, at(64), (1024, 768), auto, 1), 8);
        // LayerNorm at 2048 columns: 512 threads / 64 a row.
        assert_eq!(pack(&ln, at(64), (16384, 2048), auto, 2), 8);
        // Shared memory bounds it: f32 rows of 8192 columns in 16 threads (sums of 64 KB a
        // row group): 3 within 227 KB.
        assert_eq!(
            packed_geometry::<f32>(
                at(16),
                &rms,
                (16384, 8192),
                auto,
                (2, h100_smem),
                (132, true)
            )
            .rows_per_block,
            3
        );
        // Wider row groups pack within the kernel's threads: 4 of 256 (8192 columns), 10 of
        // 96 (3072) at most, as evenly as the steps allow: 31 rows an SM at 4000 rows take 4
        // steps of 8 groups, not 3 of 10 and a step of 1.
        assert_eq!(pack(&rms, at(256), (16384, 8192), auto, 1), 4);
        assert_eq!(pack(&rms, at(96), (32768, 3072), auto, 1), 10);
        assert_eq!(pack(&rms, at(96), (4000, 3072), auto, 1), 8);
        // LayerNorm's 512 threads: 2 groups of 256 (8192 columns); at 14336 columns its two
        // sums' accumulators take 115 KB a group: one within 227 KB.
        assert_eq!(pack(&ln, at(256), (4000, 8192), auto, 2), 2);
        assert_eq!(pack(&ln, at(448), (4000, 14336), auto, 2), 1);
        // Groups that span warps: at most one named barrier each (15); 16 of 32 threads.
        assert_eq!(pack(&rms, at(64), (32768, 768), auto, 1), 15);
        assert_eq!(pack(&rms, at(32), (32768, 768), auto, 1), 32);
        // Without named barriers (sm_120) groups step together: at most 64 threads, 16 a block.
        let lockstep = |g, shape| {
            packed_geometry::<Bf16>(g, &rms, shape, auto, (1, h100_smem), (132, false))
                .rows_per_block
        };
        assert_eq!(lockstep(at(96), (4000, 3072)), 1);
        assert_eq!(lockstep(at(64), (32768, 768)), 16);
        // No more rows than SMs, or fixed counts: as selected.
        assert_eq!(pack(&rms, at(64), (132, 768), auto, 1), 1);
        assert_eq!(
            pack(&rms, at(64), (1024, 768), (Threads::PerRow(64), None), 1),
            1
        );
        assert_eq!(
            pack(&rms, at(64), (1024, 768), (Threads::Auto, Some(8)), 1),
            1
        );
        // Never fewer row groups than the selector's.
        let shared = RowGeometry {
            threads_per_row: 16,
            rows_per_block: 8,
        };
        assert_eq!(pack(&rms, shared, (200, 64), auto, 1), 8);
    }

    #[test]
    fn rows_split_into_ranges_of_whole_groups() {
        // 4096 rows over one wave of 132 ranges: 32 rows each, 128 ranges.
        assert_eq!(split_rows(4096, 1, 132), (32, 128));
        // Fewer rows than ranges: one row each.
        assert_eq!(split_rows(5, 1, 132), (1, 5));
        assert_eq!(split_rows(131, 1, 132), (1, 131));
        // Row groups of 8 stay whole.
        assert_eq!(split_rows(1000, 8, 16), (64, 16));
        assert_eq!(split_rows(3, 8, 16), (8, 1));
        // At least one range.
        assert_eq!(split_rows(7, 1, 0), (7, 1));
    }

    #[test]
    fn a_default_wave_of_one_row_blocks_keeps_to_its_threads() {
        let row = |threads| RowGeometry::per_row(threads);
        let whole = BwdEntry::WholeRow;
        // 96 threads a row (3072 bf16 columns): 6 blocks of the occupancy calculator's 10.
        assert_eq!(wave_blocks_per_sm(whole, &row(96), 10), 6);
        // 256 (8192 columns): 2 of 4; 448 (14336): 2 of 2; 1024: 1 of 2; never below 1.
        assert_eq!(wave_blocks_per_sm(whole, &row(256), 4), 2);
        assert_eq!(wave_blocks_per_sm(whole, &row(448), 2), 2);
        assert_eq!(wave_blocks_per_sm(whole, &row(1024), 2), 1);
        assert_eq!(wave_blocks_per_sm(whole, &row(512), 0), 1);
        // Fewer resident than the threads allow: the calculator's count.
        assert_eq!(wave_blocks_per_sm(whole, &row(128), 3), 3);
        // Blocks of several row groups (shared or packed) and the cluster kernel keep every
        // resident block.
        assert_eq!(wave_blocks_per_sm(whole, &row(32), 12), 12);
        let packed = RowGeometry {
            rows_per_block: 8,
            ..row(64)
        };
        assert_eq!(wave_blocks_per_sm(whole, &packed, 3), 3);
        assert_eq!(wave_blocks_per_sm(BwdEntry::ClusterHalves, &row(512), 2), 2);
    }

    #[test]
    fn accumulators_match_the_kernel_layout() {
        // DwAcc::floats(cols) = (cols / kVec + 1) * kVec floats per row group and sum.
        assert_eq!(acc_bytes::<Bf16>(4096), (512 + 1) * 8 * 4);
        assert_eq!(acc_bytes::<f32>(7), (1 + 1) * 4 * 4);
        assert_eq!(acc_bytes::<F16>(1), 8 * 4);
        // The contracts' shared memory at 4096 columns: one sum (RMSNorm), two (LayerNorm).
        assert_eq!(acc_smem_bytes::<Bf16>("k", 4096, 1, 1).unwrap(), 16416);
        assert_eq!(acc_smem_bytes::<Bf16>("k", 4096, 1, 2).unwrap(), 32832);
        assert_eq!(acc_smem_bytes::<f32>("k", 4096, 1, 2).unwrap(), 32800);
        assert!(acc_smem_bytes::<f32>("k", 1 << 30, 8, 2).is_err());
    }

    #[test]
    fn the_workspace_holds_every_sum_of_every_range() {
        assert_eq!(workspace_len(3, 1, 7), 3 * 8);
        assert_eq!(workspace_len(132, 2, 4096), 132 * 2 * 4096);
        let ws = |address, bytes| BufferArg {
            param: "workspace",
            address,
            bytes,
        };
        assert!(check_workspace(&ws(256, 96), 24).is_ok());
        assert!(check_workspace(&ws(256, 92), 24).is_err());
        assert!(check_workspace(&ws(260, 96), 24).is_err());
    }

    #[test]
    fn the_colsum_launch_covers_the_columns_and_each_sum() {
        let l = colsum_launch("layernorm_dweight_bf16", 4097, 16, 2)
            .unwrap()
            .unwrap();
        assert_eq!(l.config.grid, [33, 2, 1]);
        assert_eq!(l.config.block, [512, 1, 1]);
        assert_eq!(l.choice, "partial_rows=16");
        assert_eq!(
            colsum_launch("k", 128, 2, 1).unwrap().unwrap().config,
            LaunchConfig::linear(1, 512)
        );
        // One range writes its sums itself: nothing to sum, no workspace.
        assert_eq!(colsum_launch("k", 128, 1, 1).unwrap(), None);
        assert_eq!(workspace_len(1, 2, 4096), 0);
    }

    #[test]
    fn few_short_rows_share_one_block() {
        let kernel = RowKernel {
            name: "k",
            resident_chunks: 4,
            max_threads: 512,
            spread_threads_per_sm: crate::ops::rows::SPREAD_THREADS_PER_SM,
            warp_chunks: 0,
            short_threads: 0,
            spread_block_threads: crate::ops::rows::SPREAD_BLOCK_THREADS,
        };
        let auto = (Threads::Auto, None);
        let plenty = u32::MAX;
        let g = |rows, cols| one_block_geometry::<Bf16>(&kernel, (rows, cols), auto, 2, plenty);
        // 16 rows of 768 bf16 (96 chunks): 32 threads a row, 3 chunks each, 512 threads.
        assert_eq!(
            g(16, 768),
            Some(RowGeometry {
                threads_per_row: 32,
                rows_per_block: 16
            })
        );
        // 32 x 4 chunks is the longest row of 32 threads; 16 threads take rows of 64 chunks.
        assert_eq!(g(5, 1024).map(|g| g.threads_per_row), Some(32));
        assert_eq!(g(5, 1032), None);
        // More rows than ONE_BLOCK_ROWS, one row (one range already), or a block past the
        // kernel's threads.
        assert_eq!(g(17, 256), None);
        assert_eq!(g(1, 768), None);
        let narrow = RowKernel {
            max_threads: 384,
            ..kernel
        };
        let n = |rows, cols| one_block_geometry::<Bf16>(&narrow, (rows, cols), auto, 2, plenty);
        assert_eq!(n(16, 256).map(|g| g.threads_per_row), Some(16));
        assert_eq!(n(16, 768), None);
        // Fixed threads or ranges keep their plan; accumulators past shared memory too.
        let fixed = (Threads::PerRow(32), None);
        assert_eq!(
            one_block_geometry::<Bf16>(&kernel, (4, 768), fixed, 2, plenty),
            None
        );
        let ranges = (Threads::Auto, Some(4));
        assert_eq!(
            one_block_geometry::<Bf16>(&kernel, (4, 768), ranges, 2, plenty),
            None
        );
        let smem = acc_bytes::<Bf16>(768) as u32 * 4 * 2;
        assert!(one_block_geometry::<Bf16>(&kernel, (4, 768), auto, 2, smem).is_some());
        assert_eq!(
            one_block_geometry::<Bf16>(&kernel, (4, 768), auto, 2, smem - 1),
            None
        );
    }

    #[test]
    fn eps_is_finite_and_non_negative() {
        assert!(check_eps("k", 0.0).is_ok() && check_eps("k", 1e-5).is_ok());
        for bad in [f32::NAN, f32::INFINITY, -1e-6] {
            assert!(check_eps("k", bad).unwrap_err().to_string().contains("eps"));
        }
    }

    #[test]
    fn buffers_are_checked_inputs_first() {
        let buf = |param, address, bytes| BufferArg {
            param,
            address,
            bytes,
        };
        // 4 rows of 8 bf16: 64 bytes per tensor, 16 per weight row.
        let (x, w, y) = (buf("x", 0, 64), buf("w", 1024, 16), buf("y", 2048, 64));
        let ok = check_buffers::<Bf16>(
            4,
            8,
            &[(x, Extent::Rows), (w, Extent::Row)],
            &[(y, Extent::Rows)],
        );
        assert!(ok.is_ok());
        // Both x and y are short: the input is named.
        let e =
            check_buffers::<Bf16>(5, 8, &[(x, Extent::Rows)], &[(y, Extent::Rows)]).unwrap_err();
        assert!(e.to_string().contains("`x`"), "{e}");
        let over = buf("y", 32, 64);
        let e =
            check_buffers::<Bf16>(4, 8, &[(x, Extent::Rows)], &[(over, Extent::Rows)]).unwrap_err();
        assert!(e.to_string().contains("overlap"), "{e}");
    }
}
