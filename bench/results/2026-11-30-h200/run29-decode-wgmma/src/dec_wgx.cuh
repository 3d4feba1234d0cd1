// Decode on warpgroup MMA with the activations as the M operand ("wgx" family, sm_90a,
// layout NT, M <= 16): C = X W^T with X ([M][K]) as wgmma's m64 operand (rows M .. 63 held
// zero in shared memory: the tensor cores have room to spare here) and the weights W
// ([N][K]) as the n operand: BN = 16 or 32 columns of C per CTA, so N = 4096 gives 256 or
// 128 CTAs without split-K or clusters. Both operands K-major from a STAGES-deep cp.async
// ring in the 128-byte swizzle; one warpgroup issues four m64nBNk16 per 64-k tile. Only
// warp 0's accumulators (rows 0..15) hold results.
#pragma once
#include "dec_common.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/wgmma.cuh"

namespace dec {

#if CUBINS_HAS_WGMMA
template <class T, int BN>
__device__ __forceinline__ void wgmma_m64nk16(float (&d)[BN / 2], uint64_t da, uint64_t db);
#define DEC_WGX(CT, PT)                                                                                    \
  template <>                                                                                              \
  __device__ __forceinline__ void wgmma_m64nk16<CT, 16>(float (&d)[8], uint64_t da, uint64_t db) {         \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32." PT "." PT                                   \
                 " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"                          \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
                   "+f"(d[7])                                                                              \
                 : "l"(da), "l"(db), "r"(1));                                                              \
  }                                                                                                        \
  template <>                                                                                              \
  __device__ __forceinline__ void wgmma_m64nk16<CT, 32>(float (&d)[16], uint64_t da, uint64_t db) {        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32." PT "." PT                                   \
                 " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, " \
                 "1, 0, 0;\n}\n"                                                                           \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
                   "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
                   "+f"(d[14]), "+f"(d[15])                                                                \
                 : "l"(da), "l"(db), "r"(1));                                                              \
  }
DEC_WGX(__nv_bfloat16, "bf16")
DEC_WGX(__half, "f16")
#undef DEC_WGX
#endif

template <class T, int BN, int STAGES>
__device__ __forceinline__ void dec_wgx(const GemmArgs& p) {
#if CUBINS_HAS_WGMMA
  using namespace cubins::gemm;
  constexpr int BK = 64, THREADS = 128, XROWS = 64;
  using CopyX = TileCopy<T, SwizzledTile, 16, BK, THREADS>;  // rows 0..15 of the 64-row X tile
  using CopyW = TileCopy<T, SwizzledTile, BN, BK, THREADS>;
  constexpr int kBytesX = XROWS * 128, kBytes = kBytesX + BN * 128;
  static_assert(kBytes % 1024 == 0, "tiles start on swizzle atoms");
  extern __shared__ __align__(1024) uint4 smem[];
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int n_base = static_cast<int>(blockIdx.x) * BN;
  const T* W = reinterpret_cast<const T*>(p.b);
  const T* X = reinterpret_cast<const T*>(p.a);
  const int ktiles = ceil_div(p.k, BK);
  auto stage = [&](int s) { return reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem) + s * kBytes); };
  // X rows 16..63 of every stage: zero once (the copies only ever write rows 0..15).
  for (int i = tid; i < STAGES * (XROWS - 16) * 8; i += THREADS) {
    const int s = i / ((XROWS - 16) * 8), c = i % ((XROWS - 16) * 8);
    stage(s)[16 * 8 + c] = make_uint4(0, 0, 0, 0);
  }
  auto issue = [&](int kt) {
    uint4* sx = stage(kt % STAGES);
    const int k0 = kt * BK;
    CopyX::issue(sx, X, p.lda, 0, k0, p.m, p.k, true, tid);
    CopyW::issue(sx + kBytesX / 16, W, p.ldb, n_base, k0, p.n, p.k, true, tid);
  };
  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
  const unsigned ring = smem_addr(smem);
  const uint64_t dx0 = smem_descriptor(ring, 16, 1024), dw0 = smem_descriptor(ring + kBytesX, 16, 1024);
#pragma unroll 1
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < ktiles) issue(s);
    cubins::cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cubins::cp_async_wait<STAGES - 3>();
    fence_proxy_async_shared();
    __syncthreads();
    const uint64_t off = static_cast<uint64_t>((kt % STAGES) * kBytes) >> 4;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) wgmma_m64nk16<T, BN>(d, dx0 + off + 2 * ks, dw0 + off + 2 * ks);
    wgmma_commit();
    if (kt + STAGES - 2 < ktiles) issue(kt + STAGES - 2);
    cubins::cp_async_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) pin_register(d[i]);
  if (warp != 0) return;  // rows 16..63: the zero rows of X
  const int g = lane >> 2, t = lane & 3;
  const EpilogueArgs ep = EpilogueArgs::from(p);
  const bool out_f32 = (p.flags & CUBINS_GEMM_OUT_F32) != 0;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int hi = 0; hi < 2; ++hi)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int m = g + 8 * hi, n = n_base + 8 * j + 2 * t + e;
        const float v = d[4 * j + 2 * hi + e];
        if (out_f32) store_one(ep, reinterpret_cast<float*>(p.c), m, n, v);
        else store_one(ep, reinterpret_cast<T*>(p.c), m, n, v);
      }
#else
  (void)p;
  __trap();
#endif
}

template <class T, int BN, int STAGES, int MB>
__global__ void __launch_bounds__(128, MB) k_wgx(GemmArgs p) { dec_wgx<T, BN, STAGES>(p); }

template <class T, int BN, int STAGES, int MB>
void launch_wgx(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  constexpr int smem = STAGES * (64 + BN) * 128;
  static bool init = false;
  if (!init) {
    cudaFuncSetAttribute(k_wgx<T, BN, STAGES, MB>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    init = true;
  }
  k_wgx<T, BN, STAGES, MB><<<g, b, smem, s>>>(p);
}

}  // namespace dec

#define WGX_VARIANT(ID, NAME, T, BN, STAGES, MB)                                                       \
  static Reg wgx_##ID(Variant{NAME, dt_of<T>(), Lay::NT, BN, 1, 128, dec::launch_wgx<T, BN, STAGES, MB>, \
                              dec::wg_supports, true});
