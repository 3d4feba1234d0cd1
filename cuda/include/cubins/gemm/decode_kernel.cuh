// Decode GEMM (M <= 16): C = A B with A (the activations, [M][K]) tiny and B (the weights)
// streamed once from DRAM. Computed as C^T = B^T A^T on m16n8k16 tensor cores so that the
// weights are the A operand, loaded straight from global memory into fragment registers
// with wide loads (no shared-memory round trip); A^T is the n8 operand (two n8 tiles cover
// M <= 16). Each block owns 32 columns of C for the whole K; its warps split K in 32-wide
// steps (warp w takes steps w, w + WARPS, ...) and are reduced in warp order in shared
// memory, so the result does not depend on timing.
//
// The mma sums over 16 logical k; which physical k each logical k is only has to agree
// between the two operands. Lane (g, t) reads physical k = 32 s + 8 t + [0, 8) of step s;
// half h of the step feeds mma k-slots {2t, 2t+1} from physical 8t + 4h + {0, 1} and
// slots {2t+8, 2t+9} from 8t + 4h + {2, 3}. A 16-byte load of A row m therefore yields
// the n8-operand registers of both halves: b0 = word 2h, b1 = word 2h + 1.
//
// NT (B is [N][K], K contiguous): mma row r of tile i is column n = 16 i + r; lane (g, t)
// loads rows g and g + 8 of each tile, 16 bytes each, and uses words 2h / 2h + 1 directly.
// NN (B is [K][N], N contiguous): lane (g, t) loads 8 bytes (4 columns 4g .. 4g + 3) of
// each of its 8 physical k rows; byte permutes pair rows k, k + 1 per column. mma row r of
// tile j is column n = 4 (r % 8) + 2 j + r / 8.
#pragma once

#include <cstdint>

#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/args.cuh"

namespace cubins {
namespace gemm {

constexpr int kDecodeBlockN = 32;
constexpr int kDecodeStepK = 32;
constexpr int kDecodeMaxM = 16;
// Accumulators per lane: 2 mma tiles of columns x 2 n8 tiles of rows of C x 4.
constexpr int kDecodeAccs = 16;

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Column of C held by mma row `r` (0..15) of column tile `i` in the decode kernel.
template <Layout L>
CUBINS_HD int decode_column(int i, int r) {
  return L == Layout::NT ? 16 * i + r : 4 * (r & 7) + 2 * i + (r >> 3);
}

// One 32-wide k step of a warp: the loads it issues.
template <Layout L>
struct DecodeStep {
  uint4 a[2];                         // A rows g and g + 8, physical k 8t .. 8t + 7
  uint4 b_nt[L == Layout::NT ? 2 : 1][2];  // NT: [tile][row g / g + 8]
  uint2 b_nn[L == Layout::NN ? 8 : 1];     // NN: physical k rows 8t + r, columns 4g .. 4g + 3
};

template <class T, Layout L, int WARPS, int UNROLL>
__device__ __forceinline__ void gemm_decode(const GemmArgs& p) {
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

}  // namespace gemm
}  // namespace cubins

#define CUBINS_GEMM_DECODE_ENTRY(NAME, T, LAYOUT, WARPS, UNROLL, MIN_BLOCKS)                  \
  extern "C" __global__ void __launch_bounds__((WARPS) * 32, MIN_BLOCKS) NAME(CUBINS_GEMM_PARAMS(T)) { \
    cubins::gemm::gemm_decode<T, cubins::gemm::Layout::LAYOUT, WARPS, UNROLL>(CUBINS_GEMM_ARGS);              \
  }
