// Decode on warpgroup MMA, register-A form ("wgr" family, sm_90a, layout NT, M <= 16):
// C = X W^T with X as wgmma's m64 operand taken from registers (warp 0 holds rows 0..15,
// loaded with ldmatrix from a 16-row shared tile; warps 1..3 pass zeros, so no shared
// memory holds the empty rows) and the weights W ([N][K]) as the n operand from shared
// memory: BN = 16 or 32 columns of C per CTA, no split-K. Each stage holds BK = 64 k of X
// (2 KB) and W (BN x 128 B); the ring is deep because a stage is small. Each k tile waits
// for its own four wgmma (the register operand is rewritten every tile).
#pragma once
#include "dec_common.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/wgmma.cuh"

namespace dec {

#if CUBINS_HAS_WGMMA
template <class T, int BN>
__device__ __forceinline__ void wgmma_rs(float (&d)[BN / 2], const uint32_t (&a)[4], uint64_t db);
#define DEC_WGR(CT, PT)                                                                                    \
  template <>                                                                                              \
  __device__ __forceinline__ void wgmma_rs<CT, 16>(float (&d)[8], const uint32_t (&a)[4], uint64_t db) {   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32." PT "." PT                                   \
                 " {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n"            \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
                   "+f"(d[7])                                                                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));                           \
  }                                                                                                        \
  template <>                                                                                              \
  __device__ __forceinline__ void wgmma_rs<CT, 32>(float (&d)[16], const uint32_t (&a)[4], uint64_t db) {  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32." PT "." PT                                   \
                 " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, " \
                 "%19}, %20, p, 1, 1, 0;\n}\n"                                                             \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
                   "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
                   "+f"(d[14]), "+f"(d[15])                                                                \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));                           \
  }
DEC_WGR(__nv_bfloat16, "bf16")
DEC_WGR(__half, "f16")
#undef DEC_WGR
#endif

template <class T, int BN, int STAGES>
__device__ __forceinline__ void dec_wgr(const GemmArgs& p) {
#if CUBINS_HAS_WGMMA
  using namespace cubins::gemm;
  constexpr int BK = 64, THREADS = 128;
  using CopyX = TileCopy<T, SwizzledTile, 16, BK, THREADS>;
  using CopyW = TileCopy<T, SwizzledTile, BN, BK, THREADS>;
  constexpr int kBytesX = 16 * 128, kBytes = kBytesX + BN * 128;
  static_assert(kBytes % 1024 == 0, "tiles start on swizzle atoms");
  extern __shared__ __align__(1024) uint4 smem[];
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int n_base = static_cast<int>(blockIdx.x) * BN;
  const T* W = reinterpret_cast<const T*>(p.b);
  const T* X = reinterpret_cast<const T*>(p.a);
  const int ktiles = ceil_div(p.k, BK);
  auto stage = [&](int s) { return reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem) + s * kBytes); };
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
  const uint64_t dw0 = smem_descriptor(ring + kBytesX, 16, 1024);
  // ldmatrix x4 for k16 step ks: lane l gives row (l / 8 & 1) * 8 + l % 8, chunk 2 ks + l / 16.
  const int lrow = ((lane >> 3) & 1) * 8 + (lane & 7), lhi = lane >> 4;
#pragma unroll 1
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < ktiles) issue(s);
    cubins::cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cubins::cp_async_wait<STAGES - 3>();
    fence_proxy_async_shared();
    __syncthreads();
    const unsigned st = ring + static_cast<unsigned>((kt % STAGES) * kBytes);
    uint32_t a[BK / 16][4];
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      if (warp == 0) {
        ldmatrix_x4(st + SwizzledTile::chunk(lrow, 2 * ks + lhi, 16, 8) * 16, a[ks]);
      } else {
        a[ks][0] = a[ks][1] = a[ks][2] = a[ks][3] = 0u;
      }
    }
    const uint64_t off = static_cast<uint64_t>((kt % STAGES) * kBytes) >> 4;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) wgmma_rs<T, BN>(d, a[ks], dw0 + off + 2 * ks);
    wgmma_commit();
    if (kt + STAGES - 2 < ktiles) issue(kt + STAGES - 2);
    cubins::cp_async_commit();
    wgmma_wait<0>();
  }
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) pin_register(d[i]);
  if (warp != 0) return;
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
__global__ void __launch_bounds__(128, MB) k_wgr(GemmArgs p) { dec_wgr<T, BN, STAGES>(p); }

template <class T, int BN, int STAGES, int MB>
void launch_wgr(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  constexpr int smem = STAGES * (16 + BN) * 128;
  static bool init = false;
  if (!init) {
    cudaFuncSetAttribute(k_wgr<T, BN, STAGES, MB>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    init = true;
  }
  k_wgr<T, BN, STAGES, MB><<<g, b, smem, s>>>(p);
}

}  // namespace dec

#define WGR_VARIANT(ID, NAME, T, BN, STAGES, MB)                                                       \
  static Reg wgr_##ID(Variant{NAME, dt_of<T>(), Lay::NT, BN, 1, 128, dec::launch_wgr<T, BN, STAGES, MB>, \
                              dec::wg_supports, true});
