// LayerNorm over the last dimension of a row-major [rows, cols] tensor:
//   y = (x - mean) * rstd * w + b,   rstd = 1 / sqrt(var + eps)
// with var the biased variance mean((x - mean)^2), summed from the row as it is held (in
// registers on the resident walk) once the mean is known, never as E[x^2] - mean^2. With
// an optional fused residual add (h = round(x + residual) is written as the updated
// residual, and y = layernorm(h) of that stored h), and the backward pass, with xhat =
// (x - mean) * rstd recomputed from x and g = dy * w:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//   dw = sum over rows of dy * xhat,   db = sum over rows of dy
// Storage bf16, fp16 or fp32; all arithmetic in fp32. Row geometry: rows.cuh; the walks
// (resident, streamed, elementwise) and the forward's code: norm.cuh.
//
// Backward: as rmsnorm.cu's whole-row kernel, with two column sums (dw, db) per row group in
// shared memory and two partial rows per block in the [blocks, 2, round_up(cols, 4)] fp32
// workspace, which `layernorm_dweight_*` sums over blocks in a fixed order (colsum.cuh); one
// range (a null workspace) writes dw and db itself.
// A row's statistics take two reductions: sum x (the mean), then (sum (x - mean)^2, sum g,
// sum g (x - mean)) together, from which rstd, mean(g) and mean(g xhat) follow.
#include "cubins/arch.cuh"
#include "cubins/cluster_half.cuh"
#include "cubins/norm.cuh"

namespace {
using namespace cubins;

// ---------------------------------------------------------------- forward

// y = (v - mean) * rstd * w + b (norm.cuh's Norm).
struct LayerScale : NormStats {
  static constexpr bool kCentered = true;
  static constexpr bool kBias = true;
  __device__ __forceinline__ static float first(float v) { return v; }
  __device__ __forceinline__ float operator()(float v, float w, float b) const { return (v - mean) * rstd * w + b; }
};

// As rmsnorm.cu's: up to 1024 threads per row at <= 64 registers, 8 resident chunks per
// thread (the residual add: x and the residual, kResidualGroup chunks at a time). The
// second reduction reads the resident chunks again.
constexpr int kMaxThreads = 1024;
constexpr int kFwdChunks = 8;
constexpr int kResidualChunks = 8;

// ---------------------------------------------------------------- backward

// x and dy resident, 4 chunks each, and the dw and db accumulators in shared memory. The
// walks need 98-118 registers (sm_80 to sm_90; at 64 they spill 100-120 bytes), so a block
// takes up to 512 threads. A row longer than a resident tile (threads x 4 chunks) streams
// a chunk at a time, reading x and dy again in each pass (at 2 chunks sm_90's ptxas spills
// at 128 registers); its block holds its SM alone (the accumulators of such a row exceed
// half of shared memory), so it prefetches its next row into L2 once this row's first pass
// has read it. CUDA 13.0's Blackwell ptxas (sm_100, sm_120) needs 167-174 registers without
// a bound, so that build takes 384 threads at up to 168, where the streamed walk spills 20
// bytes: there a long row goes element by element. The host reads the bound from the
// loaded kernel, and so which walk a long row takes.
constexpr int kBwdChunks = 4;
constexpr int kBwdStreamChunks = 1;
constexpr int kBwdMaxThreads = 512;
constexpr int kBwdBoundThreads = kBlackwell ? 384 : kBwdMaxThreads;
// The cluster variant's CTAs per cluster, one column half of a row each.
constexpr int kClusterCtas = 2;

// Whole rows; a block the host finds alone on its SM prefetches its next row.
using WholeRow = WholeRows<!kBlackwell, true>;
// The next row's prefetch on the streamed walk: 2 lines a thread (a 512-thread block covers
// 128 KB, past the longest row whose accumulators fit shared memory).
constexpr int kStreamPrefetchTile = 8;

// Column sums 0 and 1 of a row group: dw and db.
template <class T>
using BwdRow = BwdRowOf<T, 2, float3>;

// A row's statistics, and its outputs from them.
struct RowStats {
  float mean;
  float rstd;
  float mean_g;      // mean(dy * w)
  float mean_gxhat;  // mean(dy * w * xhat)

