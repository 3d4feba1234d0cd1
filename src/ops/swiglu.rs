//! SwiGLU forward `out = silu(gate) * up` (`cuda/swiglu.cu`), from two tensors of the same
//! shape, or from one interleaved `[rows, 2 * cols]` tensor whose rows hold the gate half
//! (columns `0..cols`) then the up half (`cols..2 * cols`). bf16, f16 or f32 storage, any
//! length and alignment.
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::swiglu::{swiglu, swiglu_interleaved};
//! use cubins::ops::Threads;
//! use cubins::runtime::{Bf16, Gpu};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let (rows, cols) = (16, 14336);
//! let gate = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! let up = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! let gate_up = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * 2 * cols])?;
//! let mut out = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! swiglu(&gpu, &stream, &gate, &up, &mut out)?;
//! let launched = swiglu_interleaved(&gpu, &stream, &gate_up, &mut out, rows, cols, Threads::Auto)?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?);
//! # Ok(()) }
//! ```

use super::rows::{
    check_disjoint, chunk_elems, plan_rows, shape_error, tensor_bytes, RowKernel,
    SPREAD_BLOCK_THREADS, SPREAD_THREADS_PER_SM, WAVE_SPREAD_THREADS_PER_SM,
};
use super::{Launched, Threads};
use crate::kernels::{SwigluFwd, SwigluFwdInterleaved};
use crate::runtime::launchers::Dtype;
use crate::runtime::{DeviceRead, DeviceWrite, Error, Gpu, KernelSpec, LaunchConfig, StreamHandle};

/// The interleaved kernel walks rows with 4 chunks of each half in flight per thread; rows
/// spread over up to a wave of threads (run136, fixed threads at 1024 rows: 128 a row against
/// the quarter budget's 64, 1.032x at 768 columns, 1.034x at 2048).
pub const INTERLEAVED: RowKernel = RowKernel {
    name: "swiglu_fwd_interleaved",
    resident_chunks: 4,
    max_threads: 1024,
    spread_threads_per_sm: WAVE_SPREAD_THREADS_PER_SM,
    warp_chunks: 0,
    short_threads: 0,
    spread_block_threads: SPREAD_BLOCK_THREADS,
};

/// Threads of a block that takes one segment of a row (one chunk each, at most).
pub const SEGMENT_THREADS: u32 = 128;

/// How the interleaved kernel splits each row over `segments` blocks (grid.y) of
/// `seg_chunks` body chunks (`seg_chunks` 0: whole rows, one segment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segments {
    pub segments: u32,
    pub seg_chunks: u32,
}

impl Segments {
    const WHOLE: Segments = Segments {
        segments: 1,
        seg_chunks: 0,
    };

    /// With automatic threads and rows too few to fill the GPU (an elementwise op has no
    /// reduction to keep a row in one block): segments of [`SEGMENT_THREADS`] threads of at
    /// most one chunk each, as many as the launch's [`SPREAD_THREADS_PER_SM`] budget allows.
    /// One row of 32768 bf16 columns had one block walk it: 0.28x torch.compile, which
    /// spreads it over the GPU.
    pub fn select<T>(rows: usize, cols: usize, sms: u32, threads: Threads) -> Segments {
        if threads != Threads::Auto {
            return Segments::WHOLE;
        }
        let chunks = cols.div_ceil(chunk_elems::<T>() as usize) as u64;
        let per_row = u64::from(sms) * SPREAD_THREADS_PER_SM
            / (rows.max(1) as u64 * u64::from(SEGMENT_THREADS));
        let wanted = chunks.div_ceil(u64::from(SEGMENT_THREADS)).min(per_row);
        if wanted <= 1 {
            return Segments::WHOLE;
        }
        let seg_chunks = chunks
            .div_ceil(wanted)
            .next_multiple_of(u64::from(SEGMENT_THREADS));
        Segments {
            segments: chunks.div_ceil(seg_chunks) as u32,
            seg_chunks: seg_chunks as u32,
        }
    }
}

/// The flat kernel's block (its `__launch_bounds__`).
const FLAT_THREADS: u32 = 256;

/// The smallest block a small flat launch takes: 2 warps.
const FLAT_MIN_THREADS: u32 = 64;

/// The flat launch's (blocks, threads a block) for `chunks` chunks on `sms` SMs: a chunk a
/// thread, in blocks of [`FLAT_THREADS`]; a launch of fewer such blocks than SMs halves its
/// blocks, down to [`FLAT_MIN_THREADS`], so that more SMs issue its loads (torch.compile's
/// kernel at 5 x 8192 runs 80 blocks where 256-thread blocks give 20: 3.01 against 3.62 us,
/// run135). The kernel strides by the grid's threads, whatever the block.
fn flat_geometry(chunks: u64, sms: u32) -> (u32, u32) {
    let mut threads = FLAT_THREADS;
    while threads > FLAT_MIN_THREADS && chunks.div_ceil(u64::from(threads)) < u64::from(sms) {
        threads /= 2;
    }
    // The grid's 2^31 - 1 blocks cover 2^42 elements; beyond, the kernel loops.
    let blocks = chunks
        .div_ceil(u64::from(threads))
        .clamp(1, i32::MAX as u64) as u32;
    (blocks, threads)
}

