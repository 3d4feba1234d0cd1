//! Shared by the fused row ops (`rmsnorm`, `softmax`, `swiglu`, `rope`): the row geometry
//! selector and shape checks. Their storage types are the runtime's
//! [`Dtype`](crate::runtime::launchers::Dtype)s.
//!
//! The row kernels (cuda/include/cubins/rows.cuh) run a block of `threads_per_row` x
//! `rows_per_block` threads: each row group keeps up to `resident_chunks` 16-byte chunks per
//! thread in registers between its reduction and its write. The selector takes the fewest
//! threads that keep the whole row resident (more rows in flight per SM, more loads in
//! flight per thread), at least 16 per row (one per head or tail column), several rows per
//! block when a row needs no more than a warp. Where the rows are too few for that to fill
//! the GPU, it spreads each row over more threads ([`RowGeometry::select_for`]).

use super::Launched;
use crate::runtime::{BufferArg, Error, Gpu, LaunchConfig, LaunchError};
use std::fmt;

/// Bytes per vector access of the kernels.
pub const CHUNK_BYTES: u32 = 16;

/// Elements of `T` per 16-byte chunk.
pub fn chunk_elems<T>() -> u32 {
    CHUNK_BYTES / std::mem::size_of::<T>() as u32
}

/// The longest row the kernels index (their column arithmetic is 32-bit signed).
pub const MAX_COLS: usize = 1 << 30;

/// How one row kernel is built (its `.cu` constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowKernel {
    /// Entry-point name prefix, e.g. `rmsnorm_fwd` (the dtype suffix is added).
    pub name: &'static str,
    /// Body chunks per thread a resident row keeps in registers.
    pub resident_chunks: u32,
    /// `__launch_bounds__`: threads per block.
    pub max_threads: u32,
    /// Threads per SM a launch whose rows are spread over more threads may take in all
    /// ([`RowGeometry::select_for`]).
    pub spread_threads_per_sm: u64,
    /// Body chunks per thread of the warp walk (the forward norms' `kRmsWarpChunks` /
    /// `kLnWarpChunks` in cuda/include/cubins/norm.cuh: 16-bit rows of at most 32 threads, on
    /// code built before Blackwell; see `ops::norm_fwd::warp_chunks`); 0: no warp walk.
    pub warp_chunks: u32,
    /// The most threads a forward norm's 16-bit row is widened to so that it takes the short
    /// walk (`kShortChunks` = 2 chunks a thread, the weights loaded with the row; see
    /// `ops::norm_fwd::fwd_row_geometry`); 0: never widened.
    pub short_threads: u32,
    /// The fewest threads a row spread past one warp takes where its chunks give each of them
    /// one ([`SPREAD_BLOCK_THREADS`] at least; see [`RowGeometry::select_for`]).
    pub spread_block_threads: u32,
}

/// Threads per row: chosen by the selector, or fixed (for sweeps and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Threads {
    #[default]
    Auto,
    /// 16, 32, or a multiple of 32 up to the kernel's maximum.
    PerRow(u32),
}

/// Which walk a row whose tensors are 16-byte aligned with each other takes (rows that
/// are not take the elementwise walk; the kernel decides per row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// The row stays in registers from the reduction to the write: read once.
    Resident,
    /// The row is longer than one tile: pass 2 reads it again (from L2).
    Streamed,
    /// The forward norms' resident walk for rows of at most a warp's threads: every load of
    /// the row and of its weights first, then the sums ([`RowKernel::warp_chunks`]).
    Warp,
}

impl fmt::Display for Walk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Walk::Resident => "resident",
            Walk::Streamed => "streamed",
            Walk::Warp => "warp",
        })
    }
}

/// Block shape of a row kernel launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowGeometry {
    pub threads_per_row: u32,
    pub rows_per_block: u32,
}

/// Threads per block the selector aims at when several rows share a block.
const SHARED_BLOCK_THREADS: u32 = 128;

/// Body chunks per thread of a spread row: every thread's loads of a row are in flight
/// together, and the serial chain from a row's loads to its writes is one or two loads long.
pub const SPREAD_CHUNKS: u64 = 2;

/// The fewest threads a row spread past one warp takes: a block of 4 warps. Measured on the H100
/// against the 2 chunks a thread that 768-column rows would take (64 threads, run136, fixed
/// threads, rows 1-1024): 128 threads 1.10-1.23x for the backward norms at 1 and 100 rows,
/// 1.09-1.11x for LayerNorm's forward and its residual form at 1024 rows, 1.06-1.09x for
/// softmax's forward at 1-100 rows (0.981x at 1024), 1.02-1.08x for SwiGLU's interleaved rows.
pub const SPREAD_BLOCK_THREADS: u32 = 128;

