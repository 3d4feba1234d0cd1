// Cluster split-K decode ("cl" family): wide column blocks so that few CTAs read the
// activations, K split over the CTAs of a thread-block cluster to fill the SMs.
//  - A CTA owns BN = CG * 16 NI columns (NT: NI = 2, 32 columns per warp; NN: NI = 4, 64
//    columns per warp, each lane loading 16 bytes = 8 columns of each of its 8 k rows) and a
//    1/CL slice of the K steps (32 k each); its CG * KW warps are CG column groups times KW k
//    groups (warp kw takes slice positions kw, kw + KW, ...).
//  - The CTA's slice of A (rows 0 .. 8 MT - 1, zero past M and K) is staged once in shared
//    memory with cp.async (ASRC 0), laid out [step][row][64 bytes] so that lane (g, t)'s 16-byte
//    read of row g at 16 t is conflict-free; the fill is issued before round 0's weight loads
//    and waited for after them. ASRC 1: A read from global memory per warp (ld.global.nc; the
//    CG warps of a k group share it through L1).
//  - Weights from global memory straight into mma fragment registers, U steps per round,
//    PIPE 0 (load a round, then consume it) or 2 (two register sets: round j + 1's loads issued
//    before round j's mma).
//  - Sum order: each warp in walk order; k groups 0 .. KW - 1; then cluster ranks 0 .. CL - 1
//    through distributed shared memory (dec_common.cuh's reduce_store). Deterministic.
#pragma once
#include "dec_common.cuh"

