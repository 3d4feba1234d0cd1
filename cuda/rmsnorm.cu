// RMSNorm over the last dimension of a row-major [rows, cols] tensor:
//   y = x * rstd * w,   rstd = 1 / sqrt(mean(x^2) + eps)
// with an optional fused residual add (h = round(x + residual) is written as the updated
// residual, and y = rmsnorm(h) of that stored h), and the backward pass:
//   dx = rstd * (dy * w) - x * rstd^3 * mean(dy * w * x)
//   dw = sum over rows of dy * x * rstd
// Storage bf16, fp16 or fp32; all arithmetic in fp32. Row geometry: rows.cuh; the walks
// (resident, streamed, elementwise) and the forward's code: norm.cuh.
//
// Backward: each block walks a contiguous range of rows, and each row group adds its dw
// terms into its own shared-memory row (each column's slot has one owner thread within a
// row, rows ordered by the reduction's barrier or warp sync, so no atomics). The block
// writes the sum of its row groups (in order) to a [blocks, round_up(cols, 4)] fp32
// workspace, and `rmsnorm_dweight_*` sums the workspace over blocks in a fixed order:
// the same launch geometry gives the same bits (colsum.cuh). A launch of one range (a null
// workspace) writes dw itself: one launch where one block or cluster takes every row.
// `rmsnorm_bwd_cluster_*` (sm_90) walks the same rows with the two CTAs of a cluster
// sharing each row, one column half each (cluster_half.cuh; one exchange of (sum x^2,
// sum dy w x) per row; halves resident: the sm_90 build has no streamed walk); each CTA writes its half of
// the cluster's workspace row, so `rmsnorm_dweight_*` reads the same layout.
#include "cubins/arch.cuh"
#include "cubins/cluster_half.cuh"
#include "cubins/norm.cuh"

