// Decode on warpgroup MMA ("wg" family, sm_90a, layout NT, M <= 16): C^T = W X^T with the
// weights W ([N][K]) as the wgmma M operand (64 columns of C per CTA) and the activations X
// ([M][K]) as the n16 operand, both K-major from a STAGES-deep cp.async ring in the 128-byte
// swizzle (the crate's SwizzledTile / TileCopy / descriptors). One warpgroup per CTA issues
// four m64n16k16 per 64-k tile; the ring keeps STAGES x 8 KB of weights in flight.
// CL > 1: split-K over a CL-CTA cluster, partial sums added in rank order through
// distributed shared memory (deterministic). Rows of X past M are zero-filled by TileCopy.
// OPT bits: 1 STAG (column block c starts its K walk at k tile (c % 16) * tiles / 16 and
// wraps), 2 PF (interior weight tiles copied with cp.async ... L2::256B).
#pragma once
#include "dec_common.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/wgmma.cuh"

namespace dec {

#if CUBINS_HAS_WGMMA
template <class T>
__device__ __forceinline__ void wgmma_m64n16(float (&d)[8], uint64_t da, uint64_t db);
#define DEC_WG_N16(CT, PT)                                                                                  \
  template <>                                                                                               \
  __device__ __forceinline__ void wgmma_m64n16<CT>(float (&d)[8], uint64_t da, uint64_t db) {               \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"                                              \
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32." PT "." PT                                    \
                 " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"                           \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) \
                 : "l"(da), "l"(db), "r"(1));                                                               \
  }
DEC_WG_N16(__nv_bfloat16, "bf16")
DEC_WG_N16(__half, "f16")
#undef DEC_WG_N16
#endif

__device__ __forceinline__ void cp_async_16_pf(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(cubins::gemm::smem_addr(dst)), "l"(src) : "memory");
}