namespace dec {

__device__ __forceinline__ void cp_async16_zfill(uint32_t dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0) : "memory");
}
__device__ __forceinline__ uint4 lds16(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

template <Layout L, int CG, int KW>
struct ClShape {
  static constexpr bool NT = L == Layout::NT;
  static constexpr int NI = NT ? 2 : 4;
  static constexpr int W = CG * KW;
  static constexpr int BN = 16 * NI * CG;
};

template <class T, Layout L, int MT, int CG, int KW, int CL, int U, int LD, int PIPE, int STAG, int ASRC>
__device__ __forceinline__ void dec_cl(const GemmArgs& p) {
  using S_ = ClShape<L, CG, KW>;
  constexpr bool NT = S_::NT;
  constexpr int NI = S_::NI, W = S_::W, BN = S_::BN, ROWS = 8 * MT;
  constexpr int NB = PIPE == 2 ? 2 : 1;
  extern __shared__ __align__(16) unsigned char smem[];
  float* red = reinterpret_cast<float*>(smem);
  const uint32_t a_s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int rank = CL > 1 ? static_cast<int>(blockIdx.x) % CL : 0;
  const int cblock = static_cast<int>(blockIdx.x) / CL;
  const int n_block = cblock * BN;
  const int wc = warp % CG, kw = warp / CG;
  const int n_warp = n_block + 16 * NI * wc;
  const T* A = reinterpret_cast<const T*>(p.a);
  const T* B = reinterpret_cast<const T*>(p.b);
  const int steps = ceil_div(p.k, 32);
  const int S = ceil_div(steps, CL);
  const int s0 = rank * S;
  const int here = max(0, min(S, steps - s0));
  const int shift = STAG ? (cblock & 15) * here / 16 : 0;
  const uint64_t pol = 0;

  if constexpr (ASRC == 0) {
    const int chunks = here * ROWS * 4;
    for (int c = tid; c < chunks; c += W * 32) {
      const int tt = c & 3, m = (c >> 2) % ROWS, ls = (c >> 2) / ROWS;
      const int k = (s0 + ls) * 32 + 8 * tt;
      const bool ok = m < p.m && k < p.k;
      cp_async16_zfill(a_s + 16 * c, ok ? A + static_cast<int64_t>(m) * p.lda + k : A, ok);
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }

  float acc[NI][MT][4];
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][mt][r] = 0.0f;

  uint4 bnt[NB][NT ? U : 1][NI][2];
  uint32_t bnn[NB][NT ? 1 : U][8][NI];
  int lsv[NB][U];

  const T* b_base[NT ? NI : 1][NT ? 2 : 1];
  bool b_ok[NT ? NI : 1][NT ? 2 : 1];
  bool b_full = true;
  if constexpr (NT) {
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
      for (int h2 = 0; h2 < 2; ++h2) {
        const int n = n_warp + 16 * i + 8 * h2 + g;
        b_ok[i][h2] = n < p.n;
        b_base[i][h2] = B + static_cast<int64_t>(b_ok[i][h2] ? n : 0) * p.ldb + 8 * t;
      }
  } else {
    const int n = n_warp + 8 * g;
    b_ok[0][0] = n < p.n;
    b_full = n + 8 <= p.n;
    b_base[0][0] = B + static_cast<int64_t>(8 * t) * p.ldb + (b_ok[0][0] ? n : 0);
  }
  const int64_t ldb = p.ldb;

  auto local_step = [&](int pos) {
    int ls = pos + shift;
    if (STAG && ls >= here) ls -= here;
    return ls;
  };
  auto load = [&](int bf, int u, int pos) {
    const int ls = local_step(pos);
    lsv[bf][u] = ls;
    const int kk = (s0 + ls) * 32;
    const bool k_in = pos < here && kk + 8 * t < p.k;
    if constexpr (NT) {
#pragma unroll
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h2 = 0; h2 < 2; ++h2) bnt[bf][u][i][h2] = ldw16<LD>(b_base[i][h2] + kk, k_in && b_ok[i][h2], pol);
    } else {
      const T* src0 = b_base[0][0] + kk * ldb;
      const bool ok = k_in && b_ok[0][0];
#pragma unroll
      for (int r = 0; r < 8; ++r) {
        uint4 v;
        if (b_full) {
          v = ldw16<LD>(src0 + r * ldb, ok, pol);
        } else {
          const uint2 h = ldw8<LD>(src0 + r * ldb, ok, pol);
          v = make_uint4(h.x, h.y, 0, 0);
        }
        bnn[bf][u][r][0] = v.x;
        bnn[bf][u][r][1] = v.y;
        bnn[bf][u][r][2] = v.z;
        bnn[bf][u][r][3] = v.w;
      }
    }
  };
  auto compute = [&](int bf, int u) {
    const int ls = lsv[bf][u];
    uint4 a[MT];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      if constexpr (ASRC == 0) {
        a[mt] = lds16(a_s + ((ls * ROWS + 8 * mt + g) * 64 + 16 * t));
      } else {
        const int m = g + 8 * mt, k = (s0 + ls) * 32 + 8 * t;
        const bool ok = m < p.m && k < p.k;
        a[mt] = ldw16<9>(A + static_cast<int64_t>(ok ? m : 0) * p.lda + (ok ? k : 0), ok, pol);
      }
    }
    uint32_t aop[2][NI][4];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < NI; ++i) {
        if constexpr (NT) {
          aop[h][i][0] = word(bnt[bf][u][i][0], 2 * h);
          aop[h][i][1] = word(bnt[bf][u][i][1], 2 * h);
          aop[h][i][2] = word(bnt[bf][u][i][0], 2 * h + 1);
          aop[h][i][3] = word(bnt[bf][u][i][1], 2 * h + 1);
        } else {
          const uint32_t w0 = bnn[bf][u][4 * h][i], w1 = bnn[bf][u][4 * h + 1][i];
          const uint32_t w2 = bnn[bf][u][4 * h + 2][i], w3 = bnn[bf][u][4 * h + 3][i];
          aop[h][i][0] = __byte_perm(w0, w1, 0x5410);
          aop[h][i][1] = __byte_perm(w0, w1, 0x7632);
          aop[h][i][2] = __byte_perm(w2, w3, 0x5410);
          aop[h][i][3] = __byte_perm(w2, w3, 0x7632);
        }
      }
    step_mma<T, NI, MT>(acc, aop, a);
  };
  auto pos_of = [&](int j, int u) { return (j * U + u) * KW + kw; };
  auto load_round = [&](int bf, int j) {
#pragma unroll
    for (int u = 0; u < U; ++u) load(bf, u, pos_of(j, u));
  };
  auto compute_round = [&](int bf, int j) {
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (pos_of(j, u) < here) compute(bf, u);
  };

  load_round(0, 0);
  if constexpr (ASRC == 0) {
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();
  }
  if constexpr (PIPE == 2) {
    for (int j = 0; pos_of(j, 0) < here; j += 2) {
      load_round(NB - 1, j + 1);
      compute_round(0, j);
      if (pos_of(j + 1, 0) >= here) break;
      load_round(0, j + 2);
      compute_round(NB - 1, j + 1);
    }
  } else {
    for (int j = 0; pos_of(j, 0) < here; ++j) {
      if (j > 0) load_round(0, j);
      compute_round(0, j);
    }
  }

  __syncthreads();  // the A slice is dead: its space holds the partial sums
  constexpr int NACC = NI * MT * 4, E = NACC * 32;
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) red[warp * E + ((i * MT + mt) * 4 + r) * 32 + lane] = acc[i][mt][r];
  __syncthreads();
  reduce_store<T, NT, NI, MT, W, CL, CG>(p, red, tid, W * 32, n_block);
}