namespace {
using namespace cubins;

// Forward: up to 1024 threads per row at <= 64 registers (1024 threads per SM), with
// up to 8 body chunks per thread kept in registers: a resident tile is 1024 x 8 chunks
// (64 Ki bf16 columns). The residual add loads x and the residual of 2 chunks at a time.
// Backward: x and dy stay resident (4 chunks each) and the dw terms go through shared
// memory. On sm_90 it takes up to 1024 threads at 64 registers: a resident tile of
// 1024 x 4 chunks (32 Ki bf16), and two blocks per SM at 14336 columns (448 threads), so
// one block's reduction and writes overlap the other's loads. That budget holds only
// without the streamed walk (its tile loop needs more registers), so a longer row takes
// the elementwise walk there. Elsewhere (sm_80, sm_86, sm_89, the PTX) it keeps 512 threads
// at up to 128 registers and streams rows past 512 x 4 chunks. On Blackwell (sm_100, sm_120)
// CUDA 13.0's ptxas needs more registers for the same walks (unbounded: 171-187 against
// 98 on sm_80; at 512 threads it spills 128-144 bytes), so that build takes 384 threads at
// up to 168 registers (ptxas: 168, no spills) and streams rows past 384 x 4 chunks; the
// host reads the bound from the loaded kernel. Its residual forward loads one chunk of
// x and the residual at a time (at 2, that ptxas spills 8-16 bytes at 64 registers).
// A block that holds its SM alone (sm_90 at 32 Ki bf16 columns: 1024 threads take the
// whole register file, and 128 KB of dw accumulator) has no loads in flight while it
// reduces and writes a row, so such a block prefetches the row group's next row of x and
// dy into L2 once its own loads have landed, before the reduction: DRAM keeps working
// through the reduction and the writes. (Issued as the row starts, the prefetches compete
// with the row's own loads: 64% of the copy ceiling at 4096 x 32768 on the H200, against
// 78% after the loads and 71% without.)
// Where several blocks share an SM they already overlap each other, and the prefetch's
// instructions cost more than it hides (measured on the H200: 87-89% of the copy
// ceiling without it, 80-86% with it at 4096-14336 columns).
// The cluster variant gives such rows two CTAs of half the threads (512 at 32 Ki bf16, the
// same 64 registers, 64 KB of dw accumulator each), so two CTAs share each SM and
// overlap each other as narrower rows do; it does not prefetch.
constexpr int kMaxThreads = 1024;
constexpr int kBwdMaxThreads = 1024;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
constexpr int kBwdBoundThreads = kBlackwell ? 384 : 512;
constexpr bool kBwdStreams = true;
#else
constexpr int kBwdBoundThreads = kBwdMaxThreads;
constexpr bool kBwdStreams = false;
#endif
constexpr int kFwdChunks = 8;
constexpr int kResidualChunks = 8;
constexpr int kBwdChunks = 4;
// The cluster variant: CTAs per cluster (one column half each), threads per CTA, and the
// CTAs per SM its 64-register budget is built for.
constexpr int kClusterCtas = 2;
constexpr int kClusterThreads = 512;
constexpr int kClusterCtasPerSm = 2;
// ---------------------------------------------------------------- forward

// y = v * rstd * w with rstd from the mean of v^2 (norm.cuh's Norm).
struct RmsScale : NormStats {
  static constexpr bool kCentered = false;
  static constexpr bool kBias = false;
  __device__ __forceinline__ static float first(float v) { return v * v; }
  __device__ __forceinline__ float operator()(float v, float w, float) const { return v * rstd * w; }
};

// kCluster: a row per cluster (norm.cuh's norm_fwd_cluster), else per row group.
template <class T, bool kResidual, bool kCluster = false>
__device__ __forceinline__ void rmsnorm_fwd(const T* __restrict__ x, const T* residual_in, T* residual_out,
                                            const T* __restrict__ w, T* __restrict__ y, uint32_t rows,
                                            uint32_t cols, float eps) {
  constexpr int kChunks = kResidual ? kResidualChunks : kFwdChunks;
  if constexpr (kCluster) {
    norm_fwd_cluster<T, RmsScale, kResidual, kChunks>(x, residual_in, residual_out, w, nullptr, y, rows, cols, eps);
  } else {
    norm_fwd<T, RmsScale, kResidual, kChunks>(x, residual_in, residual_out, w, nullptr, y, rows, cols, eps);
  }
}

// ---------------------------------------------------------------- backward

template <class T>
using BwdRow = BwdRowOf<T, 1, float2>;

// A block takes every column of its row groups (any arch). Only the 1024-thread build
// (sm_90) has blocks that hold an SM alone, and prefetch.
using WholeRow = WholeRows<kBwdStreams, kBwdBoundThreads == kBwdMaxThreads>;


// Pass 1: (sum x^2, sum dy * w * x) over body chunks; kKeep as in the forward.
template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ float2 bwd_pass1(const RowPlan<T>& p, const BwdRow<T>& a, Chunk (&xk)[kChunks],
                                            Chunk (&dyk)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  float2 sums = make_float2(0.0f, 0.0f);
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk xc[kChunks], dyc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      xc[k] = load_ro_chunk(a.x + p.col(m));
      dyc[k] = load_ro_chunk(a.dy + p.col(m));
    });
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      const Chunk wc = load_ro_chunk(a.w + p.col(m));
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const float xv = element<T>(xc[k], i);
        sums.x += xv * xv;
        sums.y += element<T>(dyc[k], i) * element<T>(wc, i) * xv;
      }
      if constexpr (kKeep) {
        xk[k] = xc[k];
        dyk[k] = dyc[k];
      }
    });
  }
  return sums;
}

// Pass 2: dx, and dy * x * rstd into the accumulator planes.
template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_pass2(const RowPlan<T>& p, const BwdRow<T>& a, float rstd, float coef,
                                          const Chunk (&xk)[kChunks], const Chunk (&dyk)[kChunks]) {
  bwd_each_chunk<T, kChunks, kKeep>(p, a, xk, dyk, [&](const Chunk& xc, const Chunk& dyc, const Chunk& wc, int m) {
    bwd_store_chunk(p, a, m, [&](int i, float (&dw)[1]) {
      const float xv = element<T>(xc, i), dv = element<T>(dyc, i);
      dw[0] = dv * xv * rstd;
      return rstd * dv * element<T>(wc, i) - coef * xv;
    });
  });
}

// rstd and coef = sum(dy w x) rstd^3 / n of the row whose sums this thread holds a share of.
struct RowScale {
  float rstd;
  float coef;
};

template <class T, class Span>
__device__ __forceinline__ RowScale bwd_scale(float2 sums, const BwdRow<T>& a, const Span& span) {
  sums = span.row_sum(sums, a.scratch);
  const float rstd = rsqrtf(sums.x * a.inv_n + a.eps);
  return RowScale{rstd, sums.y * rstd * rstd * rstd * a.inv_n};
}