/// `out[i] = silu(gate[i]) * up[i]` for the `out.len()` elements of out (gate and up hold at
/// least as many).
pub fn swiglu<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    gate: &impl DeviceRead<T, S>,
    up: &impl DeviceRead<T, S>,
    out: &mut impl DeviceWrite<T, S>,
) -> Result<Launched, Error> {
    let name = SwigluFwd::<T>::info().name;
    let (gate, up, out) = (gate.read(stream), up.read(stream), out.write(stream));
    let (gate, up, out) = (gate.view, up.view, out.view);
    let n = out.len;
    if n == 0 {
        return Err(shape_error(name, "at least one element"));
    }
    let (gb, ub, ob) = (gate.arg("gate"), up.arg("up"), out.arg("out"));
    gb.at_least(tensor_bytes::<T>(1, n))?;
    ub.at_least(tensor_bytes::<T>(1, n))?;
    check_disjoint(&[ob], &[gb, ub])?;
    let chunks = (n as u64).div_ceil(u64::from(super::rows::chunk_elems::<T>()));
    let (blocks, threads) = flat_geometry(chunks, gpu.device().sm_count);
    let launched = Launched {
        kernel: name,
        config: LaunchConfig::linear(blocks, threads),
        choice: format!("flat n={n}").into(),
    };
    // SAFETY: gate and up hold at least n elements, out exactly n; out overlaps neither; the
    // kernel waits on the grid dependency before its first access.
    unsafe {
        launched.launch_after_previous(
            &gpu.kernel::<SwigluFwd<T>>()?,
            stream,
            (gate.ptr, up.ptr, out.ptr, n as u64),
        )
    }
}

