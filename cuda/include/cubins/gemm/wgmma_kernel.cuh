// The Hopper tensor-core GEMM (sm_90a): each warpgroup owns a 64 x BN block of f32
// accumulators and multiplies with wgmma.mma_async straight from shared memory; the CTA's
// threads fill a STAGES-deep cp.async ring laid out in the 128-byte swizzle that wgmma
// descriptors address. No fragments pass through registers, so the warps spend their issue
// slots on copies while the tensor cores run.
//
// A k tile is one 128-byte swizzle row per M (N) row: 64 bf16/fp16 values or 32 f32 ones,
// and one wgmma (k16 for 16-bit, k8 for tf32) always advances 32 bytes along K, so both
// element widths share every byte offset below. f32 operands run as tf32, which wgmma reads
// K-major only (the NT layout) and truncates rather than rounds: the TF32 tier feeds this
// kernel operands that cvt.rna already rounded (gemm_tf32_prepare.cu).
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/args.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/staged_store.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/wgmma.cuh"

namespace cubins {
namespace gemm {

template <int WARPGROUPS_, int BN_, int STAGES_>
struct WgmmaTile {
  static constexpr int kWarpgroups = WARPGROUPS_;
  static constexpr int kBM = 64 * WARPGROUPS_, kBN = BN_;
  static constexpr int kStages = STAGES_;
  static constexpr int kThreads = 128 * WARPGROUPS_;
  static_assert(BN_ == 256, "the accumulator block is m64n256 (wgmma_m64n256)");
  static_assert(kStages >= 3, "a stage is refilled two k tiles after it was read");
};

// One pipeline stage: the A tile, then the B tile, each in SwizzledTile order (rows of eight
// chunks for K-major tiles; 64-wide panels of kKTile rows for MN-major ones).
template <class T, Layout L, class Tile>
struct WgmmaStage {
  static constexpr bool kAK = LayoutTraits<L>::a_k_major;
  static constexpr bool kBK = LayoutTraits<L>::b_k_major;
  static_assert(sizeof(T) == 2 || (kAK && kBK), "tf32 wgmma reads both operands K-major (layout NT)");
  // k per stage: one 128-byte swizzle row (the swizzle atom's width); k per wgmma: 32 bytes.
  static constexpr int kKTile = 128 / static_cast<int>(sizeof(T));
  static constexpr int kKStep = 32 / static_cast<int>(sizeof(T));
  using CopyA = TileCopy<T, SwizzledTile, kAK ? Tile::kBM : kKTile, kAK ? kKTile : Tile::kBM, Tile::kThreads>;
  using CopyB = TileCopy<T, SwizzledTile, kBK ? Tile::kBN : kKTile, kBK ? kKTile : Tile::kBN, Tile::kThreads>;
  static constexpr int kBytesA = CopyA::kFootprint * 16;
  static constexpr int kBytes = kBytesA + CopyB::kFootprint * 16;
  static constexpr int kSmemBytes = Tile::kStages * kBytes;
  static_assert(kBytesA % 1024 == 0 && kBytes % 1024 == 0, "every tile starts on a swizzle atom (1024 B)");

  // Byte offsets from a tile's start: rows [r, r + 64) of a K-major tile, or M (N) columns
  // [r, r + 64) of an MN-major tile (one 64-wide panel of kKTile rows), and the step per wgmma.
  static CUBINS_HD unsigned panel_offset(bool k_major, int r) {
    return k_major ? r * 128u : (r / 64) * kKTile * 128u;
  }
  static CUBINS_HD unsigned k_step(bool k_major) { return k_major ? 32u : kKStep * 128u; }
  static CUBINS_HD unsigned lbo(bool k_major) { return k_major ? 16u : kKTile * 128u; }
  static constexpr unsigned kSbo = 8 * 128;  // 8 rows of 128 B
};

template <class T, Layout L, class Tile>
__device__ __forceinline__ void gemm_wgmma(const GemmArgs& p) {
#if CUBINS_HAS_WGMMA
  using Stage = WgmmaStage<T, L, Tile>;
  constexpr bool kAKMajor = Stage::kAK, kBKMajor = Stage::kBK;
  constexpr int BM = Tile::kBM, BN = Tile::kBN, BK = Stage::kKTile, S = Tile::kStages;
  using CopyA = typename Stage::CopyA;
  using CopyB = typename Stage::CopyB;

  extern __shared__ __align__(1024) uint4 smem[];
  // The swizzle is a function of the address: the ring must start on a 1024-byte boundary,
  // and a launch with less shared memory than the ring would corrupt memory.
  if (dynamic_smem_bytes() < static_cast<unsigned>(Stage::kSmemBytes) || (smem_addr(smem) & 1023u) != 0) __trap();

  const int tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN);
  const TileCoord tile = raster_grouped(static_cast<int>(blockIdx.x), tiles_m, tiles_n, kRasterGroup);
  const int m_base = tile.m * BM, n_base = tile.n * BN;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int wg = warp / 4;
  const bool vec_a = (p.flags & CUBINS_GEMM_VEC_A) != 0;
  const bool vec_b = (p.flags & CUBINS_GEMM_VEC_B) != 0;
  const int ktiles = ceil_div(p.k, BK);

