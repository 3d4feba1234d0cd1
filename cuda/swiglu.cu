// SwiGLU forward: out = silu(gate) * up, silu(g) = g / (1 + exp(-g)).
// Storage bf16, fp16 or fp32; all arithmetic in fp32, one rounding at the store.
//
//   swiglu_fwd_*(gate, up, out, n): three tensors of n elements (any shape, contiguous).
//   swiglu_fwd_interleaved_*(gate_up, out, rows, cols): gate_up is [rows, 2 * cols], each
//     row the gate half (columns 0..cols) then the up half (cols..2 * cols); out is
//     [rows, cols]. (The layout of a fused gate/up projection whose weight stacks W_gate
//     on W_up.)
//
// The flat kernel walks 16-byte chunks, one a thread under the host's grid (a block per 256
// chunks); past the grid's 2^31 - 1 blocks it loops, kFlatUnits chunks of each input in flight
// per thread. The interleaved kernel walks rows (rows.cuh geometry): each
// row's chunks anchored on its out row, the gate and up halves 16-byte accessed when they
// share that alignment; with few rows, gridDim.y blocks share each row, one segment of
// seg_chunks chunks each (nothing is reduced over a row, so segments are independent).
// Either falls back to element accesses when the tensors' alignments differ.
#include "cubins/arch.cuh"
#include "cubins/common.cuh"
#include "cubins/dtype.cuh"
#include "cubins/rows.cuh"