template <class T, class Span, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_row_vector(const RowPlan<T>& p, const BwdRow<T>& a, const Span& span) {
  Chunk xk[kChunks], dyk[kChunks];
  float2 sums = bwd_pass1<T, kChunks, kKeep>(p, a, xk, dyk);
  const BwdEdge e = BwdEdge::load(p, a);
  if (p.has_edge()) {
    sums.x += e.x * e.x;
    sums.y += e.dy * load_ro(a.w + p.edge_col) * e.x;
  }
  // Only resident rows: the build whose blocks can hold an SM alone has no streamed walk.
  if constexpr (kKeep && Span::kPrefetch) bwd_prefetch_next<T, kChunks>(p, a);
  const RowScale k = bwd_scale(sums, a, span);
  bwd_pass2<T, kChunks, kKeep>(p, a, k.rstd, k.coef, xk, dyk);
  if (p.has_edge()) {
    a.acc.add_col(p.edge_col, {e.dy * e.x * k.rstd});
    a.dx[p.edge_col] = from_float<T>(k.rstd * e.dy * load_ro(a.w + p.edge_col) - k.coef * e.x);
  }
}

template <class T, class Span>
__device__ __forceinline__ void bwd_row_elementwise(const RowPlan<T>& p, const BwdRow<T>& a, const Span& span) {
  // fp32 unrolls less: the 64-register budget of the sm_90 build holds without spills.
  constexpr int kUnroll = sizeof(T) == 4 ? 1 : kElementUnroll;
  float2 sums = make_float2(0.0f, 0.0f);
#pragma unroll kUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float xv = load_ro(a.x + c);
    sums.x += xv * xv;
    sums.y += load_ro(a.dy + c) * load_ro(a.w + c) * xv;
  }
  const RowScale k = bwd_scale(sums, a, span);
#pragma unroll kUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float xv = load_ro(a.x + c), dv = load_ro(a.dy + c);
    a.acc.add_col(c, {dv * xv * k.rstd});
    a.dx[c] = from_float<T>(k.rstd * dv * load_ro(a.w + c) - k.coef * xv);
  }
}

// Rows [group * rows_per_block, ...) in steps of blockDim.y, over the span's columns of
// each row (Span: WholeRow or ClusterHalf), through norm.cuh's bwd_rows. Dynamic shared
// memory: blockDim.y * DwAcc::floats(span columns) fp32. partial: [groups, round_up(cols, 4)] fp32,
// or null where the launch is one row range: then the blocks write dw themselves.
template <class T, class Span>
__device__ __forceinline__ void rmsnorm_bwd(const T* __restrict__ x, const T* __restrict__ w,
                                            const T* __restrict__ dy, T* __restrict__ dx,
                                            float* __restrict__ partial, T* __restrict__ dw, uint32_t rows,
                                            uint32_t cols, uint32_t rows_per_block, float eps) {
  __shared__ float2 scratch[32];
  const Span span = Span::current();
  const int n = static_cast<int>(cols);
  const int first_col = span.first_col(n);
  const int span_cols = span.cols(n);
  // 64 registers x 1024 = the register file; row groups that step apart overlap each other.
  const bool alone_on_sm = blockDim.x * blockDim.y == kBwdMaxThreads && !row_groups_step_apart();
  const float inv_n = inv_cols(max(n, 1));
  bwd_rows<T, 1>(span, ColSumOut<T, 1>{partial, {dw}}, rows, cols, rows_per_block,
                 [&](const RowPlan<T>& p, int64_t offset, float* acc, const Span& row_span, bool has_next) {
                   const BwdRow<T> a{x + offset,           w + first_col, dy + offset, dx + offset,
                                     ColSums<T, 1>::at(acc, span_cols), eps, inv_n, row_group_scratch(scratch),
                                     alone_on_sm && has_next};
                   const bool vec = p.vector_ok(a.x) && p.vector_ok(a.dy) && p.vector_ok(a.dx) && p.vector_ok(a.w);
                   if (vec && p.tiles(kBwdChunks) <= 1) {
                     bwd_row_vector<T, Span, kBwdChunks, true>(p, a, row_span);
                   } else if (vec && Span::kStreams) {
                     bwd_row_vector<T, Span, kStreamChunks, false>(p, a, row_span);
                   } else {
                     bwd_row_elementwise<T>(p, a, row_span);
                   }
                 });
}