  auto stage_ptr = [&](int s) { return reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem) + s * Stage::kBytes); };
  auto issue = [&](int kt) {
    uint4* sa = stage_ptr(kt % S);
    copy_operand_tiles<T, CopyA, CopyB, kAKMajor, kBKMajor>(sa, sa + Stage::kBytesA / 16, p, m_base, n_base,
                                                            kt * BK, vec_a, vec_b, tid);
  };

  float acc[1][BN / 8][4];
  float(&d)[BN / 2] = reinterpret_cast<float(&)[BN / 2]>(acc);
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;

  // Descriptors of stage 0 for this warpgroup's rows of A and all of B; other stages and
  // k steps are whole-byte offsets, added to the 16-byte address field.
  const unsigned ring = smem_addr(smem);
  const uint64_t desc_a0 =
      smem_descriptor(ring + Stage::panel_offset(kAKMajor, 64 * wg), Stage::lbo(kAKMajor), Stage::kSbo);
  const uint64_t desc_b0 = smem_descriptor(ring + Stage::kBytesA, Stage::lbo(kBKMajor), Stage::kSbo);

  // Prologue: k tiles 0 .. S - 3 in flight, one commit group each (empty past the last tile,
  // so the wait below stays uniform).
#pragma unroll 1
  for (int s = 0; s < S - 2; ++s) {
    if (s < ktiles) issue(s);
    cubins::cp_async_commit();
  }
  // k tile kt: wait for this thread's copies of tile kt, publish them to the async proxy,
  // and pass the barrier (every thread's copies of tile kt are in; every warpgroup has
  // retired its wgmma of tile kt - 2, so that stage may be refilled). Then issue tile kt's
  // four wgmma steps, refill tile kt - 2's stage with tile kt + S - 2, and let at most one
  // wgmma group (tile kt) stay in flight.
  for (int kt = 0; kt < ktiles; ++kt) {
    cubins::cp_async_wait<S - 3>();
    fence_proxy_async_shared();
    __syncthreads();
    const uint64_t stage_off = static_cast<uint64_t>((kt % S) * Stage::kBytes) >> 4;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / Stage::kKStep; ++ks) {
      const uint64_t da = desc_a0 + stage_off + ((ks * Stage::k_step(kAKMajor)) >> 4);
      const uint64_t db = desc_b0 + stage_off + ((ks * Stage::k_step(kBKMajor)) >> 4);
      wgmma_m64n256<kAKMajor ? 0 : 1, kBKMajor ? 0 : 1>(d, da, db, T{});
    }
    wgmma_commit();
    const int fill = kt + S - 2;
    if (fill < ktiles) issue(fill);
    cubins::cp_async_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) pin_register(d[i]);

  // Epilogue through shared memory: the ring is free once every warp is past its last wgmma.
  cubins::cp_async_wait<0>();
  __syncthreads();
  static_assert(staged_store_bytes<BN>(Tile::kThreads / 32) <= Stage::kSmemBytes, "the slices fit in the ring");
  float* slice = reinterpret_cast<float*>(smem) + warp * (staged_store_bytes<BN>(1) / 4);
  store_accumulators<T>(p, slice, acc, m_base + 16 * warp, n_base, lane);
#else
  (void)p;
  __trap();
#endif
}

}  // namespace gemm
}  // namespace cubins

// One extern "C" entry point per instantiation (a trapping stub outside sm_90a builds).
#define CUBINS_GEMM_WGMMA_ENTRY(NAME, T, LAYOUT, TILE)                                               \
  extern "C" __global__ void __launch_bounds__(TILE::kThreads, 1) NAME(CUBINS_GEMM_PARAMS(T)) {     \
    cubins::gemm::gemm_wgmma<T, cubins::gemm::Layout::LAYOUT, TILE>(CUBINS_GEMM_ARGS);              \
  }                                                                                                  \
  CUBINS_GEMM_CATALOGUED(NAME, LAYOUT, TILE)
