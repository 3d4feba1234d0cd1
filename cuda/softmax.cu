// Row softmax over the last dimension of a row-major [rows, cols] tensor:
//   y = exp(x - max(x)) / sum(exp(x - max(x)))
// and its backward:
//   dx = y * (dy - sum(y * dy))
// Storage bf16, fp16 or fp32; all arithmetic in fp32. Row geometry: rows.cuh; the walks
// (resident, streamed, elementwise) as in rmsnorm.cu.
//
// The forward reduces (max, sum of exp(x - max)) pairs in one pass: each thread takes the
// max of its columns, sums exp(x - that max), and pairs combine by rescaling the smaller
// max's sum. exp is the hardware exp2 (ex2.approx) of x * log2(e): within 2 ulp over the
// range softmax uses, and the same instruction on every run. The output's 1 / sum joins the
// exponent: y = 2^((x - max) log2(e) - log2(sum)), one FFMA and one ex2 after the
// subtraction (x - max stays exact near the max, whatever the logits' magnitude).
#include "cubins/dtype.cuh"
#include "cubins/reduce.cuh"
#include "cubins/rows.cuh"

namespace {
using namespace cubins;

// Up to 1024 threads per row at <= 64 registers (1024 threads per SM). Forward keeps 8
// chunks of x per thread (a resident tile of 64 Ki bf16 columns); backward keeps y and dy,
// 4 chunks each.
constexpr int kMaxThreads = 1024;
constexpr int kFwdChunks = 8;
constexpr int kBwdChunks = 4;
constexpr int kStreamChunks = 2;
constexpr int kElementUnroll = 4;

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float exp2_approx(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

// The output exp(x - max) / sum as one exp2: 2^((x - max) log2(e) - log2(sum)).
struct Softmax {
  float mx;
  float log2_sum;
  __device__ __forceinline__ Softmax(float m, float sum) : mx(m), log2_sum(__log2f(sum)) {}
  __device__ __forceinline__ float operator()(float x) const { return exp2_approx(fmaf(x - mx, kLog2e, -log2_sum)); }
};

// A running (max, sum of exp(v - max)) pair, as float2 (x: max, y: sum) so the row
// reduction's shuffles carry it.
__device__ __forceinline__ float scale_to(float m, float new_max) {
  // -inf == -inf (no columns yet) must scale by 1, not exp(nan).
  return m == new_max ? 1.0f : __expf(m - new_max);
}

struct MaxSum {
  __device__ __forceinline__ float2 operator()(float2 a, float2 b) const {
    const float m = fmaxf(a.x, b.x);
    return make_float2(m, a.y * scale_to(a.x, m) + b.y * scale_to(b.x, m));
  }
};

__device__ __forceinline__ float2 no_columns() { return make_float2(-INFINITY, 0.0f); }

// Adds the kVec values of a chunk: one rescale per chunk, not per value.
template <class T>
__device__ __forceinline__ float2 add_chunk(float2 acc, const Chunk& c) {
  constexpr int kVec = Storage<T>::kVec;
  float m = element<T>(c, 0);
#pragma unroll
  for (int i = 1; i < kVec; ++i) m = fmaxf(m, element<T>(c, i));
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kVec; ++i) s += __expf(element<T>(c, i) - m);
  return MaxSum{}(acc, make_float2(m, s));
}

__device__ __forceinline__ float2 add_value(float2 acc, float v) { return MaxSum{}(acc, make_float2(v, 1.0f)); }

// ---------------------------------------------------------------- forward

template <class T>
struct FwdRow {
  const T* __restrict__ x;
  T* __restrict__ y;
  float2* scratch;
};

template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ void fwd_row_vector(const RowPlan<T>& p, const FwdRow<T>& a) {
  constexpr int kVec = Storage<T>::kVec;
  Chunk h[kChunks];
  float2 acc;
  if constexpr (kKeep) {
    // One tile: the row's max first, then one sum of exps against it. Two reductions of
    // one float each: a step of the (max, sum) pair's reduction costs two exps and two
    // shuffles, and a short row's time is its reductions' latency.
    float* scratch = reinterpret_cast<float*>(a.scratch);
    for_each_chunk<kChunks>(p, 0, [&](int k, int m) { h[k] = load_chunk(a.x + p.col(m)); });
    const float edge = p.has_edge() ? to_float(a.x[p.edge_col]) : -INFINITY;
    float mx = edge;
    for_each_chunk<kChunks>(p, 0, [&](int k, int) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) mx = fmaxf(mx, element<T>(h[k], i));
    });
    mx = row_reduce(mx, Max{}, -INFINITY, scratch);
    // A row of -inf has mx = -inf, and every exp(-inf - -inf) is NaN: its softmax is NaN.
    float s = p.has_edge() ? exp2_approx((edge - mx) * kLog2e) : 0.0f;
    for_each_chunk<kChunks>(p, 0, [&](int k, int) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) s += exp2_approx((element<T>(h[k], i) - mx) * kLog2e);
    });
    acc = make_float2(mx, row_reduce(s, Sum{}, 0.0f, scratch));
  } else {
    acc = no_columns();
    for (int t = 0; t < p.tiles(kChunks); ++t) {
      Chunk c[kChunks];
      for_each_chunk<kChunks>(p, t, [&](int k, int m) { c[k] = load_chunk(a.x + p.col(m)); });
      for_each_chunk<kChunks>(p, t, [&](int k, int) { acc = add_chunk<T>(acc, c[k]); });
    }
    if (p.has_edge()) acc = add_value(acc, to_float(a.x[p.edge_col]));
    acc = row_reduce(acc, MaxSum{}, no_columns(), a.scratch);
  }
  const Softmax out(acc.x, acc.y);

  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk c[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) { c[k] = kKeep ? h[k] : load_chunk(a.x + p.col(m)); });
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      float f[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) f[i] = out(element<T>(c[k], i));
      store_chunk(a.y + p.col(m), pack<T>(f));
    });
  }
  if (p.has_edge()) a.y[p.edge_col] = from_float<T>(out(to_float(a.x[p.edge_col])));
}

