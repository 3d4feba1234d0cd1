// The Hopper tensor-core GEMM for f32 inputs through tf32 (sm_90a): the 16-bit wgmma
// kernel's design (wgmma_kernel.cuh: each warpgroup owns a 64 x WN block of f32
// accumulators, all threads fill a STAGES-deep cp.async ring in the 128-byte swizzle, one
// barrier per k tile) with the constraint of 32-bit wgmma: both shared-memory operands must
// be K-major (no transpose bits). MN-major operands reach the tensor cores one of two ways:
//   Registers   the wgmma A operand comes from registers (the "RS" form), loaded from an
//               MN-major padded tile in the m16n8k8 tf32 A fragment pattern;
//   Transposed  the tile is copied in 4 x 4 blocks (4 k rows x 4 M/N values) and every
//               thread transposes its own blocks in place into the K-major swizzle (no
//               extra barrier: a block's four staged chunks are the four chunks its
//               transpose lands in).
// With SWAP the kernel computes C^T = B^T A^T (wgmma M runs along N of C) so that an
// MN-major B can be the register operand; the epilogue then stores the transposed tile.
//
// Rounding: ROUND rounds every operand with cvt.rna.tf32.f32 (the crate's TF32 semantics)
// before the tensor cores read it: register fragments and transposed blocks on the way,
// directly copied K-major tiles in a pass over each thread's own chunks. Without it the
// tensor cores read raw f32 bits from shared memory.
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/args.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/staged_store.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/wgmma.cuh"
#include "tf32_wgmma_ops.cuh"

namespace cubins {
namespace gemm {

template <int WARPGROUPS_, int WN_, int STAGES_, bool ROUND_>
struct WgmmaTf32Tile {
  static constexpr int kWarpgroups = WARPGROUPS_;
  static constexpr int kWM = 64 * WARPGROUPS_;  // wgmma M extent of the CTA tile
  static constexpr int kWN = WN_;               // wgmma N extent (one m64nWNk8 per warpgroup)
  static constexpr int kBK = 32;                // one 128-byte swizzle row of f32
  static constexpr int kStages = STAGES_;
  static constexpr int kThreads = 128 * WARPGROUPS_;
  static constexpr bool kRound = ROUND_;
  static_assert(kStages >= 3, "a stage is refilled two k tiles after it was read");
};

// Where a wgmma operand comes from (see the top of the file).
enum class Tf32Src { KMajor, Transposed, Registers };

// An MN-major 32 x COLS f32 window (k rows, COLS M or N values) copied as 4 x 4 blocks and
// transposed by each thread in place into a K-major COLS x 32 SwizzledTile. Block (kb, c):
// k rows 4 kb .. 4 kb + 3, values 4 c .. 4 c + 3. Row r of a block is staged in the chunk
// that K-major row 4 c + r, column kb occupies, so a block's staged chunks are exactly the
// chunks of its transpose. Lanes: bit 0 -> c bit 0, bits 1-2 -> kb bits 0-1, bits 3-4 -> c
// bits 1-2; copy i of warp w takes slot s = i * warps + w: c bits 3.. = s % (COLS / 32),
// kb bit 2 = s / (COLS / 32). A quarter warp's chunk columns kb ^ ((4 c + r) & 7) are then
// eight distinct values: staged writes, reads and transposed writes are conflict-free;
// global reads are 128-byte runs of 4 k rows.
template <int COLS, int THREADS>
struct StagedTranspose {
  static constexpr int kBlocks = 8 * COLS / 4;
  static constexpr int kPerThread = kBlocks / THREADS;
  static constexpr int kSlotsC = COLS / 32;
  static constexpr int kBytes = COLS * 128;
  static constexpr int kFootprint = kBytes / 16;
  static_assert(COLS % 32 == 0 && kBlocks % THREADS == 0 && THREADS % 32 == 0, "whole slots per warp");
  static_assert(kPerThread * (THREADS / 32) == 2 * kSlotsC, "slots cover the tile");

  struct Block {
    int kb;
    int c;
  };
  CUBINS_HD static Block block(int i, int tid) {
    const int lane = tid & 31, s = i * (THREADS / 32) + (tid >> 5);
    return Block{((lane >> 1) & 3) | ((s / kSlotsC) << 2), (lane & 1) | ((lane >> 3) << 1) | ((s % kSlotsC) << 3)};
  }
  // Chunk (16-byte units) of K-major row n, chunk column kb.
  CUBINS_HD static int chunk(int n, int kb) { return SwizzledTile::chunk(n, kb, COLS, 8); }

