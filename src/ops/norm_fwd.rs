//! The forward norms' launch (`rmsnorm`, `layernorm`, with and without the residual add): a
//! row per row group of the whole-row kernel, or, for a few long rows on routes that run
//! clusters, a row per thread-block cluster of [`FWD_CLUSTER_CTAS`] CTAs
//! (`cuda/include/cubins/row_split.cuh`): each CTA takes a run of the row's columns, so a
//! row spreads over that many SMs instead of one.

use super::norm::{check_eps, runs_clusters};
use super::rows::SPREAD_CHUNKS;
use super::rows::{check_rows_cols, chunk_elems, row_launch, RowGeometry, RowKernel, Walk};
use super::{Launched, Threads};
use crate::runtime::{Error, Gpu, KernelSpec, LaunchError, StreamHandle};
use std::marker::PhantomData;

/// CTAs per cluster of the forward norms' cluster kernels (`kFwdClusterCtas` in
/// cuda/include/cubins/norm.cuh): the portable maximum.
pub const FWD_CLUSTER_CTAS: u32 = 8;

/// The fewest body chunks a CTA of the cluster kernel takes: rows from 10240 bf16 columns.
/// Measured on the H100 against a row per block, the same cells in one call (run103): 1.09-2.09x
/// at 14336 and 20000 columns (but for LayerNorm 2 x 14336, 0.99x), 0.89-1.14x at 8192, 0.82-1.07x
/// at 6144, where the cluster's launch and exchange cost more than the spread rows' loads.
const MIN_CHUNKS_PER_CTA: u64 = 160;

/// The cluster kernel's per-CTA geometry where a forward takes it: automatic threads, rows
/// few enough that every CTA of theirs has an SM to itself (`rows` x [`FWD_CLUSTER_CTAS`] <=
/// `sms`), and rows long enough that each CTA's run is at least `MIN_CHUNKS_PER_CTA` chunks
/// (bf16 and f16 from 10240 columns, f32 from 5120), and short enough that it stays resident
/// in one CTA (the cluster kernels have no streamed walk: up to 524288 bf16 columns). Its run
/// at [`SPREAD_CHUNKS`] a thread, in whole warps, one row per CTA. `None`: a row per row
/// group. Only for routes that [`runs_clusters`].
pub fn fwd_cluster_geometry<T>(
    kernel: &RowKernel,
    rows: usize,
    cols: usize,
    sms: u32,
    threads: Threads,
) -> Option<RowGeometry> {
    let ctas = u64::from(FWD_CLUSTER_CTAS);
    let chunks = (cols / chunk_elems::<T>() as usize) as u64;
    let few = (rows as u64).saturating_mul(ctas) <= u64::from(sms);
    if threads != Threads::Auto || !few || chunks < ctas * MIN_CHUNKS_PER_CTA {
        return None;
    }
    let per_cta = chunks.div_ceil(ctas);
    let g = RowGeometry {
        threads_per_row: (per_cta.div_ceil(SPREAD_CHUNKS).div_ceil(32) * 32)
            .min(u64::from(kernel.max_threads)) as u32,
        rows_per_block: 1,
    };
    (g.walk::<T>(kernel, per_cta as usize * chunk_elems::<T>() as usize) == Walk::Resident)
        .then_some(g)
}

/// Whether rows of `T` in code built for compute capability `code_cc` have the forward norms'
/// warp and short walks: 16-bit rows before Blackwell (`kWarpChunks` in
/// cuda/include/cubins/norm.cuh; f32 rows and Blackwell's builds would spill there).
fn fast_walks<T>(code_cc: u32) -> bool {
    std::mem::size_of::<T>() == 2 && code_cc < 100
}

/// Body chunks per thread of `kernel`'s warp walk for `T` in code built for compute
/// capability `code_cc` (`kWarpChunks` in cuda/include/cubins/norm.cuh), where it has one.
pub fn warp_chunks<T>(kernel: &RowKernel, code_cc: u32) -> Option<u32> {
    (kernel.warp_chunks > 0 && fast_walks::<T>(code_cc)).then_some(kernel.warp_chunks)
}