template <class T>
__device__ __forceinline__ void fwd_row_elementwise(const RowPlan<T>& p, const FwdRow<T>& a) {
  float2 acc = no_columns();
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) acc = add_value(acc, to_float(a.x[c]));
  acc = row_reduce(acc, MaxSum{}, no_columns(), a.scratch);
  const Softmax out(acc.x, acc.y);
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) a.y[c] = from_float<T>(out(to_float(a.x[c])));
}

template <class T>
__device__ __forceinline__ void softmax_fwd(const T* __restrict__ x, T* __restrict__ y, uint32_t rows,
                                            uint32_t cols) {
  __shared__ float2 scratch[32];
  const RowGroup g = RowGroup::current();
  const bool live = g.row < rows;
  const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols);
  const FwdRow<T> a{x + offset, y + offset, scratch};
  const auto p = RowPlan<T>::anchored(a.x, static_cast<int>(cols), live, g);
  if (!p.vector_ok(a.y)) {
    fwd_row_elementwise<T>(p, a);
  } else if (p.tiles(kFwdChunks) <= 1) {
    fwd_row_vector<T, kFwdChunks, true>(p, a);
  } else {
    fwd_row_vector<T, kStreamChunks, false>(p, a);
  }
}

// ---------------------------------------------------------------- backward

template <class T>
struct BwdRow {
  const T* __restrict__ y;
  const T* __restrict__ dy;
  T* __restrict__ dx;
  float* scratch;
};

template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_row_vector(const RowPlan<T>& p, const BwdRow<T>& a) {
  constexpr int kVec = Storage<T>::kVec;
  Chunk yk[kChunks], dyk[kChunks];
  float dot = 0.0f;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk yc[kChunks], dyc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      yc[k] = load_chunk(a.y + p.col(m));
      dyc[k] = load_chunk(a.dy + p.col(m));
    });
    for_each_chunk<kChunks>(p, t, [&](int k, int) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) dot += element<T>(yc[k], i) * element<T>(dyc[k], i);
      if constexpr (kKeep) {
        yk[k] = yc[k];
        dyk[k] = dyc[k];
      }
    });
  }
  if (p.has_edge()) dot += to_float(a.y[p.edge_col]) * to_float(a.dy[p.edge_col]);
  dot = row_reduce(dot, Sum{}, 0.0f, a.scratch);

  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk yc[kChunks], dyc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      yc[k] = kKeep ? yk[k] : load_chunk(a.y + p.col(m));
      dyc[k] = kKeep ? dyk[k] : load_chunk(a.dy + p.col(m));
    });
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      float f[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) f[i] = element<T>(yc[k], i) * (element<T>(dyc[k], i) - dot);
      store_chunk(a.dx + p.col(m), pack<T>(f));
    });
  }
  if (p.has_edge()) {  // read again: not held in registers across the reduction
    const float yv = to_float(a.y[p.edge_col]);
    a.dx[p.edge_col] = from_float<T>(yv * (to_float(a.dy[p.edge_col]) - dot));
  }
}

template <class T>
__device__ __forceinline__ void bwd_row_elementwise(const RowPlan<T>& p, const BwdRow<T>& a) {
  float dot = 0.0f;
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) dot += to_float(a.y[c]) * to_float(a.dy[c]);
  dot = row_reduce(dot, Sum{}, 0.0f, a.scratch);
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    a.dx[c] = from_float<T>(to_float(a.y[c]) * (to_float(a.dy[c]) - dot));
  }
}

template <class T>
__device__ __forceinline__ void softmax_bwd(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,
                                            uint32_t rows, uint32_t cols) {
  __shared__ float scratch[32];
  const RowGroup g = RowGroup::current();
  const bool live = g.row < rows;
  const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols);
  const BwdRow<T> a{y + offset, dy + offset, dx + offset, scratch};
  const auto p = RowPlan<T>::anchored(a.y, static_cast<int>(cols), live, g);
  if (!(p.vector_ok(a.dy) && p.vector_ok(a.dx))) {
    bwd_row_elementwise<T>(p, a);
  } else if (p.tiles(kBwdChunks) <= 1) {
    bwd_row_vector<T, kBwdChunks, true>(p, a);
  } else {
    bwd_row_vector<T, kStreamChunks, false>(p, a);
  }
}

}  // namespace

#define CUBINS_SOFTMAX_ENTRY_POINTS(T, SUFFIX)                                                                     \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                        \
      softmax_fwd_##SUFFIX(const T* __restrict__ x, T* __restrict__ y, uint32_t rows, uint32_t cols) {             \
    cubins::wait_for_previous_grid();                                                                              \
    cubins::allow_next_grid();                                                                                     \
    softmax_fwd<T>(x, y, rows, cols);                                                                              \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                        \
      softmax_bwd_##SUFFIX(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx, uint32_t rows,   \
                           uint32_t cols) {                                                                        \
    cubins::wait_for_previous_grid();                                                                              \
    cubins::allow_next_grid();                                                                                     \
    softmax_bwd<T>(y, dy, dx, rows, cols);                                                                         \
  }

CUBINS_SOFTMAX_ENTRY_POINTS(__nv_bfloat16, bf16)
CUBINS_SOFTMAX_ENTRY_POINTS(__half, f16)
CUBINS_SOFTMAX_ENTRY_POINTS(float, f32)
