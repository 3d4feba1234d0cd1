// Row geometry of the row kernels and the split of a row into a 16-byte body and edges.
//
// A block is blockDim.x threads per row times blockDim.y rows. Either a row spans whole
// warps (blockDim.x a multiple of 32, blockDim.y == 1) or several rows share a warp
// (blockDim.x 16 or 32). At least 16 threads per row, so every edge column below has
// its own thread.
//
// A row of `cols` columns splits, on the 16-byte boundaries of an anchor tensor's row,
// into a head (the columns before the first boundary, < kVec of them), a body of whole
// chunks of kVec columns, and a tail (< kVec columns). Body chunk m belongs to thread
// m % threads; a thread keeps up to kChunks body chunks (one tile) in registers, and
// rows longer than a tile are walked tile by tile. Head and tail columns are one per
// thread (threads 0.. of the row), read element by element. So a row whose start is not
// 16-byte aligned (row length 7 in bf16) still gets 16-byte accesses in its body.
//
// Other tensors of the row use 16-byte accesses only when their rows share the anchor's
// offset within 16 bytes; a kernel tests that once per row and otherwise walks the row
// element by element (correct for any alignment, slower).
#pragma once

#include <cstdint>
#include <type_traits>

#include "cubins/common.cuh"
#include "cubins/dtype.cuh"

namespace cubins {

struct RowGroup {
  int lane;     // thread index within the row: threadIdx.x
  int threads;  // threads per row: blockDim.x
  int64_t row;  // this thread's row (may be >= rows on the last block)

  __device__ __forceinline__ static RowGroup current() {
    return RowGroup{static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x),
                    static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y};
  }
};

constexpr int kLineBytes = 128;

// Prefetches [begin, begin + bytes) into L2: one request per 128-byte line, line i by the
// row's thread i % threads. The caller knows the range spans at most kPerThread * threads
// lines (unrolled, 32-bit offsets).
template <int kPerThread>
__device__ __forceinline__ void prefetch_l2_lines(const void* begin, int bytes, int lane, int threads) {
  static_assert(kPerThread > 0, "a bounded range");
  const int head = static_cast<int>(reinterpret_cast<uintptr_t>(begin) % kLineBytes);
  const char* first = static_cast<const char*>(begin) - head;
  const int end = head + bytes;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int at = (lane + j * threads) * kLineBytes;
    if (at < end) prefetch_l2(first + at);
  }
}

template <class T>
struct RowPlan {
  static constexpr int kVec = Storage<T>::kVec;
  int cols;
  int body_start;   // first body column (= head length)
  int body_chunks;  // whole chunks in the body; 0 for a row past the end
  int edge_col;     // this thread's head or tail column, or -1
  int threads;
  int lane;

  // Body on the 16-byte boundaries of `anchor_row`. `live` is false for a row past the
  // end: no body, no edge, still a reduction partner.
  __device__ __forceinline__ static RowPlan anchored(const T* anchor_row, int cols, bool live, const RowGroup& g) {
    const int misalign = static_cast<int>((reinterpret_cast<uintptr_t>(anchor_row) & 15u) / sizeof(T));
    return with_head((kVec - misalign) % kVec, cols, live, g);
  }

  // Body chunks at columns head + m * kVec, whatever the addresses (head 0: the same
  // columns belong to the same thread in every row).
  __device__ __forceinline__ static RowPlan with_head(int head, int cols, bool live, const RowGroup& g) {
    RowPlan p;
    p.cols = live ? cols : 0;
    head = min(head, p.cols);
    p.body_start = head;
    p.body_chunks = (p.cols - head) / kVec;
    const int tail_start = head + p.body_chunks * kVec;
    const int edges = head + (p.cols - tail_start);
    p.edge_col = g.lane >= edges ? -1 : (g.lane < head ? g.lane : tail_start + (g.lane - head));
    p.threads = g.threads;
    p.lane = g.lane;
    return p;
  }

  // Segment s of a row split into runs of seg_chunks body chunks, one block each
  // (elementwise kernels spreading few rows over the GPU): its body chunks; the head and tail
  // columns stay with segment 0. seg_chunks 0: the whole row.
  __device__ __forceinline__ RowPlan segment(int s, int seg_chunks) const {
    if (seg_chunks == 0) return *this;
    RowPlan q = *this;
    const int first = min(s * seg_chunks, body_chunks);
    q.body_start = body_start + first * kVec;
    q.body_chunks = min(seg_chunks, body_chunks - first);
    if (s != 0) q.edge_col = -1;
    return q;
  }

  // No columns (a row another block walks whole): still a reduction partner, as a row
  // past the end is.
  __device__ __forceinline__ RowPlan nothing() const {
    RowPlan q = *this;
    q.cols = 0;
    q.body_chunks = 0;
    q.edge_col = -1;
    return q;
  }

  // Tiles of threads * chunks_per_thread body chunks.
  __device__ __forceinline__ int tiles(int chunks_per_thread) const {
    const int per_tile = threads * chunks_per_thread;
    return (body_chunks + per_tile - 1) / per_tile;
  }
  // This thread's k-th body chunk of tile t, and whether the row has it.
  __device__ __forceinline__ int chunk(int t, int k, int chunks_per_thread) const {
    return (t * chunks_per_thread + k) * threads + lane;
  }
  __device__ __forceinline__ bool has(int m) const { return m < body_chunks; }
  __device__ __forceinline__ int col(int m) const { return body_start + m * kVec; }
  __device__ __forceinline__ bool has_edge() const { return edge_col >= 0; }

  // Whether `row` (a tensor indexed like the anchor, or by column like a weight) can use
  // 16-byte accesses on this plan's body chunks.
  __device__ __forceinline__ bool vector_ok(const T* row) const {
    return ((reinterpret_cast<uintptr_t>(row + body_start)) & 15u) == 0;
  }

  // Prefetches the columns of `row` (another row of this plan's length, one this row
  // group reads later) into L2, spread over the row's threads. The row fits one tile of
  // kTileChunks chunks per thread, so it spans at most threads * kTileChunks * 16 / 128 + 2
  // lines (a partial line at each end), which kTileChunks * 16 / 128 + 1 lines per thread
  // cover (>= 16 threads).
  template <int kTileChunks>
  __device__ __forceinline__ void prefetch_row_l2(const T* row) const {
    constexpr int kPerThread = kTileChunks * static_cast<int>(sizeof(Chunk)) / kLineBytes + 1;
    prefetch_l2_lines<kPerThread>(row, cols * static_cast<int>(sizeof(T)), lane, threads);
  }
};

// Calls f(std::integral_constant<int, i>) for i = kFrom, kFrom + kStep, ... < kEnd.
template <int kFrom, int kEnd, int kStep, class F>
__device__ __forceinline__ void static_for(F&& f) {
  if constexpr (kFrom < kEnd) {
    f(std::integral_constant<int, kFrom>{});
    static_for<kFrom + kStep, kEnd, kStep>(f);
  }
}

// Calls f(k, m) for this thread's body chunks m of tile t (k: the chunk's slot among the
// thread's kChunks; only slots kFrom .. kFrom + kCount), unrolled so per-slot arrays stay
// in registers.
template <int kChunks, int kFrom = 0, int kCount = kChunks, class T, class F>
__device__ __forceinline__ void for_each_chunk(const RowPlan<T>& p, int t, F&& f) {
#pragma unroll
  for (int k = kFrom; k < kFrom + kCount; ++k) {
    const int m = p.chunk(t, k, kChunks);
    if (p.has(m)) f(k, m);
  }
}

}  // namespace cubins
