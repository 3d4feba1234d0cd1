// Bulk-copy (TMA engine, cp.async.bulk) decode variants ("t" family). One producer warp
// streams the block's weights and the matching A rows into a ring of ST shared-memory stages
// (KS k per stage) with 1-D bulk copies completing on an mbarrier (expect_tx); CW consumer
// warps read mma fragments from shared memory, each taking the 32-k steps c, c + CW, .. of a
// stage, and release the stage on an "empty" mbarrier. Bytes in flight per block = the ring,
// independent of registers and warps; loads do not occupy L1 miss slots.
// Split-K over a CL-CTA cluster (stage gs of the column block goes to rank gs % CL), partials
// reduced through DSMEM in rank order (dec_common.cuh), deterministic.
// NT: B rows (columns of C) are K-contiguous: one copy per row per stage, rows RS = 2 KS + 64
//     bytes apart (the +64 makes the 16-byte fragment loads conflict-free).
// NN: BN = 64 columns = 128-byte rows of B, one copy per k row; k row r of a stage at byte
//     144 r + 32 (r / 8), which puts the 8 rows of every ldmatrix.trans phase
//     (k = c + {0, 1, 8, 9, 16, 17, 24, 25}) in 8 different bank groups. ldmatrix.trans
//     yields the weight fragment with the same physical k assignment as the register kernels
//     (lane t: 8t + 4h + {0,1} / {2,3}), so A is read as 16-byte row chunks in both layouts.
//     Needs N % 8 == 0 (copy sizes are multiples of 16 bytes).
// A rows >= M and B rows >= N are never written (garbage there only reaches outputs that are
// not stored); k >= K in the last stage is masked to zero in both operands.
#pragma once
#include "dec_common.cuh"

namespace dec {

__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t tx) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(tx) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
template <bool EF>
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, uint64_t pol) {
  if constexpr (EF) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
            dst),
        "l"(src), "r"(bytes), "r"(bar), "l"(pol)
        : "memory");
  } else {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
  }
}
__device__ __forceinline__ uint4 lds16(uint32_t addr, bool ok) {
  uint4 v;
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n mov.b32 %3, 0;\n"
      " @p ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n}\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "r"(addr), "r"((int)ok));
  return v;
}

template <Layout L, int NI, int MT, int CW, int ST, int KS>
struct TmaCfg {
  static constexpr int BN = 16 * NI;
  static constexpr int RS = 2 * KS + 64;
  static constexpr int BST = L == Layout::NT ? BN * RS : 148 * KS;
  static constexpr int AST = 8 * MT * RS;
  static constexpr int STAGE = BST + AST;
  static constexpr int NACC = NI * MT * 4;
  static constexpr int RED = CW * NACC * 32 * 4;
  static constexpr int BODY = ST * STAGE > RED ? ST * STAGE : RED;
  static constexpr int SMEM = 128 + BODY;
  static_assert(L == Layout::NT || NI == 4, "NN bulk layout is for 64 columns (128-byte rows)");
  static_assert(KS % 32 == 0 && (KS / 32) % CW == 0, "whole steps per consumer warp");
  static_assert(2 * ST * 8 <= 128, "barriers fit the header");
  static_assert(STAGE % 16 == 0, "16-byte aligned stages");
};
__device__ __forceinline__ int nn_row_off(int r) { return 144 * r + 32 * (r >> 3); }