/// The backward norms' and softmax forward's [`RowKernel::spread_block_threads`]: a chunk a
/// thread up to 8 warps. Measured on the H100 at 2048 columns (run136, fixed threads, rows 1,
/// 5 and 100) against the 128 threads of 2 chunks the spread gives: 256 threads 1.06-1.17x
/// for the RMSNorm backward, 1.05-1.14x for LayerNorm's, 1.03-1.05x for softmax's forward;
/// at 8192 columns the spread's 512 threads of 2 chunks were within 1.2% of the best.
pub const SPREAD_CHUNK_THREADS: u32 = 256;

/// Threads per SM a spread launch may take in all: a quarter of the 2048 an SM holds, so
/// spreading only ever takes thread slots that few rows leave idle.
pub const SPREAD_THREADS_PER_SM: u64 = 512;

/// The forward norms', softmax's and SwiGLU's interleaved rows' spread budget: the 1024
/// threads an SM holds at their 64 registers, one full wave. Measured on the H100 against the
/// quarter (run126, fixed threads a row): 1024 x 2048 bf16 at 128 threads a row instead of 64
/// 1.09-1.26x, 4000 x 768 at 32 instead of 16 1.03-1.18x, 1024 x 3072 at 128 instead of 64
/// 1.06-1.25x (SwiGLU's interleaved rows: run136, 1.03x at 1024 x 768 and 1024 x 2048).
pub const WAVE_SPREAD_THREADS_PER_SM: u64 = 1024;

/// Threads per row for `threads` of work: 16, 32, or whole warps up to `max`.
fn row_threads(threads: u64, max: u32) -> u32 {
    match threads {
        0..=16 => 16,
        17..=32 => 32,
        n => (n.div_ceil(32) * 32).min(u64::from(max)) as u32,
    }
}

impl RowGeometry {
    /// The geometry for rows of `cols` elements of `T`, whatever their number: the fewest
    /// threads that keep a row resident.
    pub fn select<T>(
        kernel: &RowKernel,
        cols: usize,
        threads: Threads,
    ) -> Result<RowGeometry, LaunchError> {
        let per_row = match threads {
            Threads::Auto => {
                let chunks = cols.div_ceil(chunk_elems::<T>() as usize) as u64;
                row_threads(
                    chunks.div_ceil(u64::from(kernel.resident_chunks)),
                    kernel.max_threads,
                )
            }
            Threads::PerRow(t) => {
                let ok = t == 16 || (t % 32 == 0 && t >= 32 && t <= kernel.max_threads);
                if !ok {
                    return Err(LaunchError::Geometry {
                        kernel: kernel.name,
                        requirement: "16, 32 or a multiple of 32 threads per row, within the kernel's maximum",
                        config: LaunchConfig {
                            grid: [1, 1, 1],
                            block: [t, 1, 1],
                            dynamic_smem_bytes: 0,
                            programmatic_dependent: false,
                        },
                    });
                }
                t
            }
        };
        Ok(RowGeometry::per_row(per_row))
    }

    /// The geometry for `rows` rows of `cols` elements of `T` on a GPU of `sms` SMs. With
    /// automatic threads, [`select`](Self::select)'s, unless the rows are too few for it to
    /// fill the GPU: then each row is spread over more threads, down to [`SPREAD_CHUNKS`]
    /// chunks a thread (and, past one warp, over at least the kernel's `spread_block_threads`
    /// while each thread keeps a chunk, and at least [`SPREAD_BLOCK_THREADS`]), as far as the
    /// launch stays within the kernel's `spread_threads_per_sm` per SM.
    /// (A handful of rows under the fewest-threads rule leaves most SMs idle and gives each
    /// thread a serial chain of up to `resident_chunks` dependent loads: a 1 x 768 RMSNorm
    /// took 3.1 us where the same bytes need one round trip.)
    pub fn select_for<T>(
        kernel: &RowKernel,
        rows: usize,
        cols: usize,
        sms: u32,
        threads: Threads,
    ) -> Result<RowGeometry, LaunchError> {
        let fewest = Self::select::<T>(kernel, cols, threads)?;
        if threads != Threads::Auto {
            return Ok(fewest);
        }
        let chunks = cols.div_ceil(chunk_elems::<T>() as usize) as u64;
        let widest_block = kernel.spread_block_threads.max(SPREAD_BLOCK_THREADS);
        let block = row_threads(chunks, kernel.max_threads)
            .clamp(SPREAD_BLOCK_THREADS, widest_block)
            .min(kernel.max_threads);
        let spread = match row_threads(chunks.div_ceil(SPREAD_CHUNKS), kernel.max_threads) {
            t if t > 32 => t.max(block),
            t => t,
        };
        // The most threads per row the budget allows, rounded down to a row width.
        let budget = u64::from(sms) * kernel.spread_threads_per_sm / rows.max(1) as u64;
        let allowed = match budget {
            0..=31 => 16,
            b => (b / 32 * 32).min(u64::from(kernel.max_threads)) as u32,
        };
        let wider = spread.min(allowed);
        Ok(if wider > fewest.threads_per_row {
            RowGeometry::per_row(wider)
        } else {
            fewest
        })
    }

