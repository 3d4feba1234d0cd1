// The tensor-core GEMM (bf16 / fp16 with m16n8k16, f32 through tf32 with m16n8k8): a CTA
// tile fed by a STAGES-deep cp.async ring through swizzled shared memory, warps arranged
// WARPS_M x WARPS_N, each owning a (BM / WARPS_M) x (BN / WARPS_N) block of accumulators.
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/staged_store.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/args.cuh"

namespace cubins {
namespace gemm {

template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int MIN_BLOCKS_, int SKINNY_>
struct MmaTile {
  static constexpr int kBM = BM_, kBN = BN_, kBK = BK_;
  static constexpr int kWarpsM = WARPS_M_, kWarpsN = WARPS_N_;
  static constexpr int kStages = STAGES_;
  static constexpr int kMinBlocks = MIN_BLOCKS_;
  // A skinny tile (small M x N, long K): its blocks wait on memory latency, not throughput.
  static constexpr bool kSkinny = SKINNY_ != 0;
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
  // The skinny tiles' element path issues four chunks' loads at a time (their blocks are few
  // and wait on latency); the others keep their registers for the main loop.
  static constexpr int kElemBatch = Tile::kSkinny ? 4 : 1;
  using CopyA =
      TileCopy<T, LayoutA, kAK ? Tile::kBM : Tile::kBK, kAK ? Tile::kBK : Tile::kBM, Tile::kThreads, kElemBatch>;
  using CopyB =
      TileCopy<T, LayoutB, kBK ? Tile::kBN : Tile::kBK, kBK ? Tile::kBK : Tile::kBN, Tile::kThreads, kElemBatch>;
  static constexpr int kChunksA = CopyA::kFootprint;
  static constexpr int kChunks = CopyA::kFootprint + CopyB::kFootprint;
  // Dynamic shared memory the kernel needs: the launcher passes exactly this.
  static constexpr int kSmemBytes = Tile::kStages * kChunks * 16;
};

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
  wait_for_previous_grid();  // launched as a programmatic dependent (sm_90 code and later)
  // A launch with less dynamic shared memory than the ring needs would corrupt memory;
  // stop it loudly instead.
  if (dynamic_smem_bytes() < static_cast<unsigned>(Stage::kSmemBytes)) __trap();

  const int tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN);
  const TileCoord tile = raster_grouped(static_cast<int>(blockIdx.x), tiles_m, tiles_n, kRasterGroup);
  const int m_base = tile.m * BM, n_base = tile.n * BN;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int wm = (warp / Tile::kWarpsN) * Tile::kWarpM;
  const int wn = (warp % Tile::kWarpsN) * Tile::kWarpN;
  const bool vec_a = (p.flags & CUBINS_GEMM_VEC_A) != 0;
  const bool vec_b = (p.flags & CUBINS_GEMM_VEC_B) != 0;
  // Split K (gridDim.z > 1, the planner's SplitK): slice z multiplies k tiles
  // [z * per, (z + 1) * per) and stores its raw sums to the z-th M x ldc plane of C, the
  // workspace (the plan passes alpha 1, beta 0, no bias, f32 output); gemm_splitk_reduce sums
  // the planes in slice order. The usual launch is one slice: the whole K loop.
  const int ktiles_all = ceil_div(p.k, BK);
  const int per_slice = ceil_div(ktiles_all, static_cast<int>(gridDim.z));
  const int kt_first = static_cast<int>(blockIdx.z) * per_slice;
  const int ktiles = max(0, min(per_slice, ktiles_all - kt_first));

  auto issue = [&](int stage, int kt) {
    uint4* sa = smem + stage * kStageChunks;
    copy_operand_tiles<T, CopyA, CopyB, kAK, kBK_>(sa, sa + kChunksA, p, m_base, n_base, (kt_first + kt) * BK, vec_a,
                                                   vec_b, tid);
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
  static_assert(staged_store_bytes<Tile::kWarpN>(Tile::kWarpsM * Tile::kWarpsN) <= Stage::kSmemBytes,
                "the slices fit in the ring");
  float* slice = reinterpret_cast<float*>(smem) + warp * (staged_store_bytes<Tile::kWarpN>(1) / 4);
  GemmArgs out = p;
  if (gridDim.z > 1) out.c = static_cast<float*>(p.c) + static_cast<int64_t>(blockIdx.z) * p.m * p.ldc;
  store_accumulators<T>(out, slice, acc, m_base + wm, n_base + wn, lane);
}

}  // namespace gemm
}  // namespace cubins

// One extern "C" entry point per instantiation, so the manifest and the launchers name it plainly.
#define CUBINS_GEMM_MMA_ENTRY(NAME, T, LAYOUT, TILE)                                                       \
  extern "C" __global__ void __launch_bounds__(TILE::kThreads, TILE::kMinBlocks) NAME(CUBINS_GEMM_PARAMS(T)) { \
    cubins::gemm::gemm_mma<T, cubins::gemm::Layout::LAYOUT, TILE>(CUBINS_GEMM_ARGS);                                     \
  }                                                                                                        \
  CUBINS_GEMM_CATALOGUED(NAME, LAYOUT, TILE)