  // From the mean and the reduced (sum (x - mean)^2, sum g, sum g (x - mean)).
  __device__ __forceinline__ static RowStats of(float mean, float3 s, float inv_n, float eps) {
    const float rstd = rsqrtf(s.x * inv_n + eps);
    return RowStats{mean, rstd, s.y * inv_n, s.z * rstd * inv_n};
  }
  __device__ __forceinline__ float xhat(float x) const { return (x - mean) * rstd; }
  __device__ __forceinline__ float dx(float g, float xh) const { return rstd * (g - mean_g - xh * mean_gxhat); }
};

__device__ __forceinline__ float3 add_terms(float3 s, float d, float g) {
  return make_float3(s.x + d * d, s.y + g, s.z + g * d);
}

// Pass 1: sum x over body chunks. kKeep: one tile, whose x and dy stay in registers.
template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ float bwd_pass1(const RowPlan<T>& p, const BwdRow<T>& a, Chunk (&xk)[kChunks],
                                           Chunk (&dyk)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  float sx = 0.0f;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk xc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      xc[k] = load_ro_chunk(a.x + p.col(m));
      if constexpr (kKeep) dyk[k] = load_ro_chunk(a.dy + p.col(m));
    });
    for_each_chunk<kChunks>(p, t, [&](int k, int) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) sx += element<T>(xc[k], i);
      if constexpr (kKeep) xk[k] = xc[k];
    });
  }
  return sx;
}

// The second sums over body chunks: (x - mean)^2, g, g (x - mean).
template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ float3 bwd_sums(const RowPlan<T>& p, const BwdRow<T>& a, float mean,
                                           const Chunk (&xk)[kChunks], const Chunk (&dyk)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  float3 s = make_float3(0.0f, 0.0f, 0.0f);
  bwd_each_chunk<T, kChunks, kKeep>(p, a, xk, dyk, [&](const Chunk& xc, const Chunk& dyc, const Chunk& wc, int) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) s = add_terms(s, element<T>(xc, i) - mean, element<T>(dyc, i) * element<T>(wc, i));
  });
  return s;
}

// Pass 2: dx, and dy * xhat and dy into the dw and db accumulators.
template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_pass2(const RowPlan<T>& p, const BwdRow<T>& a, const RowStats& r,
                                          const Chunk (&xk)[kChunks], const Chunk (&dyk)[kChunks]) {
  bwd_each_chunk<T, kChunks, kKeep>(p, a, xk, dyk, [&](const Chunk& xc, const Chunk& dyc, const Chunk& wc, int m) {
    bwd_store_chunk(p, a, m, [&](int i, float (&dwdb)[2]) {
      const float xh = r.xhat(element<T>(xc, i)), dv = element<T>(dyc, i);
      dwdb[0] = dv * xh;
      dwdb[1] = dv;
      return r.dx(dv * element<T>(wc, i), xh);
    });
  });
}

// The row's statistics from this thread's sum of x and its second sums given the mean
// (each reduction a round of the span's exchange where CTAs share the row).
template <class Span, class Second>
__device__ __forceinline__ RowStats bwd_stats(float sx, float3* scratch, float inv_n, float eps, const Span& span,
                                              Second&& second) {
  const float mean = span.row_sum(sx, reinterpret_cast<float*>(scratch), 0) * inv_n;
  const float3 s = span.row_sum(second(mean), scratch, 1);
  return RowStats::of(mean, s, inv_n, eps);
}

// This thread's edge column's outputs.
template <class T>
__device__ __forceinline__ void bwd_column(const BwdRow<T>& a, const RowStats& r, int c, float xv, float dv) {
  const float xh = r.xhat(xv);
  a.acc.add_col(c, {dv * xh, dv});
  a.dx[c] = from_float<T>(r.dx(dv * load_ro(a.w + c), xh));
}

template <class T, class Span, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_row_vector(const RowPlan<T>& p, const BwdRow<T>& a, const Span& span) {
  Chunk xk[kChunks], dyk[kChunks];
  float sx = bwd_pass1<T, kChunks, kKeep>(p, a, xk, dyk);
  const BwdEdge e = BwdEdge::load(p, a);
  if (p.has_edge()) sx += e.x;
  if constexpr (Span::kPrefetch) bwd_prefetch_next<T, kKeep ? kChunks : kStreamPrefetchTile>(p, a);
  const RowStats r = bwd_stats(sx, a.scratch, a.inv_n, a.eps, span, [&](float mean) {
    float3 s = bwd_sums<T, kChunks, kKeep>(p, a, mean, xk, dyk);
    if (p.has_edge()) s = add_terms(s, e.x - mean, e.dy * load_ro(a.w + p.edge_col));
    return s;
  });
  bwd_pass2<T, kChunks, kKeep>(p, a, r, xk, dyk);
  if (p.has_edge()) bwd_column(a, r, p.edge_col, e.x, e.dy);
}