    /// `per_row` threads a row; rows of up to a warp share blocks of
    /// `SHARED_BLOCK_THREADS`.
    pub(crate) fn per_row(per_row: u32) -> RowGeometry {
        let rows_per_block = if per_row <= 32 {
            SHARED_BLOCK_THREADS / per_row
        } else {
            1
        };
        RowGeometry {
            threads_per_row: per_row,
            rows_per_block,
        }
    }

    pub fn threads(&self) -> u32 {
        self.threads_per_row * self.rows_per_block
    }

    /// One row group per row.
    pub fn config(&self, rows: usize) -> LaunchConfig {
        // check_rows_cols bounds rows by the grid's 2^31 - 1.
        let blocks = rows.div_ceil(self.rows_per_block as usize).max(1) as u32;
        LaunchConfig {
            grid: [blocks, 1, 1],
            block: [self.threads_per_row, self.rows_per_block, 1],
            dynamic_smem_bytes: 0,
            programmatic_dependent: false,
        }
    }

    /// The walk of an aligned row of `cols` elements of `T` under this geometry.
    pub fn walk<T>(&self, kernel: &RowKernel, cols: usize) -> Walk {
        let chunks = cols / chunk_elems::<T>() as usize;
        if chunks <= (self.threads_per_row * kernel.resident_chunks) as usize {
            Walk::Resident
        } else {
            Walk::Streamed
        }
    }
}

/// A one-row-group-per-row launch of `kernel` (entry point `entry`) for `T` on a GPU of
/// `sms` SMs: the checked shape as kernel arguments, and the launch record.
pub fn plan_rows<T>(
    kernel: &RowKernel,
    entry: &'static str,
    rows: usize,
    cols: usize,
    sms: u32,
    threads: Threads,
) -> Result<(u32, u32, Launched), Error> {
    let checked = check_rows_cols(entry, rows, cols)?;
    let g = RowGeometry::select_for::<T>(kernel, rows, cols, sms, threads)?;
    Ok(row_launch(
        entry,
        checked,
        rows,
        g,
        g.walk::<T>(kernel, cols),
    ))
}

/// The record of a one-row-group-per-row launch of `entry` under `g`, its rows taking
/// `walk`, for the checked shape `checked` (kernel arguments) of `rows` rows.
pub(crate) fn row_launch(
    entry: &'static str,
    checked: (u32, u32),
    rows: usize,
    g: RowGeometry,
    walk: Walk,
) -> (u32, u32, Launched) {
    let launched = Launched {
        kernel: entry,
        config: g.config(rows),
        choice: format!(
            "threads_per_row={} rows_per_block={} walk={walk}",
            g.threads_per_row, g.rows_per_block
        )
        .into(),
    };
    (checked.0, checked.1, launched)
}

/// Blocks per SM a grid-stride kernel's wave holds: `wanted`, capped at what the route's cubin
/// of `kernel` holds at `threads` per block (the build's offline occupancy; a PTX route keeps
/// `wanted`).
pub fn wave_blocks_per_sm(gpu: &Gpu, kernel: &str, threads: u32, wanted: u32) -> u32 {
    match gpu.modelled_blocks_per_sm(kernel, threads, 0) {
        Ok(Some(held)) if held > 0 => wanted.min(held),
        _ => wanted,
    }
}

/// A shape the kernel cannot take, as an `Err` naming the kernel and the rule.
pub fn shape_error(kernel: &'static str, requirement: &'static str) -> Error {
    LaunchError::Geometry {
        kernel,
        requirement,
        config: LaunchConfig::linear(0, 0),
    }
    .into()
}