namespace {
using namespace cubins;

constexpr int kThreads = 256;
constexpr int kRowMaxThreads = 1024;
// Chunks of each input in flight per thread per step.
constexpr int kUnits = 4;
// The flat kernel on Blackwell keeps 2: there CUDA 13.0's ptxas needs 64-74 registers for 4
// (3-4 blocks of 256 per SM) and 32-48 for 2, so it is built for 6 blocks per SM at 40
// registers (ptxas: 40 registers, no spills, on sm_100 and sm_120); 1536 threads x 2 x 2
// chunks keep 96 KB in flight per SM. Elsewhere 4 fit in 32 registers without a bound.
constexpr int kFlatUnits = kBlackwell ? 2 : kUnits;
#if CUBINS_BLACKWELL
#define CUBINS_SWIGLU_FLAT_BOUNDS __launch_bounds__(kThreads, 6)
#else
#define CUBINS_SWIGLU_FLAT_BOUNDS __launch_bounds__(kThreads)
#endif

__device__ __forceinline__ float silu_mul(float g, float u) {
  // __fdividef: no division subroutine; for g < -87, exp(-g) > 2^126 and the quotient is
  // 0 (the true value is below 1e-36).
  return __fdividef(g, 1.0f + __expf(-g)) * u;
}

template <class T>
__device__ __forceinline__ Chunk swiglu_chunk(const Chunk& g, const Chunk& u) {
  constexpr int kVec = Storage<T>::kVec;
  float f[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) f[i] = silu_mul(element<T>(g, i), element<T>(u, i));
  return pack<T>(f);
}

template <class T>
__device__ __forceinline__ T swiglu_element(T g, T u) {
  return from_float<T>(silu_mul(to_float(g), to_float(u)));
}

__device__ __forceinline__ int misalignment_of(const void* p, int elem_bytes) {
  return static_cast<int>((reinterpret_cast<uintptr_t>(p) & 15u) / static_cast<unsigned>(elem_bytes));
}

template <class T>
__device__ __forceinline__ void swiglu_flat(const T* __restrict__ gate, const T* __restrict__ up,
                                            T* __restrict__ out, uint64_t n) {
  constexpr int kVec = Storage<T>::kVec;
  const uint64_t tid = global_thread_index();
  const uint64_t stride = grid_threads();
  const int mis = misalignment_of(out, sizeof(T));
  const bool vec = misalignment_of(gate, sizeof(T)) == mis && misalignment_of(up, sizeof(T)) == mis;
  if (!vec) {
    for (uint64_t i = tid; i < n; i += stride) out[i] = swiglu_element(gate[i], up[i]);
    return;
  }
  // Head (before out's first 16-byte boundary), body of whole chunks, tail.
  const uint64_t head = min(static_cast<uint64_t>((kVec - mis) % kVec), n);
  const uint64_t chunks = (n - head) / kVec;
  const uint64_t tail = head + chunks * kVec;
  const T* g = gate + head;
  const T* u = up + head;
  T* o = out + head;
  uint64_t c = tid;
  for (; c + (kFlatUnits - 1) * stride < chunks; c += kFlatUnits * stride) {
    Chunk gc[kFlatUnits], uc[kFlatUnits];
#pragma unroll
    for (int j = 0; j < kFlatUnits; ++j) {
      gc[j] = load_chunk(g + (c + j * stride) * kVec);
      uc[j] = load_chunk(u + (c + j * stride) * kVec);
    }
#pragma unroll
    for (int j = 0; j < kFlatUnits; ++j) store_chunk(o + (c + j * stride) * kVec, swiglu_chunk<T>(gc[j], uc[j]));
  }
  for (; c < chunks; c += stride) store_chunk(o + c * kVec, swiglu_chunk<T>(load_chunk(g + c * kVec), load_chunk(u + c * kVec)));
  // Edge elements: one per thread of the first threads.
  const uint64_t edges = head + (n - tail);
  if (tid < edges) {
    const uint64_t i = tid < head ? tid : tail + (tid - head);
    out[i] = swiglu_element(gate[i], up[i]);
  }
}

template <class T>
__device__ __forceinline__ void swiglu_interleaved(const T* __restrict__ gate_up, T* __restrict__ out,
                                                   uint32_t rows, uint32_t cols, uint32_t seg_chunks) {
  constexpr int kVec = Storage<T>::kVec;
  const RowGroup g = RowGroup::current();
  const bool live = g.row < rows;
  const int64_t r = live ? g.row : 0;
  const T* gr = gate_up + r * 2 * static_cast<int64_t>(cols);
  const T* ur = gr + cols;
  T* orow = out + r * static_cast<int64_t>(cols);
  const int n = static_cast<int>(cols);
  const auto row = RowPlan<T>::anchored(orow, n, live, g);
  if (!(row.vector_ok(gr) && row.vector_ok(ur))) {
    // The segments interleave runs of a block's width.
    const int step = row.threads * static_cast<int>(gridDim.y);
    for (int c = static_cast<int>(blockIdx.y) * row.threads + row.lane; c < row.cols; c += step) {
      orow[c] = swiglu_element(gr[c], ur[c]);
    }
    return;
  }
  const auto p = row.segment(static_cast<int>(blockIdx.y), static_cast<int>(seg_chunks));
  for (int t = 0; t < p.tiles(kUnits); ++t) {
    Chunk gc[kUnits], uc[kUnits];
    for_each_chunk<kUnits>(p, t, [&](int k, int m) {
      gc[k] = load_chunk(gr + p.col(m));
      uc[k] = load_chunk(ur + p.col(m));
    });
    for_each_chunk<kUnits>(p, t, [&](int k, int m) { store_chunk(orow + p.col(m), swiglu_chunk<T>(gc[k], uc[k])); });
  }
  if (p.has_edge()) orow[p.edge_col] = swiglu_element(gr[p.edge_col], ur[p.edge_col]);
}

}  // namespace

#define CUBINS_SWIGLU_ENTRY_POINTS(T, SUFFIX)                                                                      \
  extern "C" __global__ void CUBINS_SWIGLU_FLAT_BOUNDS                                                            \
      swiglu_fwd_##SUFFIX(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ out, uint64_t n) { \
    cubins::wait_for_previous_grid();                                                                              \
    swiglu_flat<T>(gate, up, out, n);                                                                              \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kRowMaxThreads)                                                     \
      swiglu_fwd_interleaved_##SUFFIX(const T* __restrict__ gate_up, T* __restrict__ out, uint32_t rows,           \
                                      uint32_t cols, uint32_t seg_chunks) {                                        \
    cubins::wait_for_previous_grid();                                                                              \
    swiglu_interleaved<T>(gate_up, out, rows, cols, seg_chunks);                                                   \
  }

CUBINS_SWIGLU_ENTRY_POINTS(__nv_bfloat16, bf16)
CUBINS_SWIGLU_ENTRY_POINTS(__half, f16)
CUBINS_SWIGLU_ENTRY_POINTS(float, f32)
