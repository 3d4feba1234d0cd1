#include "common.h"
#include "cubins/gemm/decode_kernel.cuh"
#include "cubins/gemm/mma_kernel.cuh"
namespace cubins { namespace gemm {
template <class T, Layout L, int WARPS, int UNROLL, bool PF>
__device__ __forceinline__ void gemm_decode_x(const GemmArgs& p) {
  static_assert(L == Layout::NT || L == Layout::NN, "decode reads A as [M][K]");
  constexpr int THREADS = WARPS * 32;
  __shared__ float partial[WARPS][kDecodeAccs][32];

  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n_block = static_cast<int>(blockIdx.x) * kDecodeBlockN;
  const T* A = reinterpret_cast<const T*>(p.a);
  const T* B = reinterpret_cast<const T*>(p.b);
  const int steps = ceil_div(p.k, kDecodeStepK);
  const uint4 zero4 = make_uint4(0, 0, 0, 0);

  float acc[2][2][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][mt][r] = 0.0f;

  for (int s0 = warp; s0 < steps; s0 += WARPS * UNROLL) {
    if constexpr (PF) {
      // Next round's weight lines into L2 while this round's loads are in flight.
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int s = s0 + WARPS * UNROLL + u * WARPS;
        if (s < steps) {
          if constexpr (L == Layout::NT) {
            if (t == 0) {
#pragma unroll
              for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int h2 = 0; h2 < 2; ++h2) {
                  const int n = n_block + 16 * i + 8 * h2 + g;
                  if (n < p.n) asm volatile("prefetch.global.L2 [%0];" ::"l"(B + static_cast<int64_t>(n) * p.ldb + s * kDecodeStepK));
                }
            }
          } else {
            if (g == 0) {
#pragma unroll
              for (int r = 0; r < 8; ++r) {
                const int k = s * kDecodeStepK + 8 * t + r;
                if (k < p.k) asm volatile("prefetch.global.L2 [%0];" ::"l"(B + static_cast<int64_t>(k) * p.ldb + n_block));
              }
            }
          }
        }
      }
    }
    DecodeStep<L> st[UNROLL];
    // All loads of UNROLL steps first, so that many bytes are in flight per lane.
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int s = s0 + u * WARPS;
      const int k = s * kDecodeStepK + 8 * t;  // K % 8 == 0: the 8 k are all in or all out
      const bool k_in = s < steps && k < p.k;
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        const int m = g + 8 * mt;
        st[u].a[mt] = k_in && m < p.m ? __ldg(reinterpret_cast<const uint4*>(A + static_cast<int64_t>(m) * p.lda + k))
                                      : zero4;
      }
      if constexpr (L == Layout::NT) {
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int h2 = 0; h2 < 2; ++h2) {
            const int n = n_block + 16 * i + 8 * h2 + g;
            st[u].b_nt[i][h2] =
                k_in && n < p.n ? __ldcs(reinterpret_cast<const uint4*>(B + static_cast<int64_t>(n) * p.ldb + k))
                                : zero4;
          }
      } else {
        const int n = n_block + 4 * g;  // N % 4 == 0: the 4 columns are all in or all out
#pragma unroll
        for (int r = 0; r < 8; ++r)
          st[u].b_nn[r] = k_in && n < p.n
                              ? __ldcs(reinterpret_cast<const uint2*>(B + static_cast<int64_t>(k + r) * p.ldb + n))
                              : make_uint2(0, 0);
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t a_ops[2][4];
        if constexpr (L == Layout::NT) {
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            a_ops[i][0] = word(st[u].b_nt[i][0], 2 * h);
            a_ops[i][1] = word(st[u].b_nt[i][1], 2 * h);
            a_ops[i][2] = word(st[u].b_nt[i][0], 2 * h + 1);
            a_ops[i][3] = word(st[u].b_nt[i][1], 2 * h + 1);
          }
        } else {
          // Rows 4h + {0, 1} feed k-slots 2t.., rows 4h + {2, 3} feed 2t+8..; column 2j + c.
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const uint2 r0 = st[u].b_nn[4 * h], r1 = st[u].b_nn[4 * h + 1];
            const uint2 r2 = st[u].b_nn[4 * h + 2], r3 = st[u].b_nn[4 * h + 3];
            const uint32_t w0 = j == 0 ? r0.x : r0.y, w1 = j == 0 ? r1.x : r1.y;
            const uint32_t w2 = j == 0 ? r2.x : r2.y, w3 = j == 0 ? r3.x : r3.y;
            a_ops[j][0] = __byte_perm(w0, w1, 0x5410);  // column 2j, k rows 4h, 4h+1
            a_ops[j][1] = __byte_perm(w0, w1, 0x7632);  // column 2j+1
            a_ops[j][2] = __byte_perm(w2, w3, 0x5410);  // column 2j, k rows 4h+2, 4h+3
            a_ops[j][3] = __byte_perm(w2, w3, 0x7632);
          }
        }
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          const uint32_t b_ops[2] = {word(st[u].a[mt], 2 * h), word(st[u].a[mt], 2 * h + 1)};
#pragma unroll
          for (int i = 0; i < 2; ++i) MmaTraits<T>::mma(acc[i][mt], a_ops[i], b_ops);
        }
      }
    }
  }

  // Deterministic reduction over the warps' k slices: always warp 0, 1, ..., WARPS - 1.
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) partial[warp][(i * 2 + mt) * 4 + r][lane] = acc[i][mt][r];
  __syncthreads();

  const EpilogueArgs e = EpilogueArgs::from(p);
  const bool out_f32 = (p.flags & CUBINS_GEMM_OUT_F32) != 0;
  for (int idx = tid; idx < kDecodeAccs * 32; idx += THREADS) {
    const int v = idx >> 5, ln = idx & 31;
    float sum = partial[0][v][ln];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) sum = __fadd_rn(sum, partial[w][v][ln]);
    // Accumulator (i, mt, r) of lane (g, t): mma row g + 8 (r / 2), n8 column 2t + r % 2.
    const int i = v >> 3, mt = (v >> 2) & 1, r = v & 3;
    const int row = (ln >> 2) + 8 * (r >> 1);
    const int m = 8 * mt + 2 * (ln & 3) + (r & 1);
    const int n = n_block + decode_column<L>(i, row);
    if (out_f32) {
      store_one(e, reinterpret_cast<float*>(p.c), m, n, sum);
    } else {
      store_one(e, reinterpret_cast<T*>(p.c), m, n, sum);
    }
  }
}

}}
using namespace cubins::gemm;
template <class T> constexpr Dt dt_of();
template <> constexpr Dt dt_of<__nv_bfloat16>() { return Dt::BF16; }
template <> constexpr Dt dt_of<__half>() { return Dt::FP16; }
template <class T, Layout L, int W, int U, bool PF, int MB>
__global__ void __launch_bounds__(W * 32, MB) k_dec(GemmArgs p) { gemm_decode_x<T, L, W, U, PF>(p); }
template <class T, Layout L, int W, int U, bool PF, int MB>
void launch_dec(const GemmArgs& p, dim3 g, dim3 b, int smem, cudaStream_t s) { k_dec<T, L, W, U, PF, MB><<<g, b, smem, s>>>(p); }
#define DEC(ID, T, L, W, U, PF, MB) static Reg reg_##ID(Variant{#ID " " #T " " #L " w" #W " u" #U " pf" #PF, dt_of<T>(), \
   L == Layout::NN ? Lay::NN : Lay::NT, true, 16, 32, W * 32, 0, launch_dec<T, L, W, U, PF, MB>, (const void*)k_dec<T, L, W, U, PF, MB>});
DEC(d_nt_base, __nv_bfloat16, Layout::NT, 16, 3, false, 1)
DEC(d_nn_base, __nv_bfloat16, Layout::NN, 16, 3, false, 1)