// The cluster variant's body is built for sm_90 (and sm_90a), where its budget of 2 CTAs
// per SM at 64 registers is tuned and the host selects it. Every arch's cubin carries every
// entry point: the others get one that traps (before sm_90 there are no clusters; the
// sm_100 and sm_120 ptxas spill the body at 64 registers).
template <class T>
__device__ __forceinline__ void rmsnorm_bwd_cluster(const T* __restrict__ x, const T* __restrict__ w,
                                                    const T* __restrict__ dy, T* __restrict__ dx,
                                                    float* __restrict__ partial, T* __restrict__ dw, uint32_t rows,
                                                    uint32_t cols, uint32_t rows_per_cluster, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  rmsnorm_bwd<T, ClusterHalf<T, 1, false>>(x, w, dy, dx, partial, dw, rows, cols, rows_per_cluster, eps);
#else
  __trap();
#endif
}

}  // namespace

#define CUBINS_RMSNORM_ENTRY_POINTS(T, SUFFIX)                                                                      \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                         \
      rmsnorm_fwd_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, uint32_t rows,      \
                           uint32_t cols, float eps) {                                                              \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    rmsnorm_fwd<T, false>(x, nullptr, nullptr, w, y, rows, cols, eps);                                              \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                         \
      rmsnorm_fwd_residual_##SUFFIX(const T* __restrict__ x, const T* residual_in, T* residual_out,                 \
                                    const T* __restrict__ w, T* __restrict__ y, uint32_t rows, uint32_t cols,       \
                                    float eps) {                                                                    \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    rmsnorm_fwd<T, true>(x, residual_in, residual_out, w, y, rows, cols, eps);                                      \
  }                                                                                                                 \
  extern "C" __global__ void CUBINS_CLUSTER_DIMS(kFwdClusterCtas) __launch_bounds__(kMaxThreads)                     \
      rmsnorm_fwd_cluster_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, uint32_t rows, \
                                   uint32_t cols, float eps) {                                                      \
    rmsnorm_fwd<T, false, true>(x, nullptr, nullptr, w, y, rows, cols, eps);                                        \
  }                                                                                                                 \
  extern "C" __global__ void CUBINS_CLUSTER_DIMS(kFwdClusterCtas) __launch_bounds__(kMaxThreads)                     \
      rmsnorm_fwd_residual_cluster_##SUFFIX(const T* __restrict__ x, const T* residual_in, T* residual_out,         \
                                            const T* __restrict__ w, T* __restrict__ y, uint32_t rows,              \
                                            uint32_t cols, float eps) {                                             \
    rmsnorm_fwd<T, true, true>(x, residual_in, residual_out, w, y, rows, cols, eps);                                \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kBwdBoundThreads)                                                      \
      rmsnorm_bwd_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,              \
                           T* __restrict__ dx, float* __restrict__ partial, T* __restrict__ dw, uint32_t rows,      \
                           uint32_t cols, uint32_t rows_per_block, float eps) {                                     \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    rmsnorm_bwd<T, WholeRow>(x, w, dy, dx, partial, dw, rows, cols, rows_per_block, eps);                           \
  }                                                                                                                 \
  extern "C" __global__ void CUBINS_CLUSTER_DIMS(kClusterCtas) __launch_bounds__(kClusterThreads, kClusterCtasPerSm) \
      rmsnorm_bwd_cluster_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,      \
                                   T* __restrict__ dx, float* __restrict__ partial, T* __restrict__ dw,             \
                                   uint32_t rows, uint32_t cols, uint32_t rows_per_cluster, float eps) {            \
    rmsnorm_bwd_cluster<T>(x, w, dy, dx, partial, dw, rows, cols, rows_per_cluster, eps);                           \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kDwWarps * 32)                                                       \
      rmsnorm_dweight_##SUFFIX(const float* __restrict__ partial, T* __restrict__ dw, uint32_t blocks,              \
                               uint32_t cols) {                                                                     \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    sum_partial_rows<T, 1>(partial, dw, nullptr, blocks, cols);                                                        \
  }

CUBINS_RMSNORM_ENTRY_POINTS(__nv_bfloat16, bf16)
CUBINS_RMSNORM_ENTRY_POINTS(__half, f16)
CUBINS_RMSNORM_ENTRY_POINTS(float, f32)