template <class T, Layout L, int MT, int CG, int KW, int CL, int U, int LD, int PIPE, int STAG, int ASRC>
__global__ void __launch_bounds__(CG * KW * 32, 1) k_cl1(GemmArgs p) {
  dec_cl<T, L, MT, CG, KW, CL, U, LD, PIPE, STAG, ASRC>(p);
}
template <class T, Layout L, int MT, int CG, int KW, int CL, int U, int LD, int PIPE, int STAG, int ASRC>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(CG * KW * 32, 1) k_cl(GemmArgs p) {
  dec_cl<T, L, MT, CG, KW, CL, U, LD, PIPE, STAG, ASRC>(p);
}

template <int MT, int W, int NI>
int cl_smem(const GemmArgs& p, int CL, int ASRC) {
  const int S = ceil_div(ceil_div(p.k, 32), CL);
  const int a_bytes = ASRC == 0 ? S * 8 * MT * 64 : 0;
  const int red_bytes = W * NI * MT * 4 * 32 * 4;
  return a_bytes > red_bytes ? a_bytes : red_bytes;
}

template <class T, Layout L, int MT, int CG, int KW, int CL, int U, int LD, int PIPE, int STAG, int ASRC>
void run_cl(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  using S_ = ClShape<L, CG, KW>;
  void (*k)(GemmArgs);
  if constexpr (CL == 1) k = k_cl1<T, L, MT, CG, KW, CL, U, LD, PIPE, STAG, ASRC>;
  else k = k_cl<T, L, MT, CG, KW, CL, U, LD, PIPE, STAG, ASRC>;
  static bool init = false;
  if (!init) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
    init = true;
  }
  k<<<g, b, cl_smem<MT, S_::W, S_::NI>(p, CL, ASRC), s>>>(p);
}
template <class T, Layout L, int CG, int KW, int CL, int U, int LD, int PIPE, int STAG, int ASRC>
void launch_cl(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  if (p.m <= 8) run_cl<T, L, 1, CG, KW, CL, U, LD, PIPE, STAG, ASRC>(p, g, b, s);
  else run_cl<T, L, 2, CG, KW, CL, U, LD, PIPE, STAG, ASRC>(p, g, b, s);
}
template <int CL>
bool cl_fits(int m, int n, int k) {
  (void)m;
  (void)n;
  return ceil_div(ceil_div(k, 32), CL) * 16 * 64 <= 200 * 1024;
}

}  // namespace dec

#define CL_ONE(NAME, T, L, CG, KW, CL, U, LD, PIPE, STAG, ASRC, ID)                                                  \
  static Reg reg_##ID(Variant{NAME, dt_of<T>(), L == cubins::gemm::Layout::NT ? Lay::NT : Lay::NN,                \
                              dec::ClShape<L, CG, KW>::BN, CL, CG * KW * 32,                                      \
                              dec::launch_cl<T, L, CG, KW, CL, U, LD, PIPE, STAG, ASRC>, dec::cl_fits<CL>, true});
#define CL_NT(ID, NAME, T, CG, KW, CL, U, LD, PIPE, STAG, ASRC) \
  CL_ONE(NAME, T, cubins::gemm::Layout::NT, CG, KW, CL, U, LD, PIPE, STAG, ASRC, ID##_nt)
#define CL_NN(ID, NAME, T, CG, KW, CL, U, LD, PIPE, STAG, ASRC) \
  CL_ONE(NAME, T, cubins::gemm::Layout::NN, CG, KW, CL, U, LD, PIPE, STAG, ASRC, ID##_nn)
