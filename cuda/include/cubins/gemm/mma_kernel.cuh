// The tensor-core GEMM (bf16 / fp16 with m16n8k16, f32 through tf32 with m16n8k8): a CTA
// tile fed by a STAGES-deep cp.async ring through swizzled shared memory, warps arranged
// WARPS_M x WARPS_N, each owning a (BM / WARPS_M) x (BN / WARPS_N) block of accumulators.
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/args.cuh"

namespace cubins {
namespace gemm {

template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int MIN_BLOCKS_>
struct MmaTile {
  static constexpr int kBM = BM_, kBN = BN_, kBK = BK_;
  static constexpr int kWarpsM = WARPS_M_, kWarpsN = WARPS_N_;
  static constexpr int kStages = STAGES_;
  static constexpr int kMinBlocks = MIN_BLOCKS_;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kWarpM = kBM / kWarpsM, kWarpN = kBN / kWarpsN;
  static constexpr int kMt = kWarpM / 16, kNt = kWarpN / 8;
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tiles are whole m16 x n16 blocks");
  static_assert(kStages >= 2, "a ring needs two stages");
};

// Shared-memory layout of one pipeline stage: the A tile, then the B tile.
template <class T, Layout L, class Tile>
struct MmaStage {
  static constexpr bool kAK = LayoutTraits<L>::a_k_major;
  static constexpr bool kBK = LayoutTraits<L>::b_k_major;
  using LayoutA = StageTileLayout<T, kAK>;
  using LayoutB = StageTileLayout<T, kBK>;
  using CopyA = TileCopy<T, LayoutA, kAK ? Tile::kBM : Tile::kBK, kAK ? Tile::kBK : Tile::kBM, Tile::kThreads>;
  using CopyB = TileCopy<T, LayoutB, kBK ? Tile::kBN : Tile::kBK, kBK ? Tile::kBK : Tile::kBN, Tile::kThreads>;
  static constexpr int kChunksA = CopyA::kFootprint;
  static constexpr int kChunks = CopyA::kFootprint + CopyB::kFootprint;
  // Dynamic shared memory the kernel needs: the launcher passes exactly this.
  static constexpr int kSmemBytes = Tile::kStages * kChunks * 16;
};

// Rows of tiles one raster group spans (see raster_grouped).
constexpr int kRasterGroup = 8;

// Epilogue staging: a warp writes one m16 slice of its accumulators (16 rows x its warp-tile
// width, rows padded by kEpiloguePad floats) to its own shared buffer, then reads it back
// four columns at a time for 4-element stores. Host-callable for fingerprints.cuh.
constexpr int kEpiloguePad = 8;  // keeps the float2 writes of a half-warp on 32 banks

struct EpilogueSlot {
  int row;
  int col;
};

// Where accumulator (ni, r) of `lane` lands in the slice: (g + 8 (r / 2), 8 ni + 2t + r % 2).
CUBINS_HD EpilogueSlot epilogue_slot(int lane, int ni, int r) {
  return EpilogueSlot{(lane >> 2) + 8 * (r >> 1), 8 * ni + 2 * (lane & 3) + (r & 1)};
}

// The four slice elements read number `idx` covers: row, first column.
CUBINS_HD EpilogueSlot epilogue_quad(int idx, int warp_n) {
  return EpilogueSlot{idx / (warp_n / 4), (idx % (warp_n / 4)) * 4};
}

template <class T, Layout L, class Tile>
__device__ __forceinline__ void gemm_mma(const GemmArgs& p) {
  using Stage = MmaStage<T, L, Tile>;
  constexpr bool kAK = Stage::kAK;
  constexpr bool kBK_ = Stage::kBK;
  constexpr int BM = Tile::kBM, BN = Tile::kBN, BK = Tile::kBK;
  using CopyA = typename Stage::CopyA;
  using CopyB = typename Stage::CopyB;
  constexpr int kChunksA = Stage::kChunksA;
  constexpr int kStageChunks = Stage::kChunks;
  static_assert(BK % MmaTraits<T>::kK == 0, "BK is whole mma k steps");

  extern __shared__ uint4 smem[];
  // A launch with less dynamic shared memory than the ring needs would corrupt memory;
  // stop it loudly instead.
  if (dynamic_smem_bytes() < static_cast<unsigned>(Stage::kSmemBytes)) __trap();

  const int tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN);
  const TileCoord tile = raster_grouped(static_cast<int>(blockIdx.x), tiles_m, tiles_n, kRasterGroup);
  const int m_base = tile.m * BM, n_base = tile.n * BN;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int wm = (warp / Tile::kWarpsN) * Tile::kWarpM;
  const int wn = (warp % Tile::kWarpsN) * Tile::kWarpN;
  const T* A = reinterpret_cast<const T*>(p.a);
  const T* B = reinterpret_cast<const T*>(p.b);
  const bool vec_a = (p.flags & CUBINS_GEMM_VEC_A) != 0;
  const bool vec_b = (p.flags & CUBINS_GEMM_VEC_B) != 0;
  const int ktiles = ceil_div(p.k, BK);