/// The whole-row forward's geometry and the walk of its aligned rows, for code built for
/// `code_cc`: [`RowGeometry::select_for`]'s, widened (automatic threads, 16-bit rows, code
/// built before Blackwell) where the selector gave fewer threads than a faster walk needs:
/// - to the 16 or 32 threads the warp walk needs to hold a row of whole chunks (LayerNorm's
///   rows of 768 bf16 columns: 16 threads of 6 chunks take the resident walk, 32 of 3 the warp
///   walk);
/// - else to the threads that hold the row at 2 chunks each, the short walk's, up to the
///   kernel's `short_threads` (RMSNorm's 2048-column rows: 128 threads instead of 32).
///
/// The kernel takes the warp walk wherever such a row fits the threads (`walk=warp`).
pub fn fwd_row_geometry<T>(
    kernel: &RowKernel,
    (rows, cols): (usize, usize),
    sms: u32,
    code_cc: u32,
    threads: Threads,
) -> Result<(RowGeometry, Walk), LaunchError> {
    let selected = RowGeometry::select_for::<T>(kernel, rows, cols, sms, threads)?;
    let vec = chunk_elems::<T>() as u64;
    let chunks = (cols as u64).div_ceil(vec);
    let warp = warp_chunks::<T>(kernel, code_cc).filter(|_| cols as u64 % vec == 0);
    let warp_threads = warp.and_then(|c| match chunks.div_ceil(u64::from(c)) {
        0..=16 => Some(16),
        17..=32 => Some(32),
        _ => None,
    });
    let wanted = match warp_threads {
        Some(t) => Some(t),
        None if fast_walks::<T>(code_cc) => {
            // SPREAD_CHUNKS a thread: the short walk's (`kShortChunks`).
            let short = chunks.div_ceil(SPREAD_CHUNKS).div_ceil(32) * 32;
            (short <= u64::from(kernel.short_threads)).then_some(short as u32)
        }
        None => None,
    };
    let g = match wanted {
        Some(t) if threads == Threads::Auto && t > selected.threads_per_row => {
            RowGeometry::per_row(t)
        }
        _ => selected,
    };
    let walk = match warp {
        Some(c) if g.threads_per_row <= 32 && chunks <= u64::from(g.threads_per_row * c) => {
            Walk::Warp
        }
        _ => g.walk::<T>(kernel, cols),
    };
    Ok((g, walk))
}

/// A planned forward launch of `K` (the whole-row entry) or `C` (its cluster twin, the same
/// arguments): the checked shape as kernel arguments, and the record.
pub(crate) struct FwdLaunch<K, C> {
    pub rows: u32,
    pub cols: u32,
    launched: Launched,
    cluster: bool,
    kernels: PhantomData<(K, C)>,
}

/// Plans a forward of `rows x cols` with `kernel`'s geometry on this GPU.
pub(crate) fn plan_fwd<T, K: KernelSpec, C: KernelSpec<Args = K::Args>>(
    gpu: &Gpu,
    kernel: &RowKernel,
    rows: usize,
    cols: usize,
    threads: Threads,
    eps: f32,
) -> Result<FwdLaunch<K, C>, Error> {
    let (entry, cluster_entry) = (K::info().name, C::info().name);
    check_eps(entry, eps)?;
    let sms = gpu.device().sm_count;
    let cluster = match fwd_cluster_geometry::<T>(kernel, rows, cols, sms, threads) {
        Some(g) if runs_clusters(&gpu.route(cluster_entry)?) => Some(g),
        _ => None,
    };
    let (rows, cols, launched) = match cluster {
        Some(g) => {
            let (r, c) = check_rows_cols(cluster_entry, rows, cols)?;
            let mut config = g.config(rows);
            config.grid[0] = r * FWD_CLUSTER_CTAS;
            let choice = format!(
                "threads_per_cta={} ctas_per_row={FWD_CLUSTER_CTAS} walk=cluster",
                g.threads_per_row
            );
            let launched = Launched {
                kernel: cluster_entry,
                config,
                choice: choice.into(),
            };
            (r, c, launched)
        }
        None => {
            let checked = check_rows_cols(entry, rows, cols)?;
            let code_cc = gpu.route(entry)?.code_cc;
            let (g, walk) = fwd_row_geometry::<T>(kernel, (rows, cols), sms, code_cc, threads)?;
            row_launch(entry, checked, rows, g, walk)
        }
    };
    Ok(FwdLaunch {
        rows,
        cols,
        launched,
        cluster: cluster.is_some(),
        kernels: PhantomData,
    })
}