template <class T, int STAGES, int CL, int OPT>
__device__ __forceinline__ void dec_wg(const GemmArgs& p) {
  constexpr bool STAG = OPT & 1, PF = OPT & 2;
#if CUBINS_HAS_WGMMA
  using namespace cubins::gemm;
  constexpr int BN = 64, BM = 16, BK = 64, THREADS = 128;
  using CopyW = TileCopy<T, SwizzledTile, BN, BK, THREADS>;  // 64 weight rows x 64 k
  using CopyX = TileCopy<T, SwizzledTile, BM, BK, THREADS>;  // 16 activation rows x 64 k
  constexpr int kBytesW = CopyW::kFootprint * 16, kBytes = kBytesW + CopyX::kFootprint * 16;
  static_assert(kBytesW % 1024 == 0 && kBytes % 1024 == 0, "tiles start on swizzle atoms");
  extern __shared__ __align__(1024) uint4 smem[];
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int rank = CL > 1 ? static_cast<int>(blockIdx.x) % CL : 0;
  const int n_base = static_cast<int>(blockIdx.x) / CL * BN;
  const T* W = reinterpret_cast<const T*>(p.b);
  const T* X = reinterpret_cast<const T*>(p.a);
  const int ktiles_all = ceil_div(p.k, BK);
  const int per = ceil_div(ktiles_all, CL);
  const int kt0 = rank * per, kt1 = min(ktiles_all, kt0 + per), ktiles = max(0, kt1 - kt0);
  const int shift = STAG && ktiles > 0 ? (static_cast<int>(blockIdx.x) / CL % 16) * ktiles / 16 : 0;
  auto stage = [&](int s) { return reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem) + s * kBytes); };
  auto issue = [&](int kt) {
    uint4* sw = stage(kt % STAGES);
    int ks = kt + shift;
    if (ks >= ktiles) ks -= ktiles;
    const int k0 = (kt0 + ks) * BK;
    if (PF && n_base + BN <= p.n && k0 + BK <= p.k) {
#pragma unroll
      for (int i = 0; i < CopyW::kPerThread; ++i) {
        const CopySlot c = copy_slot<SwizzledTile>(i, tid, THREADS, BN, CopyW::kChunksPerRow);
        cp_async_16_pf(sw + c.offset, W + static_cast<int64_t>(n_base + c.row) * p.ldb + k0 + 8 * c.col);
      }
    } else {
      CopyW::issue(sw, W, p.ldb, n_base, k0, p.n, p.k, true, tid);
    }
    CopyX::issue(sw + kBytesW / 16, X, p.lda, 0, k0, p.m, p.k, true, tid);
  };
  float d[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) d[i] = 0.0f;
  const unsigned ring = smem_addr(smem);
  const uint64_t dw0 = smem_descriptor(ring, 16, 1024), dx0 = smem_descriptor(ring + kBytesW, 16, 1024);
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
    for (int ks = 0; ks < BK / 16; ++ks) wgmma_m64n16<T>(d, dw0 + off + 2 * ks, dx0 + off + 2 * ks);
    wgmma_commit();
    if (kt + STAGES - 2 < ktiles) issue(kt + STAGES - 2);
    cubins::cp_async_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < 8; ++i) pin_register(d[i]);
  cubins::cp_async_wait<0>();
  // d (m16n8 pattern per warp, 2 n8 blocks): weight row 16 warp + g (+8), activation row
  // 8 j + 2 t + e. Split-K: ranks > 0 put their partials in rank 0's shared memory.
  float* part = reinterpret_cast<float*>(smem);  // CL x 128 threads x 8
  if constexpr (CL > 1) {
    __syncthreads();
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // rank 0 is past its main loop: its ring may be overwritten
    float* dst = cluster.map_shared_rank(part, 0);
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[(rank * THREADS + tid) * 8 + i] = d[i];
    cluster.sync();
    if (rank != 0) return;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      float s = part[tid * 8 + i];
      for (int r = 1; r < CL; ++r) s += part[(r * THREADS + tid) * 8 + i];
      d[i] = s;
    }
  }
  const int g = lane >> 2, t = lane & 3;
  const EpilogueArgs ep = EpilogueArgs::from(p);
  const bool out_f32 = (p.flags & CUBINS_GEMM_OUT_F32) != 0;
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int hi = 0; hi < 2; ++hi)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int m = 8 * j + 2 * t + e, n = n_base + 16 * warp + g + 8 * hi;
        const float v = d[4 * j + 2 * hi + e];
        if (out_f32) store_one(ep, reinterpret_cast<float*>(p.c), m, n, v);
        else store_one(ep, reinterpret_cast<T*>(p.c), m, n, v);
      }
#else
  (void)p;
  __trap();
#endif
}

template <class T, int STAGES, int CL, int OPT>
__global__ void __launch_bounds__(128, 1) k_wg(GemmArgs p) { dec_wg<T, STAGES, CL, OPT>(p); }
template <class T, int STAGES, int CL, int OPT>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(128, 1) k_wg_cl(GemmArgs p) { dec_wg<T, STAGES, CL, OPT>(p); }

template <class T, int STAGES, int CL, int OPT>
void launch_wg(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  constexpr int smem = STAGES * 10240;
  void (*k)(GemmArgs) = CL == 1 ? k_wg<T, STAGES, CL, OPT> : k_wg_cl<T, STAGES, CL, OPT>;
  static bool init = false;
  if (!init) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    init = true;
  }
  k<<<g, b, smem, s>>>(p);
}
inline bool wg_supports(int m, int n, int k) { return m <= 16 && k % 8 == 0; }

}  // namespace dec

#define WG_VARIANT(ID, NAME, T, STAGES, CL, OPT)                                                              \
  static Reg wg_##ID(Variant{NAME, dt_of<T>(), Lay::NT, 64, CL, 128, dec::launch_wg<T, STAGES, CL, OPT>, dec::wg_supports, true});