  __device__ __forceinline__ static void issue(uint4* tile, const float* g, int64_t ld, int row0, int col0,
                                               int rows_total, int cols_total, bool vec, int tid) {
    const bool interior = row0 + 32 <= rows_total && col0 + COLS <= cols_total;
    if (vec && interior) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const Block b = block(i, tid);
        const float* src = g + (row0 + 4 * b.kb) * ld + col0 + 4 * b.c;
#pragma unroll
        for (int r = 0; r < 4; ++r) cubins::cp_async_16(tile + chunk(4 * b.c + r, b.kb), src + r * ld);
      }
    } else {
#pragma unroll 1
      for (int i = 0; i < kPerThread; ++i) {
        const Block b = block(i, tid);
#pragma unroll 1
        for (int r = 0; r < 4; ++r) {
          const int grow = row0 + 4 * b.kb + r, gcol = col0 + 4 * b.c;
          int valid = grow < rows_total ? cols_total - gcol : 0;
          valid = valid < 0 ? 0 : (valid > 4 ? 4 : valid);
          const float* src = g + static_cast<int64_t>(grow) * ld + gcol;
          uint4* dst = tile + chunk(4 * b.c + r, b.kb);
          if (vec) {
            cp_async_16_zfill(smem_addr(dst), valid > 0 ? static_cast<const void*>(src) : static_cast<const void*>(g),
                              static_cast<unsigned>(valid) * 4u);
          } else {
            union {
              uint4 v;
              uint32_t e[4];
            } u;
#pragma unroll
            for (int e = 0; e < 4; ++e) u.e[e] = e < valid ? reinterpret_cast<const uint32_t*>(src)[e] : 0u;
            *dst = u.v;
          }
        }
      }
    }
  }

  // After this thread's copies of the tile have landed: transpose its blocks in place.
  template <bool kRound>
  __device__ __forceinline__ static void transpose(unsigned tile, int tid) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const Block b = block(i, tid);
      uint32_t v[4][4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const unsigned a = tile + chunk(4 * b.c + r, b.kb) * 16u;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v[r][0]), "=r"(v[r][1]), "=r"(v[r][2]), "=r"(v[r][3])
                     : "r"(a));
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        uint32_t o[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) o[r] = kRound ? to_tf32(v[r][q]) : v[r][q];
        const unsigned a = tile + chunk(4 * b.c + q, b.kb) * 16u;
        asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(o[0]), "r"(o[1]), "r"(o[2]), "r"(o[3])
                     : "memory");
      }
    }
  }
};

// Rounds the chunks this thread copied into a TileCopy tile (after they landed).
template <class Copy, class TileLayout, int ROWS, int THREADS>
__device__ __forceinline__ void round_own_chunks(unsigned tile, int tid) {
#pragma unroll
  for (int i = 0; i < Copy::kPerThread; ++i) {
    const CopySlot s = copy_slot<TileLayout>(i, tid, THREADS, ROWS, Copy::kChunksPerRow);
    const unsigned a = tile + s.offset * 16u;
    uint32_t v[4];
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "r"(a));
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(to_tf32(v[0])), "r"(to_tf32(v[1])),
                 "r"(to_tf32(v[2])), "r"(to_tf32(v[3]))
                 : "memory");
  }
}

// One wgmma operand's shared-memory tile: how it is copied and how big it is.
template <Tf32Src SRC, int ROWS, int THREADS>
struct Tf32Operand {
  // KMajor: ROWS x 32 swizzled; Registers: 32 x ROWS padded; Transposed: staged, ROWS x 32.
  using Copy = typename std::conditional<
      SRC == Tf32Src::KMajor, TileCopy<float, SwizzledTile, ROWS, 32, THREADS>,
      typename std::conditional<SRC == Tf32Src::Registers, TileCopy<float, PaddedTile, 32, ROWS, THREADS>,
                                StagedTranspose<ROWS, THREADS>>::type>::type;
  static constexpr int kBytes = Copy::kFootprint * 16;

  // Copies k tile k0 of an operand whose M (N) window starts at `base`.
  __device__ __forceinline__ static void issue(uint4* tile, const float* g, int ld, int base, int extent, int k0, int k,
                                               bool k_major, bool vec, int tid) {
    if constexpr (SRC == Tf32Src::KMajor) {
      (void)k_major;
      Copy::issue(tile, g, ld, base, k0, extent, k, vec, tid);
    } else {
      (void)k_major;
      Copy::issue(tile, g, ld, k0, base, k, extent, vec, tid);
    }
  }
  // Between this thread's copies landing and the barrier that publishes the tile.
  template <bool kRound>
  __device__ __forceinline__ static void prepare(unsigned tile, int tid) {
    if constexpr (SRC == Tf32Src::Transposed) {
      Copy::template transpose<kRound>(tile, tid);
    } else if constexpr (SRC == Tf32Src::KMajor && kRound) {
      round_own_chunks<Copy, SwizzledTile, ROWS, THREADS>(tile, tid);
    }
  }
};

