// The warp-specialized Hopper GEMM (sm_90a): TMA fills a 4-stage ring of 128-row A and
// 256-row B k tiles (one 128-byte row each: 64 16-bit or 32 tf32 values) in the 128-byte
// swizzle, completing on one mbarrier per stage; warpgroup 0 gives its registers back
// (setmaxnreg.dec) and one of its threads issues every copy; warpgroups 1 and 2
// (setmaxnreg.inc) each own 64 x 256 f32 accumulators and multiply with wgmma m64n256k16
// (tf32: k8) straight from the ring, releasing a stage (an arrive on its empty barrier) once
// the wgmma group that read it has retired. CTAs are persistent: one per SM, each walking
// tiles blockIdx.x, + gridDim.x, ... in the grouped raster, so the producer fills the ring
// with the next tile while the consumers store this one. tf32 operands must be K-major (NT:
// the TF32 tier's operand pass lays every layout out so) and already rounded: wgmma
// truncates the f32 bits it reads.
//
// The common call (C = A B in the input type, C addressable by the copy engine: the host sets
// CUBINS_GEMM_TMA_C and passes its map) leaves through shared memory: each consumer converts
// its 64 x 256 outputs into 16 KB of swizzled staging, a part of the tile at a time (halves
// in 16 bits, quarters in f32), and one of its threads stores each part with TMA stores,
// which clip the tails to M and N; the consumer starts the next tile while the copy engine
// drains the last part. Stores straight from the registers held every CTA's epilogue as a
// burst with no MMA running: 0.89-0.97x cuBLAS against 0.99-1.03x this way (run76, explorer,
// H100, bf16). Other calls (alpha, beta, bias, f32 output of 16-bit inputs, C off the
// 16-byte grid) store from the registers.
//
// The operands are read through tensor maps the host encodes (the runtime's Tiled2d): boxes
// past M, N or K read zeros, so tails need no bounds checks; the maps need 16-byte aligned
// bases and leading dimensions in whole 16-byte chunks (the planner's VEC_A and VEC_B). The
// sum order over K is the cp.async wgmma kernel's (wgmma_kernel.cuh), and so is the epilogue:
// their results are bit-identical. Measured before it came here: run69 (explorer).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstring>

#include "cubins/common.cuh"
#include "cubins/gemm/args.cuh"
#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/ptx.cuh"
#include "cubins/gemm/tma.cuh"
#include "cubins/gemm/wgmma.cuh"