impl<K: KernelSpec, C: KernelSpec<Args = K::Args>> FwdLaunch<K, C> {
    /// Launches the planned kernel: the whole-row one as a programmatic dependent of the
    /// stream's previous kernel where its route allows it, the cluster one plainly (the
    /// cubin's cluster shape).
    ///
    /// # Safety
    /// As [`crate::runtime::Kernel::launch`] for either kernel with `args`; `K` waits on
    /// the grid dependency before its first memory access.
    pub unsafe fn launch(
        self,
        gpu: &Gpu,
        stream: &impl StreamHandle,
        args: K::Args,
    ) -> Result<Launched, Error> {
        if self.cluster {
            gpu.kernel::<C>()?
                .launch(stream, &self.launched.config, args)?;
            Ok(self.launched)
        } else {
            self.launched
                .launch_after_previous(&gpu.kernel::<K>()?, stream, args)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rmsnorm::FWD;
    use crate::ops::rows::cu_constant;
    use crate::ops::{layernorm, rmsnorm};
    use crate::runtime::Bf16;

    #[test]
    fn kernel_constants_match_norm_cuh() {
        let norm = include_str!("../../cuda/include/cubins/norm.cuh");
        assert_eq!(FWD_CLUSTER_CTAS, cu_constant(norm, "kFwdClusterCtas"));
        assert_eq!(FWD.warp_chunks, cu_constant(norm, "kRmsWarpChunks"));
        assert_eq!(
            layernorm::FWD.warp_chunks,
            cu_constant(norm, "kLnWarpChunks")
        );
        assert_eq!(rmsnorm::FWD_RESIDUAL.warp_chunks, 0);
        assert_eq!(layernorm::FWD_RESIDUAL.warp_chunks, 0);
    }

    #[test]
    fn rows_of_up_to_a_warp_take_the_warp_walk_where_the_route_has_it() {
        let sms = 132;
        let at = |kernel: &RowKernel, shape, cc, threads| {
            let (g, walk) = fwd_row_geometry::<Bf16>(kernel, shape, sms, cc, threads).unwrap();
            (g.threads_per_row, walk)
        };
        let ln = &layernorm::FWD;
        let auto = Threads::Auto;
        // 16384 x 768: 96 chunks. RMSNorm's 16 threads hold 6 each; LayerNorm's warp walk
        // holds 4, so its rows widen from the selector's 16 threads to 32.
        assert_eq!(at(&FWD, (16384, 768), 90, auto), (16, Walk::Warp));
        assert_eq!(at(ln, (16384, 768), 90, auto), (32, Walk::Warp));
        assert_eq!(at(ln, (16384, 768), 80, auto), (32, Walk::Warp));
        // Blackwell builds have no warp walk: the selector's geometry, resident.
        assert_eq!(at(ln, (16384, 768), 100, auto), (16, Walk::Resident));
        assert_eq!(at(&FWD, (16384, 768), 120, auto), (16, Walk::Resident));
        // Nor have f32 rows, nor the residual forms.
        let f32_ln = fwd_row_geometry::<f32>(ln, (16384, 384), sms, 90, auto).unwrap();
        assert_eq!((f32_ln.0.threads_per_row, f32_ln.1), (16, Walk::Resident));
        let residual = &layernorm::FWD_RESIDUAL;
        assert_ne!(at(residual, (16384, 768), 90, auto).1, Walk::Warp);
        // 1024 columns: 128 chunks, past 16 threads of either walk: 32.
        assert_eq!(at(&FWD, (16384, 1024), 90, auto), (32, Walk::Warp));
        assert_eq!(at(ln, (16384, 1024), 90, auto), (32, Walk::Warp));
        // Rows past 32 threads' warp walk keep the selector's geometry and walk.
        assert_eq!(at(ln, (16384, 2048), 90, auto), (32, Walk::Resident));
        assert_eq!(at(&FWD, (16384, 1536), 90, auto), (32, Walk::Warp));
        assert_eq!(at(&FWD, (16384, 1544), 90, auto).1, Walk::Resident);
        // Rows that are not whole chunks take the general walks.
        assert_eq!(at(ln, (16384, 767), 90, auto), (16, Walk::Resident));
        assert_eq!(at(&FWD, (16384, 767), 90, auto).1, Walk::Resident);
        // Spread rows keep their width; fixed threads are kept, the walk as the kernel takes it.
        assert_eq!(at(ln, (4000, 768), 90, auto), (32, Walk::Warp));
        assert_eq!(at(ln, (100, 768), 90, auto).1, Walk::Resident);
        assert_eq!(
            at(ln, (16384, 768), 90, Threads::PerRow(16)),
            (16, Walk::Resident)
        );
        assert_eq!(
            at(&FWD, (16384, 768), 90, Threads::PerRow(16)),
            (16, Walk::Warp)
        );
    }

    #[test]
    fn rows_the_warp_walk_does_not_hold_widen_to_the_short_walk() {
        let sms = 132;
        let at = |kernel: &RowKernel, shape, cc| {
            let (g, walk) =
                fwd_row_geometry::<Bf16>(kernel, shape, sms, cc, Threads::Auto).unwrap();
            (g.threads_per_row, g.rows_per_block, walk)
        };
        let (rms, ln) = (&FWD, &layernorm::FWD);
        let (rms_res, ln_res) = (&rmsnorm::FWD_RESIDUAL, &layernorm::FWD_RESIDUAL);
        // 2048 columns, 256 chunks: 128 threads of 2 where the selector gives 32 of 8, for
        // RMSNorm and the residual forms; LayerNorm's forward keeps 32 (slower at 16384 and
        // 32768 rows with 128).
        assert_eq!(at(rms, (4000, 2048), 90), (128, 1, Walk::Resident));
        assert_eq!(at(rms, (32768, 2048), 80), (128, 1, Walk::Resident));
        assert_eq!(at(rms_res, (16384, 2048), 90), (128, 1, Walk::Resident));
        assert_eq!(at(ln_res, (16384, 2048), 90), (128, 1, Walk::Resident));
        assert_eq!(at(ln, (16384, 2048), 90), (32, 4, Walk::Resident));
        // 3072 columns, 384 chunks: 192 threads, within the residual forms' bound only.
        assert_eq!(at(rms_res, (16384, 3072), 90).0, 192);
        assert_eq!(at(ln_res, (4000, 3072), 90).0, 192);
        assert_eq!(at(rms, (16384, 3072), 90).0, 64);
        // 768 columns: the residual forms take 64 threads (2 chunks of 96 rounded to warps);
        // the forwards without residual take the warp walk instead.
        assert_eq!(at(rms_res, (16384, 768), 90), (64, 1, Walk::Resident));
        assert_eq!(at(ln_res, (32768, 768), 90), (64, 1, Walk::Resident));
        assert_eq!(at(rms, (16384, 768), 90), (16, 8, Walk::Warp));
        // Rows not whole chunks count their partial chunk.
        assert_eq!(at(rms, (16384, 767), 90).0, 64);
        // Past the bound, or on Blackwell, or for f32: the selector's geometry.
        assert_eq!(at(rms_res, (16384, 4096), 90).0, 64);
        assert_eq!(at(rms_res, (16384, 2048), 100), (32, 4, Walk::Resident));
        assert_eq!(at(rms, (16384, 2048), 120), (32, 4, Walk::Resident));
        let f32_rms = fwd_row_geometry::<f32>(rms, (16384, 1024), sms, 90, Threads::Auto).unwrap();
        assert_eq!(f32_rms.0.threads_per_row, 32);
        // Spread rows already wider keep their width; fixed threads are kept.
        assert_eq!(at(rms, (1024, 2048), 90).0, 128);
        assert_eq!(at(rms_res, (100, 3072), 90).0, 192);
        let fixed = fwd_row_geometry::<Bf16>(rms, (16384, 2048), sms, 90, Threads::PerRow(32));
        assert_eq!(fixed.unwrap().0.threads_per_row, 32);
    }

    #[test]
    fn few_long_rows_take_a_cluster_each() {
        let g = |rows, cols| fwd_cluster_geometry::<Bf16>(&FWD, rows, cols, 132, Threads::Auto);
        // 32768 bf16 columns: 4096 chunks, 512 a CTA, 256 threads of 2.
        let one = g(1, 32768).unwrap();
        assert_eq!((one.threads_per_row, one.rows_per_block), (256, 1));
        assert_eq!(g(16, 32768), Some(one), "16 x 8 CTAs within 132 SMs");
        assert_eq!(g(17, 32768), None, "17 x 8 CTAs: more than the SMs");
        // From 10240 columns (160 chunks a CTA: 80 threads), in whole warps.
        assert_eq!(g(1, 10240).unwrap().threads_per_row, 96);
        assert_eq!(g(1, 10239), None);
        assert_eq!(g(16, 8192), None, "8192 columns: a row per block");
        assert_eq!(
            g(5, 14336).unwrap().threads_per_row,
            128,
            "224 chunks: 112 threads"
        );
        assert_eq!(
            fwd_cluster_geometry::<f32>(&FWD, 1, 5120, 132, Threads::Auto)
                .unwrap()
                .threads_per_row,
            96
        );
        // Past 1024 threads of 2 chunks a CTA, the kernel's maximum, up to 8 chunks a thread;
        // past that a row per block (the cluster kernels do not stream).
        assert_eq!(g(1, 1 << 19).unwrap().threads_per_row, 1024);
        assert_eq!(g(1, (1 << 19) + 64), None);
        // Fixed threads keep the whole-row kernel.
        assert_eq!(
            fwd_cluster_geometry::<Bf16>(&FWD, 1, 32768, 132, Threads::PerRow(1024)),
            None
        );
    }
}
