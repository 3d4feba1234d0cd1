// Ring explorer: RMSNorm backward (bf16, cols % 8 == 0) with each block's rows streamed into a
// shared-memory ring by bulk copies (cp.async.bulk, one mbarrier a stage), w and the block's
// dw partial row held in registers (each thread owns the same chunks in every row), dx stored
// from registers. Persistent: block b takes rows b, b + grid, ... ; its partial row of dw goes
// to partial[b] for the crate's rmsnorm_dweight to sum. Bytes in flight per block: the ring's
// later stages, whatever the registers.
#include <cuda_bf16.h>
#include <cstdint>
#include "cubins/mbarrier.cuh"

namespace {
using cubins::mbarrier_arrive_expect_bytes;
using cubins::mbarrier_init;
using cubins::mbarrier_wait_parity;

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ float el(const uint4& c, int i) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&c);
  const float2 f = __bfloat1622float2(h[i / 2]);
  return (i & 1) ? f.y : f.x;
}
__device__ __forceinline__ uint4 pack8(const float (&f)[8]) {
  uint4 c;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&c);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  return c;
}
__device__ __forceinline__ float2 warp_sum(float2 v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  return v;
}

template <int kThreads, int kStages, int kMaxChunks>
__device__ __forceinline__ void ring_rms_bwd(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                             const __nv_bfloat16* __restrict__ dy, __nv_bfloat16* __restrict__ dx,
                                             float* __restrict__ partial, int rows, int cols, float eps) {
  extern __shared__ __align__(128) uint4 ring[];  // [kStages][x, dy][chunks]
  __shared__ __align__(8) uint64_t full[kStages];
  __shared__ float2 scratch[kThreads / 32];
  const int t = threadIdx.x;
  const int chunks = cols / 8;
  const uint32_t row_bytes = static_cast<uint32_t>(cols) * 2u;
  const int mine = rows > static_cast<int>(blockIdx.x) ? (rows - 1 - static_cast<int>(blockIdx.x)) / gridDim.x + 1 : 0;
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) mbarrier_init(smem(&full[s]), 1);
    cubins::fence_mbarrier_init();
  }
  __syncthreads();
  auto issue = [&](int i) {
    const int s = i % kStages;
    const int64_t r = blockIdx.x + static_cast<int64_t>(i) * gridDim.x;
    const uint32_t bar = smem(&full[s]);
    mbarrier_arrive_expect_bytes(bar, 2u * row_bytes);
    bulk_load(smem(ring + (2 * s) * chunks), x + r * cols, row_bytes, bar);
    bulk_load(smem(ring + (2 * s + 1) * chunks), dy + r * cols, row_bytes, bar);
  };
  if (t == 0) {
    for (int i = 0; i < min(kStages, mine); ++i) issue(i);
  }
  uint4 wk[kMaxChunks];
  float acc[kMaxChunks][8];
#pragma unroll
  for (int k = 0; k < kMaxChunks; ++k) {
    const int m = t + k * kThreads;
    wk[k] = m < chunks ? __ldg(reinterpret_cast<const uint4*>(w) + m) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[k][e] = 0.0f;
  }
  const float inv_n = 1.0f / cols;
  for (int i = 0; i < mine; ++i) {
    const int s = i % kStages;
    mbarrier_wait_parity(smem(&full[s]), (i / kStages) & 1);
    const uint4* xs = ring + (2 * s) * chunks;
    const uint4* ds = ring + (2 * s + 1) * chunks;
    float2 sums = make_float2(0.0f, 0.0f);
#pragma unroll
    for (int k = 0; k < kMaxChunks; ++k) {
      const int m = t + k * kThreads;
      if (m < chunks) {
        const uint4 xc = xs[m], dc = ds[m];
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const float xv = el(xc, e);
          sums.x += xv * xv;
          sums.y += el(dc, e) * el(wk[k], e) * xv;
        }
      }
    }
    sums = warp_sum(sums);
    if ((t & 31) == 0) scratch[t >> 5] = sums;
    __syncthreads();
    sums = (t & 31) < kThreads / 32 ? scratch[t & 31] : make_float2(0.0f, 0.0f);
    sums = warp_sum(sums);
    const float rstd = rsqrtf(sums.x * inv_n + eps);
    const float coef = sums.y * rstd * rstd * rstd * inv_n;
    __nv_bfloat16* out = dx + (blockIdx.x + static_cast<int64_t>(i) * gridDim.x) * cols;
#pragma unroll
    for (int k = 0; k < kMaxChunks; ++k) {
      const int m = t + k * kThreads;
      if (m < chunks) {
        const uint4 xc = xs[m], dc = ds[m];
        float o[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const float xv = el(xc, e), dv = el(dc, e);
          acc[k][e] += dv * xv * rstd;
          o[e] = rstd * dv * el(wk[k], e) - coef * xv;
        }
        reinterpret_cast<uint4*>(out)[m] = pack8(o);
      }
    }
    __syncthreads();  // the stage and the scratch are free
    if (t == 0 && i + kStages < mine) issue(i + kStages);
  }
  float4* row = reinterpret_cast<float4*>(partial + static_cast<int64_t>(blockIdx.x) * cols);
#pragma unroll
  for (int k = 0; k < kMaxChunks; ++k) {
    const int m = t + k * kThreads;
    if (m < chunks) {
      row[2 * m] = make_float4(acc[k][0], acc[k][1], acc[k][2], acc[k][3]);
      row[2 * m + 1] = make_float4(acc[k][4], acc[k][5], acc[k][6], acc[k][7]);
    }
  }
}
}  // namespace

#define RING(T, S, C)                                                                                        \
  extern "C" __global__ void __launch_bounds__(T) ring_##T##_##S##_##C(                                     \
      const __nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* dy, __nv_bfloat16* dx,           \
      float* partial, int rows, int cols, float eps) {                                                       \
    ring_rms_bwd<T, S, C>(x, w, dy, dx, partial, rows, cols, eps);                                           \
  }
RING(256, 2, 4)
RING(256, 3, 4)
RING(256, 4, 4)
RING(128, 4, 4)
RING(512, 3, 2)
RING(512, 2, 4)
