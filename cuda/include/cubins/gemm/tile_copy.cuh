// Global -> shared copy of one operand tile for one pipeline stage, with cp.async.
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/args.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/ptx.cuh"

namespace cubins {
namespace gemm {

template <class T>
struct RawBits;
template <>
struct RawBits<__nv_bfloat16> {
  using type = uint16_t;
};
template <>
struct RawBits<__half> {
  using type = uint16_t;
};
template <>
struct RawBits<float> {
  using type = uint32_t;
};

// The largest divisor of n that is at most cap (at least 1).
constexpr int largest_divisor_upto(int n, int cap) {
  return cap <= 1 ? 1 : n % cap == 0 ? cap : largest_divisor_upto(n, cap - 1);
}

// Which logical chunk (row, col) copy i of thread `tid` takes, and where it lands: thread tid
// copies chunks tid, tid + threads, ... in row-major order, so consecutive threads take
// consecutive chunks of a row and a warp reads whole rows. Host-callable for fingerprints.cuh.
struct CopySlot {
  int row;
  int col;
  int offset;  // in the tile, 16-byte units
};

template <class TileLayout>
CUBINS_HD CopySlot copy_slot(int i, int tid, int threads, int rows, int cpr) {
  const int idx = i * threads + tid;
  return CopySlot{idx / cpr, idx % cpr, TileLayout::chunk(idx / cpr, idx % cpr, rows, cpr)};
}

// A ROWS x COLS window of a row-major global matrix (rows_total x cols_total, leading
// dimension ld) copied into a tile laid out by TileLayout (chunk order: copy_slot).
// Elements outside the matrix become zeros, which is what tails need: zero rows and
// columns add nothing to the products. ELEM_BATCH: chunks whose element loads the element
// path issues together (the largest divisor of a thread's chunks up to it).
template <class T, class TileLayout, int ROWS, int COLS, int THREADS, int ELEM_BATCH = 1>
struct TileCopy {
 public:
  static constexpr int kElemsPerChunk = 16 / static_cast<int>(sizeof(T));
  static constexpr int kChunksPerRow = COLS / kElemsPerChunk;
  static constexpr int kChunks = ROWS * kChunksPerRow;
  static constexpr int kPerThread = kChunks / THREADS;
  static constexpr int kRowsPerPass = THREADS / kChunksPerRow;
  // Chunks the tile occupies in shared memory (padding included).
  static constexpr int kFootprint = TileLayout::footprint(ROWS, kChunksPerRow);
  static_assert(COLS % kElemsPerChunk == 0, "tile rows are whole 16-byte chunks");
  static_assert(kChunks % THREADS == 0, "every thread copies the same number of chunks");
  static_assert(kChunksPerRow <= 8 || kChunksPerRow % 8 == 0, "wide rows are whole 8-chunk panels");
  static_assert(THREADS % kChunksPerRow == 0, "a thread's chunks share one column");
  static constexpr int kElemBatch = largest_divisor_upto(kPerThread, ELEM_BATCH);