namespace cubins {
namespace gemm {

// 128 x 256 output tiles, k tiles of one 128-byte swizzle row (64 16-bit values or 32 tf32
// ones), 4 stages.
struct TmaTile {
  static constexpr int kBM = 128, kBN = 256, kStages = 4;
  static constexpr int kRowBytes = 128;
  // k values of T in a k tile.
  template <class T>
  static constexpr int kBKOf = kRowBytes / static_cast<int>(sizeof(T));
  static constexpr int kConsumers = 2;                   // warpgroups that multiply
  static constexpr int kThreads = 128 * (kConsumers + 1);  // and one that loads
  static constexpr int kBytesA = kBM * kRowBytes, kBytesB = kBN * kRowBytes;
  static constexpr int kStageBytes = kBytesA + kBytesB;
  // A 64-wide MN-major panel of a k tile's rows, or 64 K-major rows: 64 x 128 bytes.
  static constexpr int kPanelBytes = 64 * 128;
  // Staging per consumer: a part of its 64 x kBN outputs (half of them in 16 bits, a quarter
  // in f32), as boxes of 64 rows x 128 bytes.
  static constexpr int kStagingBytes = 64 * kBN, kBoxBytes = 64 * 128;
  // The ring, the staging, the slack to align them to a swizzle atom (1024 B), then full[S]
  // and empty[S].
  static constexpr int kSmemBytes = kStages * kStageBytes + kConsumers * kStagingBytes + 1024 + 2 * kStages * 8;
  // Registers per thread after setmaxnreg: 40 x 128 + 232 x 256 = 64512 of the 65536.
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
};

// Stores two adjacent outputs as one access at p (aligned to both).
template <class OutT>
__device__ __forceinline__ void store_two(OutT* p, OutT v0, OutT v1) {
  struct __align__(2 * sizeof(OutT)) Two {
    OutT x, y;
  };
  *reinterpret_cast<Two*>(p) = Two{v0, v1};
}

// Two 16-bit values as one 32-bit word, `lo` at the lower address.
template <class T>
__device__ __forceinline__ uint32_t pack_two(T lo, T hi) {
  static_assert(sizeof(T) == 2, "16-bit outputs");
  uint16_t l, h;
  memcpy(&l, &lo, 2);
  memcpy(&h, &hi, 2);
  return static_cast<uint32_t>(l) | (static_cast<uint32_t>(h) << 16);
}

// Writes elements (row, col) and (row, col + 1): one access when C allows vector stores and
// both lie inside N, else element by element.
template <class OutT>
__device__ __forceinline__ void store_pair(const EpilogueArgs& e, OutT* c, int row, int col, float v0, float v1) {
  if (row >= e.m) return;
  if (e.vec_c && col + 1 < e.n) {
    OutT* p = c + static_cast<int64_t>(row) * e.ldc + col;
    const float old0 = e.beta != 0.0f ? to_float(p[0]) : 0.0f;
    const float old1 = e.beta != 0.0f ? to_float(p[1]) : 0.0f;
    store_two(p, from_float<OutT>(e.apply(v0, old0, col)), from_float<OutT>(e.apply(v1, old1, col + 1)));
  } else {
    store_one(e, c, row, col, v0);
    store_one(e, c, row, col + 1, v1);
  }
}

// Consumer warpgroup `cw`'s 64 rows of tile `tc` from its accumulators through `staging`
// and TMA stores of `tma_c`, a part at a time (two of 128 columns in 16 bits, four of 64 in
// f32: 16 KB each): a part waits only until the stores of the one before it have read the
// staging. Boxes of 64 rows x 128 bytes in the 128-byte swizzle: 16-byte chunk q of row r
// sits at chunk q ^ (r % 8), so a warp's eight rows of one chunk land on distinct banks (f32
// pairs: a half-warp's four rows of two chunks, two ways, rows r and r ^ 1 sharing their
// slots); the copy engine undoes the swizzle. tests/gemm_host.rs checks both layouts.
template <class OutT>
__device__ __forceinline__ void store_staged(const CUtensorMap* tma_c, unsigned staging, const float (&d)[TmaTile::kBN / 2],
                                             TileCoord tc, int cw, int t_wg) {
  constexpr int BN = TmaTile::kBN, kOut = static_cast<int>(sizeof(OutT));
  constexpr int kBoxCols = TmaTile::kRowBytes / kOut, kPartCols = TmaTile::kStagingBytes / (64 * kOut);
  constexpr int kParts = BN / kPartCols, kJ = kPartCols / 8, kBoxes = kPartCols / kBoxCols;
  static_assert(kOut == 2 || kOut == 4, "16-bit or f32 outputs");
  const int warp = t_wg / 32, lane = t_wg % 32;
#pragma unroll
  for (int part = 0; part < kParts; ++part) {
    if (t_wg == 0) bulk_wait_read();
    named_barrier_sync(1 + cw, 128);
#pragma unroll
    for (int jj = 0; jj < kJ; ++jj) {
      // Columns 8 jj + 2 (lane % 4) + {0, 1} of the part: their box, 16-byte chunk in its row
      // and byte in the chunk (16 bits: a chunk holds the 8 columns; f32: two chunks do).
      const int j = part * kJ + jj, box = jj / (kBoxCols / 8);
      const int chunk = kOut == 2 ? jj % 8 : 2 * (jj % 4) + (lane % 4) / 2;
      const int within = kOut == 2 ? 4 * (lane % 4) : 8 * (lane % 2);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = warp * 16 + lane / 4 + 8 * h;
        const unsigned at = staging + box * TmaTile::kBoxBytes + r * 128 + ((chunk ^ (r & 7)) << 4) + within;
        const float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
        if constexpr (kOut == 2) {
          st_shared_u32(at, pack_two(from_float<OutT>(v0), from_float<OutT>(v1)));
        } else {
          st_shared_v2_f32(at, v0, v1);
        }
      }
    }
    fence_proxy_async_shared();
    named_barrier_sync(1 + cw, 128);
    if (t_wg == 0) {
#pragma unroll
      for (int b = 0; b < kBoxes; ++b) {
        tma_store_2d(tma_c, staging + b * TmaTile::kBoxBytes, tc.n * BN + part * kPartCols + b * kBoxCols,
                     tc.m * TmaTile::kBM + cw * 64);
      }
      bulk_commit();
    }
  }
}

// `p` holds everything but the operands (a, b, lda, ldb unused: the tensor maps carry them).
template <class T, Layout L>
__device__ __forceinline__ void gemm_tma_ws(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                            const CUtensorMap* tma_c, const GemmArgs& p) {
#if CUBINS_HAS_WGMMA
  using Tile = TmaTile;
  constexpr bool kAK = LayoutTraits<L>::a_k_major;
  constexpr bool kBK = LayoutTraits<L>::b_k_major;
  static_assert(sizeof(T) == 2 || (kAK && kBK), "tf32 wgmma reads both operands K-major (layout NT)");
  constexpr int BM = Tile::kBM, BN = Tile::kBN, BK = Tile::kBKOf<T>, S = Tile::kStages;
  // One wgmma advances 32 bytes along K: k16 of 16-bit operands, k8 of tf32.
  constexpr int kKStep = 32 / static_cast<int>(sizeof(T));
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // A launch with less shared memory than the ring would corrupt memory.
  if (dynamic_smem_bytes() < static_cast<unsigned>(Tile::kSmemBytes)) __trap();
  const unsigned ring = (smem_addr(smem_raw) + 1023u) & ~1023u;  // the swizzle follows the address
  const unsigned staging = ring + S * Tile::kStageBytes;  // kStagingBytes per consumer
  const unsigned bars = staging + Tile::kConsumers * Tile::kStagingBytes;  // full[S], then empty[S]
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (S + s); };
  const int wg = static_cast<int>(threadIdx.x) / 128, t_wg = static_cast<int>(threadIdx.x) % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbarrier_init(full(s), 1);
      mbarrier_init(empty(s), Tile::kConsumers);
    }
    fence_mbarrier_init();
  }
  __syncthreads();
  const int tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN), tiles = tiles_m * tiles_n;
  const int ktiles = ceil_div(p.k, BK);

  if (wg == 0) {
    setmaxnreg_dec<Tile::kProducerRegs>();
    if (t_wg == 0) {
      int it = 0;  // k tiles issued so far, over every tile of this CTA
      for (int t = static_cast<int>(blockIdx.x); t < tiles; t += static_cast<int>(gridDim.x)) {
        const TileCoord tc = raster_grouped(t, tiles_m, tiles_n, kRasterGroup);
        const int m0 = tc.m * BM, n0 = tc.n * BN;
        for (int kt = 0; kt < ktiles; ++kt, ++it) {
          const int s = it % S;
          mbarrier_wait_parity(empty(s), ((it / S) & 1) ^ 1);  // the first pass finds every stage free
          const unsigned sa = ring + s * Tile::kStageBytes, sb = sa + Tile::kBytesA;
          const int k0 = kt * BK;
          mbarrier_arrive_expect_bytes(full(s), Tile::kStageBytes);
          // K-major operands: one box of rows x 64 k; MN-major: 64-wide panels of 64 k rows.
          if (kAK) {
            tma_load_2d(sa, tma_a, full(s), k0, m0);
          } else {
#pragma unroll
            for (int q = 0; q < BM / 64; ++q) tma_load_2d(sa + q * Tile::kPanelBytes, tma_a, full(s), m0 + 64 * q, k0);
          }
          if (kBK) {
            tma_load_2d(sb, tma_b, full(s), k0, n0);
          } else {
#pragma unroll
            for (int q = 0; q < BN / 64; ++q) tma_load_2d(sb + q * Tile::kPanelBytes, tma_b, full(s), n0 + 64 * q, k0);
          }
        }
      }
    }
  } else {
    setmaxnreg_inc<Tile::kConsumerRegs>();
    const int cw = wg - 1;  // this consumer's 64 rows of the tile
    constexpr unsigned kStepA = kAK ? 32 : 16 * 128, kStepB = kBK ? 32 : 16 * 128;
    const uint64_t da0 = smem_descriptor(ring + cw * Tile::kPanelBytes, kAK ? 16 : Tile::kPanelBytes, 8 * 128);
    const uint64_t db0 = smem_descriptor(ring + Tile::kBytesA, kBK ? 16 : Tile::kPanelBytes, 8 * 128);
    const int warp = t_wg / 32, lane = t_wg % 32;
    const EpilogueArgs e = EpilogueArgs::from(p);
    const bool out_f32 = (p.flags & CUBINS_GEMM_OUT_F32) != 0;
    const bool plain = !out_f32 && p.alpha == 1.0f && p.beta == 0.0f && e.bias == nullptr && e.vec_c;
    const bool staged = (p.flags & CUBINS_GEMM_TMA_C) != 0;  // the host sets it on plain calls only
    auto release = [&](int s) {
      if (t_wg == 0) mbarrier_arrive(empty(s));
    };
    float d[BN / 2];
    int it = 0;
    for (int t = static_cast<int>(blockIdx.x); t < tiles; t += static_cast<int>(gridDim.x)) {
      const TileCoord tc = raster_grouped(t, tiles_m, tiles_n, kRasterGroup);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        const int s = it % S;
        mbarrier_wait_parity(full(s), (it / S) & 1);
        const uint64_t off = static_cast<uint64_t>(s * Tile::kStageBytes) >> 4;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / kKStep; ++ks) {
          wgmma_m64n256<kAK ? 0 : 1, kBK ? 0 : 1>(d, da0 + off + ((ks * kStepA) >> 4), db0 + off + ((ks * kStepB) >> 4),
                                                  T{});
        }
        wgmma_commit();
        // The group of k tile kt - 1 has retired: its stage may be refilled.
        wgmma_wait<1>();
        if (kt > 0) release((it - 1) % S);
      }
      wgmma_wait<0>();
      if (ktiles > 0) release((it - 1) % S);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) pin_register(d[i]);
      if (staged) {
        store_staged<T>(tma_c, staging + cw * Tile::kStagingBytes, d, tc, cw, t_wg);
        continue;
      }
      // Accumulator 4j + 2h + r of lane l: row 16 warp + l / 4 + 8h, column 8j + 2 (l % 4) + r.
      const int row0 = tc.m * BM + cw * 64 + warp * 16 + lane / 4;
      const int col0 = tc.n * BN + 2 * (lane % 4);
      // The common call (C = A B in the input type, a whole tile, pairs aligned) converts and
      // stores each pair with nothing to decide (apply's product by alpha = 1 is exact, so the
      // bits are the general store's); every other call takes the general store.
      const bool whole = (tc.m + 1) * BM <= p.m && (tc.n + 1) * BN <= p.n;
      if (plain && whole) {
        T* c = static_cast<T*>(p.c);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = row0 + 8 * h, col = col0 + 8 * j;
            store_two(c + static_cast<int64_t>(row) * p.ldc + col, from_float<T>(d[4 * j + 2 * h]),
                      from_float<T>(d[4 * j + 2 * h + 1]));
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = row0 + 8 * h, col = col0 + 8 * j;
            if (out_f32) {
              store_pair(e, static_cast<float*>(p.c), row, col, d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            } else {
              store_pair(e, static_cast<T*>(p.c), row, col, d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            }
          }
        }
      }
    }
    // The CTA's shared memory must outlive the copies that read it.
    if (staged && t_wg == 0) bulk_wait();
  }
#else
  (void)tma_a;
  (void)tma_b;
  (void)tma_c;
  (void)p;
  __trap();
#endif
}

}  // namespace gemm
}  // namespace cubins

// The entry points' parameters, in the order cuda/kernels.toml declares them.
#define CUBINS_GEMM_TMA_ENTRY(NAME, T, LAYOUT)                                                                      \
  extern "C" __global__ void __launch_bounds__(cubins::gemm::TmaTile::kThreads, 1)                                  \
      NAME(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,                    \
           const __grid_constant__ CUtensorMap tma_c, void* __restrict__ c, const float* __restrict__ bias, int m,     \
           int n, int k, int ldc, float alpha, float beta, unsigned flags) {                                          \
    cubins::gemm::gemm_tma_ws<T, cubins::gemm::Layout::LAYOUT>(                                                   \
        &tma_a, &tma_b, &tma_c, {nullptr, nullptr, c, bias, m, n, k, 0, 0, ldc, alpha, beta, flags});                \
  }