template <class T, Layout L, int NI, int MT, int CW, int ST, int KS, int CL, bool EF>
__device__ __forceinline__ void dec_tma(const GemmArgs& p) {
  using C = TmaCfg<L, NI, MT, CW, ST, KS>;
  constexpr bool NT = L == Layout::NT;
  constexpr int BN = C::BN, RS = C::RS, NACC = C::NACC, SPW = KS / 32 / CW;
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t sbase = smem_addr(smem);
  const uint32_t full0 = sbase, empty0 = sbase + 8 * ST, body = sbase + 128;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int rank = CL > 1 ? static_cast<int>(blockIdx.x) % CL : 0;
  const int n_block = static_cast<int>(blockIdx.x) / CL * BN;
  const int ns = ceil_div(p.k, KS);
  const int nit = rank < ns ? (ns - rank + CL - 1) / CL : 0;

  if (tid == 0) {
    for (int s = 0; s < ST; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, CW);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  float acc[NI][MT][4];
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][mt][r] = 0.0f;

  if (warp == 0) {
    // Producer.
    const char* A = reinterpret_cast<const char*>(p.a);
    const char* B = reinterpret_cast<const char*>(p.b);
    const int cols = min(BN, p.n - n_block);
    uint64_t pol = 0;
    if constexpr (EF) pol = policy_evict_first();
    for (int it = 0; it < nit; ++it) {
      const int slot = it % ST;
      if (it >= ST) mbar_wait(empty0 + 8 * slot, ((it / ST) - 1) & 1);
      const int k0 = (rank + it * CL) * KS, kc = min(KS, p.k - k0);
      const uint32_t rowbytes = 2u * kc, full = full0 + 8 * slot;
      const uint32_t bst = body + slot * C::STAGE, ast = bst + C::BST;
      const uint32_t tx = NT ? (cols + p.m) * rowbytes : kc * 2u * cols + p.m * rowbytes;
      if (lane == 0) mbar_expect_tx(full, tx);
      __syncwarp();
      if constexpr (NT) {
        for (int r = lane; r < cols; r += 32)
          bulk_g2s<EF>(bst + r * RS, B + 2 * (static_cast<int64_t>(n_block + r) * p.ldb + k0), rowbytes, full, pol);
      } else {
        for (int r = lane; r < kc; r += 32)
          bulk_g2s<EF>(bst + nn_row_off(r), B + 2 * (static_cast<int64_t>(k0 + r) * p.ldb + n_block), 2u * cols, full,
                       pol);
      }
      for (int m = lane; m < p.m; m += 32)
        bulk_g2s<false>(ast + m * RS, A + 2 * (static_cast<int64_t>(m) * p.lda + k0), rowbytes, full, 0);
    }
  } else {
    // Consumers.
    const int c = warp - 1, g = lane >> 2, t = lane & 3;
    for (int it = 0; it < nit; ++it) {
      const int slot = it % ST;
      mbar_wait(full0 + 8 * slot, (it / ST) & 1);
      const int k0 = (rank + it * CL) * KS;
      const uint32_t bst = body + slot * C::STAGE, ast = bst + C::BST;
#pragma unroll
      for (int j = 0; j < SPW; ++j) {
        const int ss = c + j * CW;
        const bool ok = k0 + ss * 32 + 8 * t < p.k;
        uint4 a[MT];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) a[mt] = lds16(ast + (g + 8 * mt) * RS + ss * 64 + 16 * t, ok);
        uint32_t aop[2][NI][4];
        if constexpr (NT) {
          uint4 b[NI][2];
#pragma unroll
          for (int i = 0; i < NI; ++i)
#pragma unroll
            for (int h2 = 0; h2 < 2; ++h2) b[i][h2] = lds16(bst + (16 * i + 8 * h2 + g) * RS + ss * 64 + 16 * t, ok);
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < NI; ++i) {
              aop[h][i][0] = word(b[i][0], 2 * h);
              aop[h][i][1] = word(b[i][1], 2 * h);
              aop[h][i][2] = word(b[i][0], 2 * h + 1);
              aop[h][i][3] = word(b[i][1], 2 * h + 1);
            }
        } else {
          const int q = lane >> 3, jr = lane & 7;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int kr = ss * 32 + 8 * (jr >> 1) + 4 * h + 2 * (q >> 1) + (jr & 1);
#pragma unroll
            for (int i = 0; i < NI; ++i) {
              ldmatrix_x4_trans(bst + nn_row_off(kr) + 32 * i + 16 * (q & 1), aop[h][i]);
#pragma unroll
              for (int r = 0; r < 4; ++r) aop[h][i][r] = ok ? aop[h][i][r] : 0u;
            }
          }
        }
        step_mma<T, NI, MT>(acc, aop, a);
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(empty0 + 8 * slot);
    }
  }
  __syncthreads();  // every stage consumed: the ring becomes the reduction buffer
  float* red = reinterpret_cast<float*>(smem + 128);
  constexpr int E = NACC * 32;
  if (warp > 0) {
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 4; ++r) red[(warp - 1) * E + ((i * MT + mt) * 4 + r) * 32 + lane] = acc[i][mt][r];
  }
  __syncthreads();
  reduce_store<T, true, NI, MT, CW, CL>(p, red, tid, (CW + 1) * 32, n_block);
}

template <class T, Layout L, int NI, int MT, int CW, int ST, int KS, int CL, bool EF>
__global__ void __launch_bounds__((CW + 1) * 32, 1) k_tma(GemmArgs p) {
  dec_tma<T, L, NI, MT, CW, ST, KS, CL, EF>(p);
}
template <class T, Layout L, int NI, int MT, int CW, int ST, int KS, int CL, bool EF>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__((CW + 1) * 32, 1) k_tma_cl(GemmArgs p) {
  dec_tma<T, L, NI, MT, CW, ST, KS, CL, EF>(p);
}
template <class T, Layout L, int NI, int MT, int CW, int ST, int KS, int CL, bool EF>
void run_tma(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  constexpr int smem = TmaCfg<L, NI, MT, CW, ST, KS>::SMEM;
  void (*k)(GemmArgs);
  if constexpr (CL == 1) k = k_tma<T, L, NI, MT, CW, ST, KS, CL, EF>;
  else k = k_tma_cl<T, L, NI, MT, CW, ST, KS, CL, EF>;
  static bool init = false;
  if (!init) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    init = true;
  }
  k<<<g, b, smem, s>>>(p);
}
template <class T, Layout L, int NI, int CW, int ST, int KS, int CL, bool EF>
void launch_tma(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  if (p.m <= 8) run_tma<T, L, NI, 1, CW, ST, KS, CL, EF>(p, g, b, s);
  else run_tma<T, L, NI, 2, CW, ST, KS, CL, EF>(p, g, b, s);
}
inline bool tma_nn_supports(int, int n, int) { return n % 8 == 0; }

}  // namespace dec

#define TMA_VARIANT(ID, NAME, T, L, NI, CW, ST, KS, CL, EF)                                                      \
  static Reg reg_##ID(Variant{NAME, dt_of<T>(), L == cubins::gemm::Layout::NT ? Lay::NT : Lay::NN, 16 * NI, CL,  \
                              (CW + 1) * 32, dec::launch_tma<T, L, NI, CW, ST, KS, CL, EF>,                      \
                              L == cubins::gemm::Layout::NT ? nullptr : dec::tma_nn_supports, true});