  // `vec`: 16-byte aligned base and leading dimension, so a chunk is one cp.async (partial
  // chunks at the column edge read only their valid bytes). Otherwise element loads.
  __device__ __forceinline__ static void issue(uint4* tile, const T* g, int64_t ld, int row0, int col0,
                                               int rows_total, int cols_total, bool vec, int tid) {
    // One branch per tile, not per chunk: both conditions are uniform over the block.
    const bool interior = row0 + ROWS <= rows_total && col0 + COLS <= cols_total;
    if (vec && interior) {
      // Every chunk whole and inside: plain 16-byte copies, no bounds arithmetic. A thread's
      // chunks share a column and lie kRowsPerPass rows apart: one pointer and a stride.
      const CopySlot first = copy_slot<TileLayout>(0, tid, THREADS, ROWS, kChunksPerRow);
      const T* src = g + (row0 + first.row) * ld + col0 + first.col * kElemsPerChunk;
      const int64_t pass = kRowsPerPass * ld;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const CopySlot s = copy_slot<TileLayout>(i, tid, THREADS, ROWS, kChunksPerRow);
        cubins::cp_async_16(tile + s.offset, src + i * pass);
      }
    } else if (vec) {
      // Edge tiles are rare: a rolled loop keeps their registers out of the main loop's budget.
#pragma unroll 1
      for (int i = 0; i < kPerThread; ++i) {
        const Chunk c = chunk(i, tid, row0, col0, rows_total, cols_total);
        const T* src = g + c.grow * ld + c.gcol;
        cp_async_16_zfill(smem_addr(tile + c.offset),
                          c.valid > 0 ? static_cast<const void*>(src) : static_cast<const void*>(g),
                          static_cast<unsigned>(c.valid) * sizeof(T));
      }
    } else {
      // Element loads, a batch of chunks at a time: every load of the batch is issued before
      // the first store to shared memory, so a thread waits one memory latency per batch.
      using Raw = typename RawBits<T>::type;
#pragma unroll 1
      for (int i0 = 0; i0 < kPerThread; i0 += kElemBatch) {
        union {
          uint4 v;
          Raw e[kElemsPerChunk];
        } u[kElemBatch];
        int offset[kElemBatch];
#pragma unroll
        for (int j = 0; j < kElemBatch; ++j) {
          const Chunk c = chunk(i0 + j, tid, row0, col0, rows_total, cols_total);
          const Raw* src = reinterpret_cast<const Raw*>(g + c.grow * ld + c.gcol);
          offset[j] = c.offset;
#pragma unroll
          for (int e = 0; e < kElemsPerChunk; ++e) u[j].e[e] = e < c.valid ? src[e] : Raw(0);
        }
#pragma unroll
        for (int j = 0; j < kElemBatch; ++j) tile[offset[j]] = u[j].v;
      }
    }
  }

 private:
  struct Chunk {
    int offset;  // in the tile, 16-byte units
    int grow;
    int gcol;
    int valid;  // elements of the chunk inside the matrix, 0..kElemsPerChunk
  };

  __device__ __forceinline__ static Chunk chunk(int i, int tid, int row0, int col0, int rows_total,
                                                int cols_total) {
    const CopySlot s = copy_slot<TileLayout>(i, tid, THREADS, ROWS, kChunksPerRow);
    Chunk c;
    c.offset = s.offset;
    c.grow = row0 + s.row;
    c.gcol = col0 + s.col * kElemsPerChunk;
    const int valid = c.grow < rows_total ? cols_total - c.gcol : 0;
    c.valid = valid < 0 ? 0 : (valid > kElemsPerChunk ? kElemsPerChunk : valid);
    return c;
  }
};

// Copies k tile [k0, k0 + BK) of both operands into one pipeline stage: rows [m_base, ..)
// of op(A) into `sa` and columns [n_base, ..) of op(B) into `sb`, each from its stored
// orientation (K-major or MN-major, as the layout says).
template <class T, class CopyA, class CopyB, bool kAKMajor, bool kBKMajor>
__device__ __forceinline__ void copy_operand_tiles(uint4* sa, uint4* sb, const GemmArgs& p, int m_base, int n_base,
                                                   int k0, bool vec_a, bool vec_b, int tid) {
  const T* A = reinterpret_cast<const T*>(p.a);
  const T* B = reinterpret_cast<const T*>(p.b);
  if constexpr (kAKMajor) {
    CopyA::issue(sa, A, p.lda, m_base, k0, p.m, p.k, vec_a, tid);
  } else {
    CopyA::issue(sa, A, p.lda, k0, m_base, p.k, p.m, vec_a, tid);
  }
  if constexpr (kBKMajor) {
    CopyB::issue(sb, B, p.ldb, n_base, k0, p.n, p.k, vec_b, tid);
  } else {
    CopyB::issue(sb, B, p.ldb, k0, n_base, p.k, p.n, vec_b, tid);
  }
}

}  // namespace gemm
}  // namespace cubins