  auto issue = [&](int stage, int kt) {
    uint4* sa = smem + stage * kStageChunks;
    uint4* sb = sa + kChunksA;
    const int k0 = kt * BK;
    if constexpr (kAK) {
      CopyA::issue(sa, A, p.lda, m_base, k0, p.m, p.k, vec_a, tid);
    } else {
      CopyA::issue(sa, A, p.lda, k0, m_base, p.k, p.m, vec_a, tid);
    }
    if constexpr (kBK_) {
      CopyB::issue(sb, B, p.ldb, n_base, k0, p.n, p.k, vec_b, tid);
    } else {
      CopyB::issue(sb, B, p.ldb, k0, n_base, p.k, p.n, vec_b, tid);
    }
  };

  float acc[Tile::kMt][Tile::kNt][4];
#pragma unroll
  for (int mi = 0; mi < Tile::kMt; ++mi)
#pragma unroll
    for (int ni = 0; ni < Tile::kNt; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;

  // Fragments are double-buffered across k steps: step s + 1's ldmatrix is issued before
  // step s's mma, so shared-memory latency hides behind the tensor cores. Buffer = step
  // parity, continuous across k tiles because a tile has an even number of steps.
  constexpr int kSteps = BK / MmaTraits<T>::kK;
  static_assert(kSteps % 2 == 0, "fragment buffers alternate by step parity across k tiles");
  uint32_t a[2][Tile::kMt][4];
  uint32_t b[2][Tile::kNt][2];
  auto load_fragments = [&](int buf, unsigned sa, int kk) {
    const unsigned sb = sa + kChunksA * 16u;
#pragma unroll
    for (int mi = 0; mi < Tile::kMt; ++mi) load_a<T, typename Stage::LayoutA, kAK, BM, BK>(sa, wm + mi * 16, kk, lane, a[buf][mi]);
#pragma unroll
    for (int np = 0; np < Tile::kNt / 2; ++np)
      load_b_pair<T, typename Stage::LayoutB, kBK_, BN, BK>(sb, wn + np * 16, kk, lane, reinterpret_cast<uint32_t(&)[2][2]>(b[buf][2 * np]));
  };
  auto next_stage = [](int s) { return s + 1 == Tile::kStages ? 0 : s + 1; };

  // Prologue: k tiles 0 .. STAGES - 2 in flight, one commit group each (empty past the last
  // tile, so the group count, and with it the wait, stays uniform), then tile 0's first
  // fragments.
#pragma unroll 1
  for (int s = 0; s < Tile::kStages - 1; ++s) {
    if (s < ktiles) issue(s, s);
    cubins::cp_async_commit();
  }
  cubins::cp_async_wait<Tile::kStages - 2>();
  __syncthreads();
  int read_stage = 0, write_stage = Tile::kStages - 1;
  unsigned sa = smem_addr(smem);
  load_fragments(0, sa, 0);

  // k tile kt: step 0 refills the stage tile kt - 1 used with tile kt + STAGES - 1 (one
  // commit group per tile); the last step first waits for tile kt + 1 and passes the one
  // barrier per k tile, which publishes every thread's copies of tile kt + 1 and proves every
  // warp has read the last fragments of tile kt (so the next refill may overwrite it), then
  // loads tile kt + 1's first fragments. Past the last tile that load reads a stale stage and
  // is never used.
  for (int kt = 0; kt < ktiles; ++kt) {
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks == kSteps - 1) {
        cubins::cp_async_wait<Tile::kStages - 2>();
        __syncthreads();
        read_stage = next_stage(read_stage);
        sa = smem_addr(smem + read_stage * kStageChunks);
      }
      load_fragments((ks + 1) & 1, sa, ((ks + 1) % kSteps) * MmaTraits<T>::kK);
#pragma unroll
      for (int mi = 0; mi < Tile::kMt; ++mi)
#pragma unroll
        for (int ni = 0; ni < Tile::kNt; ++ni) MmaTraits<T>::mma(acc[mi][ni], a[ks & 1][mi], b[ks & 1][ni]);
      if (ks == 0) {
        const int fill = kt + Tile::kStages - 1;
        if (fill < ktiles) issue(write_stage, fill);
        cubins::cp_async_commit();
        write_stage = next_stage(write_stage);
      }
    }
  }
  // Epilogue through shared memory: the ring is free once every warp is past its last read.
  cubins::cp_async_wait<0>();
  __syncthreads();
  constexpr int kRow = Tile::kWarpN + kEpiloguePad;  // floats per staged row
  static_assert(Tile::kWarpsM * Tile::kWarpsN * 16 * kRow * 4 <= Stage::kSmemBytes, "the slices fit in the ring");
  float* slice = reinterpret_cast<float*>(smem) + warp * 16 * kRow;
  const EpilogueArgs e = EpilogueArgs::from(p);
  const bool out_f32 = sizeof(T) == 4 || (p.flags & CUBINS_GEMM_OUT_F32) != 0;
#pragma unroll
  for (int mi = 0; mi < Tile::kMt; ++mi) {
#pragma unroll
    for (int ni = 0; ni < Tile::kNt; ++ni)
#pragma unroll
      for (int r = 0; r < 4; r += 2) {
        const EpilogueSlot at = epilogue_slot(lane, ni, r);
        *reinterpret_cast<float2*>(slice + at.row * kRow + at.col) = make_float2(acc[mi][ni][r], acc[mi][ni][r + 1]);
      }
    __syncwarp();
#pragma unroll 1
    for (int idx = lane; idx < 16 * Tile::kWarpN / 4; idx += 32) {
      const EpilogueSlot q = epilogue_quad(idx, Tile::kWarpN);
      const float4 v = *reinterpret_cast<const float4*>(slice + q.row * kRow + q.col);
      const int row = m_base + wm + mi * 16 + q.row, col = n_base + wn + q.col;
      if (out_f32) {
        store_quad(e, reinterpret_cast<float*>(p.c), row, col, v);
      } else {
        store_quad(e, reinterpret_cast<T*>(p.c), row, col, v);
      }
    }
    __syncwarp();  // the next slice overwrites this one
  }
}

}  // namespace gemm
}  // namespace cubins

// One extern "C" entry point per instantiation, so the manifest and the launchers name it plainly.
#define CUBINS_GEMM_MMA_ENTRY(NAME, T, LAYOUT, TILE)                                                       \
  extern "C" __global__ void __launch_bounds__(TILE::kThreads, TILE::kMinBlocks) NAME(CUBINS_GEMM_PARAMS(T)) { \
    cubins::gemm::gemm_mma<T, cubins::gemm::Layout::LAYOUT, TILE>(CUBINS_GEMM_ARGS);                                     \
  }