/// Rows and columns of a row op: both at least 1, rows within the grid, columns within
/// the kernels' 32-bit column arithmetic.
pub fn check_rows_cols(
    kernel: &'static str,
    rows: usize,
    cols: usize,
) -> Result<(u32, u32), Error> {
    if rows == 0 || cols == 0 {
        return Err(shape_error(kernel, "at least one row and one column"));
    }
    if rows > i32::MAX as usize {
        return Err(shape_error(
            kernel,
            "at most 2^31 - 1 rows (one grid row group each)",
        ));
    }
    if cols > MAX_COLS {
        return Err(shape_error(kernel, "at most 2^30 columns"));
    }
    Ok((rows as u32, cols as u32))
}

/// Each output against every other buffer of the launch (outputs included): the kernels
/// declare them `__restrict__`, and a write landing in another buffer would be a race.
pub fn check_disjoint(outputs: &[BufferArg], inputs: &[BufferArg]) -> Result<(), LaunchError> {
    for (i, out) in outputs.iter().enumerate() {
        for other in outputs[i + 1..].iter().chain(inputs) {
            out.disjoint(other)?;
        }
    }
    Ok(())
}

/// `rows * cols` elements of `T` in bytes.
pub fn tensor_bytes<T>(rows: usize, cols: usize) -> u64 {
    (rows as u64) * (cols as u64) * std::mem::size_of::<T>() as u64
}

