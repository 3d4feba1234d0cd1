//! The forward norms' launch (`rmsnorm`, `layernorm`, with and without the residual add): a
//! row per row group of the whole-row kernel, or, for a few long rows on routes that run
//! clusters, a row per thread-block cluster of [`FWD_CLUSTER_CTAS`] CTAs
//! (`cuda/include/cubins/row_split.cuh`): each CTA takes a run of the row's columns, so a
//! row spreads over that many SMs instead of one.

use super::norm::{check_eps, runs_clusters};
use super::rows::{
    check_rows_cols, chunk_elems, plan_rows, RowGeometry, RowKernel, Walk, SPREAD_CHUNKS,
};
use super::{Launched, Threads};
use crate::runtime::{Error, Gpu, KernelSpec, StreamHandle};
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
        None => plan_rows::<T>(kernel, entry, rows, cols, sms, threads)?,
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
    use crate::runtime::Bf16;

    #[test]
    fn kernel_constants_match_norm_cuh() {
        let norm = include_str!("../../cuda/include/cubins/norm.cuh");
        assert_eq!(FWD_CLUSTER_CTAS, cu_constant(norm, "kFwdClusterCtas"));
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