template <class T, class Span>
__device__ __forceinline__ void bwd_row_elementwise(const RowPlan<T>& p, const BwdRow<T>& a, const Span& span) {
  float sx = 0.0f;
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) sx += load_ro(a.x + c);
  const RowStats r = bwd_stats(sx, a.scratch, a.inv_n, a.eps, span, [&](float mean) {
    float3 s = make_float3(0.0f, 0.0f, 0.0f);
#pragma unroll kElementUnroll
    for (int c = p.lane; c < p.cols; c += p.threads) {
      s = add_terms(s, load_ro(a.x + c) - mean, load_ro(a.dy + c) * load_ro(a.w + c));
    }
    return s;
  });
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) bwd_column(a, r, c, load_ro(a.x + c), load_ro(a.dy + c));
}

// Rows [group * rows_per_block, ...) in steps of blockDim.y, over the span's columns of
// each row (Span: WholeRow or ClusterHalf; norm.cuh's bwd_rows). Dynamic shared memory:
// blockDim.y * 2 * DwAcc::floats(span columns) fp32. partial: [groups, 2, round_up(cols, 4)]
// fp32 (dw's partial row, then db's), or null where the launch is one row range: then the
// blocks write dw and db themselves. alone_on_sm: the host's occupancy query found one
// block of this launch per SM (nothing else overlaps its reduction and writes), so its row
// groups prefetch their next rows (a WholeRow build that prefetches).
template <class T, class Span>
__device__ __forceinline__ void layernorm_bwd(const T* __restrict__ x, const T* __restrict__ w,
                                              const T* __restrict__ dy, T* __restrict__ dx,
                                              float* __restrict__ partial, T* __restrict__ dw, T* __restrict__ db,
                                              uint32_t rows, uint32_t cols, uint32_t rows_per_block, float eps,
                                              bool alone_on_sm) {
  __shared__ float3 scratch[32];
  const Span span = Span::current();
  const int n = static_cast<int>(cols);
  const int first_col = span.first_col(n);
  const int span_cols = span.cols(n);
  const float inv_n = inv_cols(max(n, 1));
  bwd_rows<T, 2>(span, ColSumOut<T, 2>{partial, {dw, db}}, rows, cols, rows_per_block,
                 [&](const RowPlan<T>& p, int64_t offset, float* acc, const Span& row_span, bool has_next) {
                   const BwdRow<T> a{x + offset,
                                     w + first_col,
                                     dy + offset,
                                     dx + offset,
                                     ColSums<T, 2>::at(acc, span_cols),
                                     eps,
                                     inv_n,
                                     row_group_scratch(scratch),
                                     alone_on_sm && has_next};
                   const bool vec = p.vector_ok(a.x) && p.vector_ok(a.dy) && p.vector_ok(a.dx) && p.vector_ok(a.w);
                   if (vec && p.tiles(kBwdChunks) <= 1) {
                     bwd_row_vector<T, Span, kBwdChunks, true>(p, a, row_span);
                   } else if (vec && Span::kStreams) {
                     bwd_row_vector<T, Span, kBwdStreamChunks, false>(p, a, row_span);
                   } else {
                     bwd_row_elementwise<T>(p, a, row_span);
                   }
                 });
}

// The cluster variant: rows whose dw and db accumulators exceed a block's shared memory
// (past 29 007 columns) shared by the two CTAs of a cluster, one column half each (the
// whole-row kernel's 512 threads and walks over half the columns; two exchanges per row:
// the mean's sum, then the second sums). Built for sm_90 (and sm_90a), where the host
// selects it; every other arch's entry point traps (no clusters before sm_90; Blackwell's
// build keeps the elementwise walk, whose registers this variant has not been built for).
template <class T>
__device__ __forceinline__ void layernorm_bwd_cluster(const T* __restrict__ x, const T* __restrict__ w,
                                                      const T* __restrict__ dy, T* __restrict__ dx,
                                                      float* __restrict__ partial, T* __restrict__ dw,
                                                      T* __restrict__ db, uint32_t rows, uint32_t cols,
                                                      uint32_t rows_per_cluster, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  layernorm_bwd<T, ClusterHalf<T, 2, true>>(x, w, dy, dx, partial, dw, db, rows, cols, rows_per_cluster, eps, false);
#else
  __trap();
#endif
}

}  // namespace