// Operand roles per layout. SWAP: C^T = B^T A^T, the wgmma A operand is (global) B.
template <Layout L, bool SWAP, Tf32Src SA, Tf32Src SB, class Tile>
struct WgmmaTf32Plan {
  static constexpr bool kSwap = SWAP;
  // Storage of the global operands feeding wgmma A (a) and B (b).
  static constexpr bool kAK = SWAP ? LayoutTraits<L>::b_k_major : LayoutTraits<L>::a_k_major;
  static constexpr bool kBK = SWAP ? LayoutTraits<L>::a_k_major : LayoutTraits<L>::b_k_major;
  static_assert((SA == Tf32Src::KMajor) == kAK, "K-major operands are copied as they are, MN-major ones reshaped");
  static_assert((SB == Tf32Src::KMajor) == kBK, "K-major operands are copied as they are, MN-major ones reshaped");
  static_assert(SB != Tf32Src::Registers, "the wgmma B operand lives in shared memory");
  using OpA = Tf32Operand<SA, Tile::kWM, Tile::kThreads>;
  using OpB = Tf32Operand<SB, Tile::kWN, Tile::kThreads>;
  // Stage: the B tile (1024-aligned), then the A tile; stages 1024-aligned.
  static constexpr int kBytesB = OpB::kBytes;
  static constexpr int kBytes = (kBytesB + OpA::kBytes + 1023) / 1024 * 1024;
  static constexpr int kSmemBytes = Tile::kStages * kBytes;
  static_assert(kBytesB % 1024 == 0, "the A tile starts on a swizzle atom");
  // C tile extents.
  static constexpr int kRowsC = SWAP ? Tile::kWN : Tile::kWM;
  static constexpr int kColsC = SWAP ? Tile::kWM : Tile::kWN;
  static constexpr int kSwapRow = Tile::kWM + 4;  // floats per staged C row in the transposed epilogue
};

template <Layout L, class Tile, bool SWAP, Tf32Src SA, Tf32Src SB>
__device__ __forceinline__ void gemm_wgmma_tf32(const GemmArgs& p) {
#if CUBINS_HAS_WGMMA
  using Plan = WgmmaTf32Plan<L, SWAP, SA, SB, Tile>;
  using OpA = typename Plan::OpA;
  using OpB = typename Plan::OpB;
  constexpr int WM = Tile::kWM, WN = Tile::kWN, BK = Tile::kBK, S = Tile::kStages, T = Tile::kThreads;
  constexpr bool kRound = Tile::kRound;

  extern __shared__ __align__(1024) uint4 smem[];
  if (dynamic_smem_bytes() < static_cast<unsigned>(Plan::kSmemBytes) || (smem_addr(smem) & 1023u) != 0) __trap();

  const int tiles_m = ceil_div(p.m, Plan::kRowsC), tiles_n = ceil_div(p.n, Plan::kColsC);
  const TileCoord tile = raster_grouped(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8);
  const int m_base = tile.m * Plan::kRowsC, n_base = tile.n * Plan::kColsC;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int wg = warp / 4;
  const bool vec_a = (p.flags & CUBINS_GEMM_VEC_A) != 0;
  const bool vec_b = (p.flags & CUBINS_GEMM_VEC_B) != 0;
  // wgmma operand sources: (pointer, leading dimension, window base, extent, vector copies).
  const float* ga = reinterpret_cast<const float*>(SWAP ? p.b : p.a);
  const float* gb = reinterpret_cast<const float*>(SWAP ? p.a : p.b);
  const int lda_ = SWAP ? p.ldb : p.lda, ldb_ = SWAP ? p.lda : p.ldb;
  const int base_a = SWAP ? n_base : m_base, base_b = SWAP ? m_base : n_base;
  const int ext_a = SWAP ? p.n : p.m, ext_b = SWAP ? p.m : p.n;
  const bool vga = SWAP ? vec_b : vec_a, vgb = SWAP ? vec_a : vec_b;
  const int ktiles = ceil_div(p.k, BK);

  const unsigned ring = smem_addr(smem);
  auto stage_ptr = [&](int s) { return reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem) + s * Plan::kBytes); };
  auto issue = [&](int kt) {
    uint4* sb = stage_ptr(kt % S);
    uint4* sa = sb + Plan::kBytesB / 16;
    OpB::issue(sb, gb, ldb_, base_b, ext_b, kt * BK, p.k, Plan::kBK, vgb, tid);
    OpA::issue(sa, ga, lda_, base_a, ext_a, kt * BK, p.k, Plan::kAK, vga, tid);
  };

  float d[WN / 2];