/// The value of `constexpr int NAME = N;` in a kernel source (tests keep the Rust copies
/// of the kernels' constants equal to the kernels' own).
#[cfg(test)]
pub(crate) fn cu_constant(source: &str, name: &str) -> u32 {
    let needle = format!("constexpr int {name} = ");
    let start = source
        .find(&needle)
        .unwrap_or_else(|| panic!("no `{needle}` in the kernel source"))
        + needle.len();
    let digits: String = source[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Bf16;

    /// A kernel built as the forward norms' (8 resident chunks, up to 1024 threads a row) with
    /// the quarter-SM spread budget: the selector's rules apart from the wave budget, which
    /// `forward_norms_softmax_and_swiglu_rows_spread_up_to_a_wave` checks on the ops' own kernels.
    const QUARTER: RowKernel = RowKernel {
        name: "rows_test",
        resident_chunks: 8,
        max_threads: 1024,
        spread_threads_per_sm: SPREAD_THREADS_PER_SM,
        warp_chunks: 0,
        short_threads: 0,
        spread_block_threads: SPREAD_BLOCK_THREADS,
    };

    fn auto<T>(cols: usize) -> RowGeometry {
        RowGeometry::select::<T>(&QUARTER, cols, Threads::Auto).unwrap()
    }

    #[test]
    fn selector_keeps_rows_resident_with_the_fewest_threads() {
        // bf16, 8 elements per chunk, 8 chunks per thread: 64 columns per thread.
        assert_eq!(
            auto::<Bf16>(4096),
            RowGeometry {
                threads_per_row: 64,
                rows_per_block: 1
            }
        );
        assert_eq!(auto::<Bf16>(8192).threads_per_row, 128);
        assert_eq!(auto::<Bf16>(14336).threads_per_row, 224);
        assert_eq!(auto::<Bf16>(32768).threads_per_row, 512);
        assert_eq!(auto::<f32>(4096).threads_per_row, 128);
        for cols in [4096, 8192, 14336, 32768] {
            let g = auto::<Bf16>(cols);
            assert_eq!(g.walk::<Bf16>(&QUARTER, cols), Walk::Resident, "{cols}");
        }
        // Past 1024 x 8 chunks the row is streamed.
        let g = auto::<Bf16>(1 << 17);
        assert_eq!(g.threads_per_row, 1024);
        assert_eq!(g.walk::<Bf16>(&QUARTER, 1 << 17), Walk::Streamed);
    }

    #[test]
    fn short_rows_share_a_block() {
        for cols in [1, 7, 128, 1024] {
            let g = auto::<Bf16>(cols);
            assert_eq!((g.threads_per_row, g.rows_per_block), (16, 8), "{cols}");
        }
        let g = auto::<Bf16>(2048);
        assert_eq!((g.threads_per_row, g.rows_per_block), (32, 4));
        assert_eq!(g.config(9).grid, [3, 1, 1]);
        assert_eq!(g.config(9).block, [32, 4, 1]);
        assert_eq!(
            auto::<Bf16>(4097).threads_per_row,
            96,
            "65 threads round up to whole warps"
        );
    }

    fn for_rows<T>(rows: usize, cols: usize) -> RowGeometry {
        RowGeometry::select_for::<T>(&QUARTER, rows, cols, 132, Threads::Auto).unwrap()
    }

    #[test]
    fn few_rows_are_spread_over_more_threads() {
        // One row of 768 bf16 (96 chunks): 16 threads of 6 chunks under the fewest-threads
        // rule; spread, 48 threads of 2 would do, and past a warp a row takes a block of 128.
        assert_eq!(auto::<Bf16>(768).threads_per_row, 16);
        assert_eq!(for_rows::<Bf16>(1, 768), RowGeometry::per_row(128));
        assert_eq!(for_rows::<Bf16>(100, 768), RowGeometry::per_row(128));
        // Rows of at most a warp at 2 chunks keep their width: 392 columns, 49 chunks, 32.
        assert_eq!(for_rows::<Bf16>(1, 392).threads_per_row, 32);
        // Within the kernel's maximum.
        let narrow = RowKernel {
            max_threads: 96,
            ..QUARTER
        };
        let g = RowGeometry::select_for::<Bf16>(&narrow, 1, 768, 132, Threads::Auto);
        assert_eq!(g.unwrap().threads_per_row, 96);
        // 16 rows of 8192 (1024 chunks): 512 threads of 2, 16 blocks.
        assert_eq!(for_rows::<Bf16>(16, 8192).threads_per_row, 512);
        // A row longer than the kernel's threads take at 2 chunks keeps the maximum.
        assert_eq!(for_rows::<Bf16>(1, 32768).threads_per_row, 1024);
        assert_eq!(for_rows::<Bf16>(1, 1 << 17).threads_per_row, 1024);
        // 100 rows of 4096: 256 threads of 2 (25,600 threads, within 132 x 512).
        assert_eq!(for_rows::<Bf16>(100, 4096).threads_per_row, 256);
        // Rows that fill the GPU under the fewest-threads rule keep it.
        for (rows, cols) in [(1024, 4096), (4096, 4096), (16384, 768), (32768, 32768)] {
            assert_eq!(
                for_rows::<Bf16>(rows, cols),
                auto::<Bf16>(cols),
                "{rows}x{cols}"
            );
        }
        // In between, as many threads as the budget allows, in whole warps.
        let g = for_rows::<Bf16>(1000, 768);
        assert_eq!((g.threads_per_row, g.rows_per_block), (64, 1));
        let g = for_rows::<Bf16>(3000, 768);
        assert_eq!(
            (g.threads_per_row, g.rows_per_block),
            (16, 8),
            "budget 22: 16"
        );
        // Every spread launch stays within the budget, or is the fewest-threads one.
        for rows in [1usize, 2, 5, 16, 100, 1024, 4000] {
            for cols in [1usize, 7, 768, 2048, 3072, 6144, 8192, 14336, 20000, 32768] {
                let g = for_rows::<Bf16>(rows, cols);
                let fewest = auto::<Bf16>(cols);
                assert!(g.threads_per_row >= fewest.threads_per_row, "{rows}x{cols}");
                if g != fewest {
                    let launched = rows as u64 * u64::from(g.threads_per_row);
                    assert!(
                        launched <= 132 * SPREAD_THREADS_PER_SM,
                        "{rows}x{cols}: {g:?}"
                    );
                    assert_eq!(g.walk::<Bf16>(&QUARTER, cols), Walk::Resident);
                }
            }
        }
        // Fixed threads are kept whatever the rows.
        let g = RowGeometry::select_for::<Bf16>(&QUARTER, 1, 8192, 132, Threads::PerRow(32));
        assert_eq!(g.unwrap().threads_per_row, 32);
    }

    #[test]
    fn the_backward_norms_and_softmax_forward_spread_a_chunk_a_thread_up_to_8_warps() {
        use crate::ops::{layernorm, rmsnorm, softmax};
        let threads = |kernel: &RowKernel, rows, cols| {
            RowGeometry::select_for::<Bf16>(kernel, rows, cols, 132, Threads::Auto)
                .unwrap()
                .threads_per_row
        };
        for kernel in [rmsnorm::BWD, layernorm::BWD, softmax::FWD] {
            assert_eq!(kernel.spread_block_threads, SPREAD_CHUNK_THREADS);
            for rows in [1, 5, 100] {
                // 2048 columns, 256 chunks: a chunk a thread (the spread's 2 gave 128).
                assert_eq!(threads(&kernel, rows, 2048), 256, "{}", kernel.name);
                assert_eq!(threads(&kernel, rows, 3072), 256, "{}", kernel.name);
                // 768 columns, 96 chunks: a block of 128, not more threads than chunks.
                assert_eq!(threads(&kernel, rows, 768), 128, "{}", kernel.name);
                // 8192 columns, 1024 chunks: the spread's 2 chunks a thread, 512.
                assert_eq!(threads(&kernel, rows, 8192), 512, "{}", kernel.name);
            }
            // f32 2048 columns (512 chunks): 256 threads of 2.
            let f32_threads =
                RowGeometry::select_for::<f32>(&kernel, 1, 2048, 132, Threads::Auto).unwrap();
            assert_eq!(f32_threads.threads_per_row, 256);
        }
        // Within the kernel's threads (the RMSNorm backward on sm_80: 512) and the budget:
        // 1024 rows of 2048 within the quarter's 66 threads a row keep the fewest, 64.
        assert_eq!(threads(&rmsnorm::BWD, 1024, 2048), 64);
        let narrow = RowKernel {
            max_threads: 192,
            ..rmsnorm::BWD
        };
        assert_eq!(threads(&narrow, 1, 2048), 192);
        // The other kernels keep a block of 128 at 2048 columns.
        for kernel in [rmsnorm::FWD_RESIDUAL, softmax::BWD, QUARTER] {
            assert_eq!(kernel.spread_block_threads, SPREAD_BLOCK_THREADS);
            assert_eq!(threads(&kernel, 1, 2048), 128, "{}", kernel.name);
        }
    }

    #[test]
    fn forward_norms_softmax_and_swiglu_rows_spread_up_to_a_wave() {
        use crate::ops::{layernorm, rmsnorm, softmax, swiglu};
        for kernel in [
            rmsnorm::FWD,
            rmsnorm::FWD_RESIDUAL,
            layernorm::FWD,
            layernorm::FWD_RESIDUAL,
            softmax::FWD,
            softmax::BWD,
            swiglu::INTERLEAVED,
        ] {
            assert_eq!(kernel.spread_threads_per_sm, WAVE_SPREAD_THREADS_PER_SM);
        }
        let wave = |rows, cols| {
            RowGeometry::select_for::<Bf16>(&rmsnorm::FWD, rows, cols, 132, Threads::Auto)
                .unwrap()
                .threads_per_row
        };
        // 1024 rows: 132 threads a row within a wave, 128 (the quarter's budget gave 64).
        assert_eq!(wave(1024, 2048), 128);
        assert_eq!(wave(1024, 3072), 128);
        assert_eq!(wave(1024, 768), 128, "past a warp, a block of 128");
        assert_eq!(wave(1024, 8192), 128, "the fewest threads already");
        // 4000 rows: 33, 32 (the quarter's gave the fewest, 16).
        assert_eq!(wave(4000, 768), 32);
        assert_eq!(wave(4000, 2048), 32);
        assert_eq!(
            wave(16384, 768),
            16,
            "rows that fill the GPU keep the fewest"
        );
        for rows in [1usize, 5, 100, 1000, 1024, 2000, 4000, 16384] {
            for cols in [768usize, 2048, 3072, 8192, 20000] {
                let g = wave(rows, cols);
                let fewest = auto::<Bf16>(cols).threads_per_row;
                assert!(
                    g == fewest || rows as u64 * u64::from(g) <= 132 * WAVE_SPREAD_THREADS_PER_SM,
                    "{rows}x{cols}: {g}"
                );
            }
        }
    }

    #[test]
    fn fixed_threads_are_checked() {
        for t in [16, 32, 64, 96, 1024] {
            assert_eq!(
                RowGeometry::select::<Bf16>(&QUARTER, 4096, Threads::PerRow(t))
                    .unwrap()
                    .threads_per_row,
                t
            );
        }
        for t in [0, 8, 48, 1056] {
            let e = RowGeometry::select::<Bf16>(&QUARTER, 4096, Threads::PerRow(t)).unwrap_err();
            assert!(e.to_string().contains("threads per row"), "{e}");
        }
    }

    #[test]
    fn shapes_are_checked() {
        assert!(check_rows_cols("k", 0, 4).is_err());
        assert!(check_rows_cols("k", 4, 0).is_err());
        assert!(check_rows_cols("k", 4, MAX_COLS + 1).is_err());
        assert_eq!(check_rows_cols("k", 1, 7).unwrap(), (1, 7));
        assert_eq!(tensor_bytes::<Bf16>(3, 7), 42);
    }
}