#define CUBINS_LAYERNORM_ENTRY_POINTS(T, SUFFIX)                                                                     \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                         \
      layernorm_fwd_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,             \
                             T* __restrict__ y, uint32_t rows, uint32_t cols, float eps) {                          \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    norm_fwd<T, LayerScale, false, kFwdChunks>(x, nullptr, nullptr, w, b, y, rows, cols, eps);                     \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                         \
      layernorm_fwd_residual_##SUFFIX(const T* __restrict__ x, const T* residual_in, T* residual_out,               \
                                      const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,          \
                                      uint32_t rows, uint32_t cols, float eps) {                                    \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    norm_fwd<T, LayerScale, true, kResidualChunks>(x, residual_in, residual_out, w, b, y, rows, cols, eps);         \
  }                                                                                                                 \
  extern "C" __global__ void CUBINS_CLUSTER_DIMS(kFwdClusterCtas) __launch_bounds__(kMaxThreads)                     \
      layernorm_fwd_cluster_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,     \
                                     T* __restrict__ y, uint32_t rows, uint32_t cols, float eps) {                  \
    norm_fwd_cluster<T, LayerScale, false, kFwdChunks>(x, nullptr, nullptr, w, b, y, rows, cols, eps);             \
  }                                                                                                                 \
  extern "C" __global__ void CUBINS_CLUSTER_DIMS(kFwdClusterCtas) __launch_bounds__(kMaxThreads)                     \
      layernorm_fwd_residual_cluster_##SUFFIX(const T* __restrict__ x, const T* residual_in, T* residual_out,       \
                                              const T* __restrict__ w, const T* __restrict__ b,                     \
                                              T* __restrict__ y, uint32_t rows, uint32_t cols, float eps) {         \
    norm_fwd_cluster<T, LayerScale, true, kResidualChunks>(x, residual_in, residual_out, w, b, y, rows, cols, eps); \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kBwdBoundThreads)                                                    \
      layernorm_bwd_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,            \
                             T* __restrict__ dx, float* __restrict__ partial, T* __restrict__ dw,                   \
                             T* __restrict__ db, uint32_t rows, uint32_t cols, uint32_t rows_per_block, float eps,  \
                             uint32_t alone_on_sm) {                                                                \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    layernorm_bwd<T, WholeRow>(x, w, dy, dx, partial, dw, db, rows, cols, rows_per_block, eps, alone_on_sm != 0);   \
  }                                                                                                                 \
  extern "C" __global__ void CUBINS_CLUSTER_DIMS(kClusterCtas) __launch_bounds__(kBwdMaxThreads)                    \
      layernorm_bwd_cluster_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,    \
                                     T* __restrict__ dx, float* __restrict__ partial, T* __restrict__ dw,           \
                                     T* __restrict__ db, uint32_t rows, uint32_t cols, uint32_t rows_per_cluster,   \
                                     float eps) {                                                                   \
    layernorm_bwd_cluster<T>(x, w, dy, dx, partial, dw, db, rows, cols, rows_per_cluster, eps);                    \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kDwWarps * 32)                                                       \
      layernorm_dweight_##SUFFIX(const float* __restrict__ partial, T* __restrict__ dw, T* __restrict__ db,         \
                                 uint32_t blocks, uint32_t cols) {                                                  \
    cubins::wait_for_previous_grid();                                                                               \
    cubins::allow_next_grid();                                                                                      \
    sum_partial_rows<T, 2>(partial, dw, db, blocks, cols);                                                              \
  }

CUBINS_LAYERNORM_ENTRY_POINTS(__nv_bfloat16, bf16)
CUBINS_LAYERNORM_ENTRY_POINTS(__half, f16)
CUBINS_LAYERNORM_ENTRY_POINTS(float, f32)
