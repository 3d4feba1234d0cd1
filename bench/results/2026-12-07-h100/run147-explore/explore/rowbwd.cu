// Few-row backward explorer: RMSNorm backward of one bf16 row, minimal kernels that add the
// crate kernel's pieces one at a time (each on its own, timed against the crate's kernel and
// torch.compile in one process by explore.py).
#include <cuda_bf16.h>
#include <cstdint>

namespace {
struct __align__(16) Chunk { uint4 v; };
__device__ __forceinline__ float el(const Chunk& c, int i) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&c.v);
  float2 f = __bfloat1622float2(h[i / 2]);
  return (i & 1) ? f.y : f.x;
}
__device__ __forceinline__ Chunk pack8(const float (&f)[8]) {
  Chunk c;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&c.v);
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
// kPdl: griddepcontrol at entry; kAcc: the crate's shared accumulator (zero, sync, add,
// sync, read back); kTwoBar: the crate's second barrier after the reduction.
template <bool kPdl, bool kAcc, bool kTwoBar, int kVec = 8>
__device__ __forceinline__ void rms_bwd_row(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                            const __nv_bfloat16* __restrict__ dy, __nv_bfloat16* __restrict__ dx,
                                            __nv_bfloat16* __restrict__ dw, int cols, float eps) {
  if constexpr (kPdl) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
  __shared__ float2 scratch[32];
  extern __shared__ float4 acc[];
  const int t = threadIdx.x;
  if constexpr (kAcc) {
    for (int i = t; i < cols / 4; i += blockDim.x) acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
  }
  const bool live = t * kVec < cols;
  Chunk xc{}, dc{}, wc{};
  if (live) {
    if constexpr (kVec == 8) {
      xc.v = __ldg(reinterpret_cast<const uint4*>(x) + t);
      dc.v = __ldg(reinterpret_cast<const uint4*>(dy) + t);
      wc.v = __ldg(reinterpret_cast<const uint4*>(w) + t);
    } else {
      const uint2 a = __ldg(reinterpret_cast<const uint2*>(x) + t), b = __ldg(reinterpret_cast<const uint2*>(dy) + t),
                  c = __ldg(reinterpret_cast<const uint2*>(w) + t);
      xc.v = make_uint4(a.x, a.y, 0, 0);
      dc.v = make_uint4(b.x, b.y, 0, 0);
      wc.v = make_uint4(c.x, c.y, 0, 0);
    }
  }
  float2 s = make_float2(0.f, 0.f);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const float xv = el(xc, i);
    s.x += xv * xv;
    s.y += el(dc, i) * el(wc, i) * xv;
  }
  s = warp_sum(s);
  if ((t & 31) == 0) scratch[t >> 5] = s;
  __syncthreads();
  s = (t & 31) < (blockDim.x >> 5) ? scratch[t & 31] : make_float2(0.f, 0.f);
  s = warp_sum(s);
  if constexpr (kTwoBar) __syncthreads();
  const float inv_n = 1.0f / cols;
  const float rstd = rsqrtf(s.x * inv_n + eps);
  const float coef = s.y * rstd * rstd * rstd * inv_n;
  if (!live) return;
  float o[8] = {}, g[8] = {};
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const float xv = el(xc, i), dv = el(dc, i);
    g[i] = 0.0f + dv * xv * rstd;
    o[i] = rstd * dv * el(wc, i) - coef * xv;
  }
  if constexpr (kVec == 4) {
    const Chunk po = pack8(o), pg = pack8(g);
    *reinterpret_cast<uint2*>(dx + 4 * t) = make_uint2(po.v.x, po.v.y);
    *reinterpret_cast<uint2*>(dw + 4 * t) = make_uint2(pg.v.x, pg.v.y);
    return;
  }
  *reinterpret_cast<Chunk*>(dx + 8 * t) = pack8(o);
  if constexpr (kAcc) {
    float4* a = acc + 2 * t;
    a[0] = make_float4(a[0].x + g[0], a[0].y + g[1], a[0].z + g[2], a[0].w + g[3]);
    a[1] = make_float4(a[1].x + g[4], a[1].y + g[5], a[1].z + g[6], a[1].w + g[7]);
    __syncthreads();
    const float4 p = acc[2 * t], q = acc[2 * t + 1];
    const float f[8] = {p.x, p.y, p.z, p.w, q.x, q.y, q.z, q.w};
    *reinterpret_cast<Chunk*>(dw + 8 * t) = pack8(f);
  } else {
    *reinterpret_cast<Chunk*>(dw + 8 * t) = pack8(g);
  }
}
}  // namespace

#define ENTRY(NAME, PDL, ACC, TWO, VEC)                                                                          \
  extern "C" __global__ void __launch_bounds__(1024)                                                        \
      NAME(const __nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* dy, __nv_bfloat16* dx,      \
           __nv_bfloat16* dw, int cols, float eps) {                                                        \
    rms_bwd_row<PDL, ACC, TWO, VEC>(x, w, dy, dx, dw, cols, eps);                                                \
  }
ENTRY(min_plain, false, false, false, 8)
ENTRY(min_pdl, true, false, false, 8)
ENTRY(min_pdl_acc, true, true, false, 8)
ENTRY(min_pdl_acc_bar, true, true, true, 8)
ENTRY(min_pdl_4, true, false, false, 4)