/// `out[r][c] = silu(gate_up[r][c]) * gate_up[r][cols + c]`: gate_up holds `rows * 2 * cols`
/// elements, out `rows * cols`.
pub fn swiglu_interleaved<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    gate_up: &impl DeviceRead<T, S>,
    out: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    threads: Threads,
) -> Result<Launched, Error> {
    let entry = SwigluFwdInterleaved::<T>::info().name;
    let sms = gpu.device().sm_count;
    let segments = Segments::select::<T>(rows, cols, sms, threads);
    let row_threads = match segments.segments {
        1 => threads,
        _ => Threads::PerRow(SEGMENT_THREADS),
    };
    let (r, c, mut launched) = plan_rows::<T>(&INTERLEAVED, entry, rows, cols, sms, row_threads)?;
    launched.config.grid[1] = segments.segments;
    if segments.segments > 1 {
        launched.choice = format!(
            "{} segments={} seg_chunks={}",
            launched.choice, segments.segments, segments.seg_chunks
        )
        .into();
    }
    let (gate_up, out) = (gate_up.read(stream), out.write(stream));
    let (gate_up, out) = (gate_up.view, out.view);
    let (gub, ob) = (gate_up.arg("gate_up"), out.arg("out"));
    gub.at_least(2 * tensor_bytes::<T>(rows, cols))?;
    ob.at_least(tensor_bytes::<T>(rows, cols))?;
    check_disjoint(&[ob], &[gub])?;
    // SAFETY: gate_up covers rows * 2 * cols elements, out rows * cols; disjoint; the kernel
    // waits on the grid dependency before its first access.
    unsafe {
        launched.launch_after_previous(
            &gpu.kernel::<SwigluFwdInterleaved<T>>()?,
            stream,
            (gate_up.ptr, out.ptr, r, c, segments.seg_chunks),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rows::cu_constant;

    #[test]
    fn kernel_constants_match_cuda_swiglu_cu() {
        let cu = include_str!("../../cuda/swiglu.cu");
        assert_eq!(INTERLEAVED.resident_chunks, cu_constant(cu, "kUnits"));
        assert_eq!(INTERLEAVED.max_threads, cu_constant(cu, "kRowMaxThreads"));
        assert_eq!(FLAT_THREADS, cu_constant(cu, "kThreads"));
    }

    #[test]
    fn small_flat_launches_take_smaller_blocks_over_more_sms() {
        // 5 x 8192 bf16: 5120 chunks, 20 blocks of 256; 40 of 128 and 80 of 64 are still
        // fewer than 132 SMs: 80 blocks of 64.
        assert_eq!(flat_geometry(5120, 132), (80, 64));
        // 100 x 2048: 25,600 chunks, 100 blocks of 256, 200 of 128.
        assert_eq!(flat_geometry(25_600, 132), (200, 128));
        // Launches of at least an SM's worth of 256-thread blocks keep them.
        assert_eq!(flat_geometry(132 * 256, 132), (132, 256));
        assert_eq!(flat_geometry(98_304, 132), (384, 256));
        // One chunk: one block of the smallest.
        assert_eq!(flat_geometry(1, 132), (1, 64));
        // Every chunk has a thread, and blocks stay within the grid's limit.
        for chunks in [1u64, 63, 64, 65, 8447, 8448, 33_792, 1 << 40] {
            let (blocks, threads) = flat_geometry(chunks, 132);
            assert!((FLAT_MIN_THREADS..=FLAT_THREADS).contains(&threads));
            assert!(
                u64::from(blocks) * u64::from(threads) >= chunks.min(i32::MAX as u64 * 64),
                "{chunks}"
            );
        }
    }

    /// Columns of one row the interleaved kernel's segment walk touches, each counted: the
    /// kernel's arithmetic (`RowPlan::anchored` then `segment` in rows.cuh, tiles of `kUnits`
    /// chunks, edge columns in segment 0; the elementwise walk's interleaved runs) for a row
    /// whose out row starts `misalign` elements past a 16-byte boundary.
    fn segment_coverage(cols: usize, misalign: usize, vector: bool, seg: Segments) -> Vec<u32> {
        let (vec, threads, units) = (8usize, SEGMENT_THREADS as usize, 4usize);
        let segments = seg.segments as usize;
        let mut seen = vec![0u32; cols];
        if !vector {
            for s in 0..segments {
                for lane in 0..threads {
                    let mut c = s * threads + lane;
                    while c < cols {
                        seen[c] += 1;
                        c += threads * segments;
                    }
                }
            }
            return seen;
        }
        let head = ((vec - misalign) % vec).min(cols);
        let body = (cols - head) / vec;
        let tail_start = head + body * vec;
        let edges = head + (cols - tail_start);
        for s in 0..segments {
            let (start, chunks) = match seg.seg_chunks as usize {
                0 => (head, body),
                per => {
                    let first = (s * per).min(body);
                    (head + first * vec, per.min(body - first))
                }
            };
            for t in 0..chunks.div_ceil(threads * units) {
                for k in 0..units {
                    for lane in 0..threads {
                        let m = (t * units + k) * threads + lane;
                        if m < chunks {
                            let c0 = start + m * vec;
                            assert_eq!((misalign + c0) % vec, 0, "chunk {m} of segment {s}");
                            seen[c0..c0 + vec].iter_mut().for_each(|n| *n += 1);
                        }
                    }
                }
            }
            if s == 0 {
                for lane in 0..edges.min(threads) {
                    seen[if lane < head {
                        lane
                    } else {
                        tail_start + lane - head
                    }] += 1;
                }
            }
        }
        seen
    }

    #[test]
    fn segments_cover_every_column_once() {
        use crate::runtime::Bf16;
        for rows in [1usize, 2, 5, 16, 100] {
            for cols in [1usize, 7, 768, 1031, 2048, 8192, 14336, 20000, 32768, 32771] {
                let seg = Segments::select::<Bf16>(rows, cols, 132, Threads::Auto);
                for misalign in [0usize, 1, 3, 7] {
                    for vector in [true, false] {
                        let seen = segment_coverage(cols, misalign, vector, seg);
                        assert!(
                            seen.iter().all(|&n| n == 1),
                            "{rows}x{cols} misalign {misalign} vector {vector} {seg:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn few_rows_are_split_into_segments_of_whole_blocks() {
        use crate::runtime::Bf16;
        let seg = |rows, cols| Segments::select::<Bf16>(rows, cols, 132, Threads::Auto);
        // One row of 32768 (4096 chunks): 32 blocks of 128 threads, one chunk each.
        assert_eq!(
            seg(1, 32768),
            Segments {
                segments: 32,
                seg_chunks: 128
            }
        );
        // 16 rows of 8192: 8 segments a row (16 x 8 x 128 threads, within 132 x 512).
        assert_eq!(seg(16, 8192).segments, 8);
        // 100 rows of 8192: the budget allows 5 blocks a row; segments of whole blocks, 4.
        assert_eq!(
            seg(100, 8192),
            Segments {
                segments: 4,
                seg_chunks: 256
            }
        );
        // A row of at most one block's chunks, many rows, or fixed threads: whole rows.
        for (rows, cols) in [(1, 768), (1, 1024), (1024, 4096), (16384, 32768)] {
            assert_eq!(seg(rows, cols), Segments::WHOLE, "{rows}x{cols}");
        }
        let fixed = Segments::select::<Bf16>(1, 32768, 132, Threads::PerRow(256));
        assert_eq!(fixed, Segments::WHOLE);
        // The segments cover the row's chunks, none empty, within the budget.
        for rows in [1usize, 2, 5, 16, 100, 1024] {
            for cols in [7usize, 768, 2048, 3072, 6144, 8192, 14336, 20000, 32768] {
                let s = seg(rows, cols);
                if s == Segments::WHOLE {
                    continue;
                }
                let chunks = cols.div_ceil(8) as u64;
                let (n, per) = (u64::from(s.segments), u64::from(s.seg_chunks));
                assert!(
                    n * per >= chunks && (n - 1) * per < chunks,
                    "{rows}x{cols}: {s:?}"
                );
                let threads = rows as u64 * n * u64::from(SEGMENT_THREADS);
                assert!(
                    threads <= 132 * SPREAD_THREADS_PER_SM,
                    "{rows}x{cols}: {s:?}"
                );
            }
        }
    }
}