#pragma unroll
  for (int i = 0; i < WN / 2; ++i) d[i] = 0.0f;

  const uint64_t desc_b0 = smem_descriptor(ring, 16, 1024);
  const uint64_t desc_a0 = smem_descriptor(ring + Plan::kBytesB + 64 * wg * 128, 16, 1024);
  // Register operand: this warp's 16 rows of the padded A tile.
  const int frag_row = 64 * wg + 16 * (warp & 3);

  // One k tile: this thread's copies of tile kt landed -> reshape them -> publish -> wgmma.
  auto step = [&](int kt, uint32_t(&af)[BK / 8][4]) {
    cubins::cp_async_wait<S - 3>();
    const unsigned sb = ring + (kt % S) * Plan::kBytes;
    const unsigned sa = sb + Plan::kBytesB;
    OpB::template prepare<kRound>(sb, tid);
    OpA::template prepare<kRound>(sa, tid);
    fence_proxy_async_shared();
    __syncthreads();
    if constexpr (SA == Tf32Src::Registers) {
#pragma unroll
      for (int ks = 0; ks < BK / 8; ++ks)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const uint32_t v = ld_shared_u32(sa + a_word_offset(lane, r, frag_row, ks * 8, WM / 4));
          af[ks][r] = kRound ? to_tf32(v) : v;
        }
    }
    const uint64_t stage_off = static_cast<uint64_t>((kt % S) * Plan::kBytes) >> 4;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
      const uint64_t db = desc_b0 + stage_off + 2 * ks;  // k8 = 32 bytes along the swizzled row
      if constexpr (SA == Tf32Src::Registers) {
        WgmmaTf32<WN>::rs(d, af[ks], db);
      } else {
        WgmmaTf32<WN>::ss(d, desc_a0 + stage_off + 2 * ks, db);
      }
    }
    wgmma_commit();
    const int fill = kt + S - 2;
    if (fill < ktiles) issue(fill);
    cubins::cp_async_commit();
    wgmma_wait<1>();
  };

#pragma unroll 1
  for (int s = 0; s < S - 2; ++s) {
    if (s < ktiles) issue(s);
    cubins::cp_async_commit();
  }
  // Two k tiles per trip: the register fragments of tile kt stay untouched while its wgmma
  // group may still run during tile kt + 1.
  uint32_t af0[BK / 8][4], af1[BK / 8][4];
  // (No conditional second step inside the loop: ptxas must see that a fragment buffer is
  // only rewritten after the group reading it retired, or it serializes every wgmma.)
  int kt = 0;
#pragma unroll 1
  for (; kt + 1 < ktiles; kt += 2) {
    step(kt, af0);
    step(kt + 1, af1);
  }
  if (kt < ktiles) step(kt, af0);
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < WN / 2; ++i) pin_register(d[i]);

  cubins::cp_async_wait<0>();
  __syncthreads();
  if constexpr (!SWAP) {
    static_assert(staged_store_bytes<WN>(T / 32) <= Plan::kSmemBytes, "the slices fit in the ring");
    float* slice = reinterpret_cast<float*>(smem) + warp * (staged_store_bytes<WN>(1) / 4);
    store_accumulators<float>(p, slice, reinterpret_cast<float(&)[1][WN / 8][4]>(d), m_base + 16 * warp, n_base, lane);
  } else {
    // The accumulators hold C^T: (row n', column m') -> staged C row m', column n'.
    constexpr int R = Plan::kSwapRow;
    static_assert(WN * R * 4 <= Plan::kSmemBytes, "the transposed tile fits in the ring");
    float* st = reinterpret_cast<float*>(smem);
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < WN / 2; ++i) {
      const int j = i >> 2, r = i & 3;
      st[(8 * j + 2 * t + (r & 1)) * R + frag_row + g + 8 * (r >> 1)] = d[i];
    }
    __syncthreads();
    const EpilogueArgs e = EpilogueArgs::from(p);
    float* c = reinterpret_cast<float*>(p.c);
#pragma unroll 4
    for (int idx = tid; idx < WN * (WM / 4); idx += T) {
      const int row = idx / (WM / 4), q = idx % (WM / 4);
      const float4 v = *reinterpret_cast<const float4*>(st + row * R + 4 * q);
      store_quad(e, c, m_base + row, n_base + 4 * q, v);
    }
  }
#else
  (void)p;
  __trap();
#endif
}

}  // namespace gemm
}  // namespace cubins
