// The Hopper TF32 GEMM with register-staged copies (sm_90a): every k tile of A and B goes
// global -> registers -> (cvt.rna.tf32 rounding, and for MN-major operands a 4 x 4
// transpose) -> shared memory, always in the K-major 128-byte swizzle, so both wgmma
// operands are shared-memory descriptors for every layout (32-bit wgmma has no transpose).
// Shared-memory traffic is what a cp.async copy would cost; the rounding and the transpose
// ride along in registers. The 16-bit kernel's structure otherwise (wgmma_kernel.cuh): each
// warpgroup owns a 64 x WN block of f32 accumulators, a STAGES-deep ring, one barrier per
// k tile, one wgmma group in flight.
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/args.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/tile_copy.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/ptx.cuh"
#include "cubins/gemm/staged_store.cuh"
#include "cubins/gemm/wgmma.cuh"
#include "tf32_wgmma_ops.cuh"

namespace cubins {
namespace gemm {

template <int WARPGROUPS_, int WN_, int STAGES_, bool ROUND_, bool PREFETCH_ = false>
struct WgmmaTf32StagedTile {
  static constexpr bool kPrefetch = PREFETCH_;  // L1 prefetch of the register-staged tiles
  static constexpr int kWarpgroups = WARPGROUPS_;
  static constexpr int kBM = 64 * WARPGROUPS_, kBN = WN_;
  static constexpr int kBK = 32;  // one 128-byte swizzle row of f32
  static constexpr int kStages = STAGES_;
  static constexpr int kThreads = 128 * WARPGROUPS_;
  static constexpr bool kRound = ROUND_;
  static_assert(kStages >= 3, "a stage is refilled two k tiles after it was read");
};

__device__ __forceinline__ void ldg_128(uint32_t (&v)[4], const float* p) {
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "l"(p));
}
__device__ __forceinline__ void prefetch_l1(const float* p) { asm volatile("prefetch.global.L1 [%0];\n" ::"l"(p)); }
__device__ __forceinline__ void sts_128(unsigned addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// Up to four elements of a row starting at `src` (`valid` of them inside the matrix), zeros
// elsewhere: the edge and unaligned path. Element loads only: no lane-dependent choice
// between a vector and a scalar path, so the warp stays converged for the .aligned wgmma
// instructions that follow.
__device__ __forceinline__ void load_partial(uint32_t (&v)[4], const float* src, int valid) {
#pragma unroll
  for (int e = 0; e < 4; ++e) v[e] = e < valid ? __float_as_uint(__ldg(src + e)) : 0u;
}

// One operand's k tile (ROWS M or N values x 32 k values) as it travels through registers
// into a K-major ROWS x 32 SwizzledTile.
// K-major source (rows of k): copy i of thread tid takes chunk idx = i * THREADS + tid, row
//   idx / 8, k chunk idx % 8; a warp reads four 128-byte row segments and stores eight
//   chunks of a row per quarter warp (eight distinct swizzled columns).
// MN-major source (rows of M or N per k): 4 x 4 blocks (k rows 4 kb .. + 3, values 4 c .. + 3);
//   register r of a block holds k row 4 kb + r; its transpose is four chunks, K-major rows
//   4 c + q, chunk column kb. Lane bits: 0 -> c bit 0, 1-2 -> kb bits 0-1, 3-4 -> c bits 1-2;
//   block i of warp w is slot s = i * warps + w: c bits 3.. = s % (ROWS / 32), kb bit 2 =
//   s / (ROWS / 32). A quarter warp's stores then hit eight distinct swizzled columns and a
//   warp's loads are 128-byte runs of four k rows.
template <int ROWS, bool K_MAJOR, int THREADS>
struct RegStagedTile {
  static constexpr int kSlotsC = ROWS / 32;
  static constexpr int kSlots = 2 * kSlotsC;  // MN-major: warp-sized groups of 32 blocks
  static constexpr int kWarps = THREADS / 32;
  // MN-major tiles with fewer slots than warps leave the last warps idle (uniform per warp).
  static constexpr int kBlocksPerThread = kSlots >= kWarps ? kSlots / kWarps : 1;
  // K-major: chunk i of a thread exists while i * THREADS + tid < ROWS * 8 (whole warps).
  static constexpr int kChunks = K_MAJOR ? (ROWS * 8 + THREADS - 1) / THREADS : 4 * kBlocksPerThread;
  static_assert(K_MAJOR ? ROWS * 8 % 32 == 0 : (kSlots % kWarps == 0 || kSlots < kWarps), "whole blocks per thread");
  __device__ __forceinline__ static bool has_chunk(int i, int tid) {
    return ROWS * 8 % THREADS == 0 || i * THREADS + tid < ROWS * 8;
  }
  using Regs = uint32_t[kChunks][4];
  __device__ __forceinline__ static bool active(int tid) { return kSlots >= kWarps || (tid >> 5) < kSlots; }

  struct Block {
    int kb;
    int c;
  };
  CUBINS_HD static Block block(int i, int tid) {
    const int lane = tid & 31, s = i * (THREADS / 32) + (tid >> 5);
    return Block{((lane >> 1) & 3) | ((s / kSlotsC) << 2), (lane & 1) | ((lane >> 3) << 1) | ((s % kSlotsC) << 3)};
  }

  // Tile at M (N) offset `base` of `extent`, k tile k0 of k; ld in elements.
  __device__ __forceinline__ static void load(Regs& v, const float* g, int ld, int base, int extent, int k0, int k,
                                              bool vec, int tid) {
    const bool interior = vec && base + ROWS <= extent && k0 + 32 <= k;
    if constexpr (K_MAJOR) {
      const int row = tid / 8, col = 4 * (tid % 8);
      const float* src = g + static_cast<int64_t>(base + row) * ld + k0 + col;
      constexpr int kPass = THREADS / 8;  // rows between a thread's chunks
      if (interior) {
#pragma unroll
        for (int i = 0; i < kChunks; ++i)
          if (has_chunk(i, tid)) ldg_128(v[i], src + static_cast<int64_t>(i * kPass) * ld);
      } else {
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          if (!has_chunk(i, tid)) continue;
          int valid = base + row + i * kPass < extent ? k - (k0 + col) : 0;
          valid = valid < 0 ? 0 : (valid > 4 ? 4 : valid);
          load_partial(v[i], valid > 0 ? src + static_cast<int64_t>(i * kPass) * ld : g, valid);
        }
      }
    } else {
      if (!active(tid)) return;
#pragma unroll
      for (int b = 0; b < kChunks / 4; ++b) {
        const Block bl = block(b, tid);
        const float* src = g + static_cast<int64_t>(k0 + 4 * bl.kb) * ld + base + 4 * bl.c;
        if (interior) {
#pragma unroll
          for (int r = 0; r < 4; ++r) ldg_128(v[4 * b + r], src + static_cast<int64_t>(r) * ld);
        } else {
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            int valid = k0 + 4 * bl.kb + r < k ? extent - (base + 4 * bl.c) : 0;
            valid = valid < 0 ? 0 : (valid > 4 ? 4 : valid);
            load_partial(v[4 * b + r], valid > 0 ? src + static_cast<int64_t>(r) * ld : g, valid);
          }
        }
      }
    }
  }

  // Hints the interior tile's lines into L1 one k tile before load() reads them (edge tiles
  // are skipped): the register stage then hits L1, which adds a k tile of latency hiding.
  __device__ __forceinline__ static void prefetch(const float* g, int ld, int base, int extent, int k0, int k, bool vec,
                                                  int tid) {
    if (!(vec && base + ROWS <= extent && k0 + 32 <= k)) return;
    if constexpr (K_MAJOR) {
      const int row = tid / 8, col = 4 * (tid % 8);
      if (col != 0) return;  // one thread per 128-byte row
      const float* src = g + static_cast<int64_t>(base + row) * ld + k0;
      constexpr int kPass = THREADS / 8;
#pragma unroll
      for (int i = 0; i < kChunks; ++i)
        if (has_chunk(i, tid)) prefetch_l1(src + static_cast<int64_t>(i * kPass) * ld);
    } else {
      if (!active(tid)) return;
#pragma unroll
      for (int b = 0; b < kChunks / 4; ++b) {
        const Block bl = block(b, tid);
        if ((bl.c & 7) != 0) continue;  // one lane per 128-byte run
        const float* src = g + static_cast<int64_t>(k0 + 4 * bl.kb) * ld + base + 4 * bl.c;
#pragma unroll
        for (int r = 0; r < 4; ++r) prefetch_l1(src + static_cast<int64_t>(r) * ld);
      }
    }
  }

  template <bool kRound>
  __device__ __forceinline__ static uint32_t cvt(uint32_t x) {
    return kRound ? to_tf32(x) : x;
  }

  template <bool kRound>
  __device__ __forceinline__ static void store(unsigned tile, const Regs& v, int tid) {
    if constexpr (K_MAJOR) {
#pragma unroll
      for (int i = 0; i < kChunks; ++i) {
        if (!has_chunk(i, tid)) continue;
        const int idx = i * THREADS + tid;
        const unsigned a = tile + SwizzledTile::chunk(idx / 8, idx % 8, ROWS, 8) * 16u;
        sts_128(a, cvt<kRound>(v[i][0]), cvt<kRound>(v[i][1]), cvt<kRound>(v[i][2]), cvt<kRound>(v[i][3]));
      }
    } else {
      if (!active(tid)) return;
#pragma unroll
      for (int b = 0; b < kChunks / 4; ++b) {
        const Block bl = block(b, tid);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const unsigned a = tile + SwizzledTile::chunk(4 * bl.c + q, bl.kb, ROWS, 8) * 16u;
          sts_128(a, cvt<kRound>(v[4 * b][q]), cvt<kRound>(v[4 * b + 1][q]), cvt<kRound>(v[4 * b + 2][q]),
                  cvt<kRound>(v[4 * b + 3][q]));
        }
      }
    }
  }
};

template <Layout L, class Tile>
struct WgmmaTf32StagedStage {
  static constexpr bool kAK = LayoutTraits<L>::a_k_major;
  static constexpr bool kBK = LayoutTraits<L>::b_k_major;
  using TileA = RegStagedTile<Tile::kBM, kAK, Tile::kThreads>;
  using TileB = RegStagedTile<Tile::kBN, kBK, Tile::kThreads>;
  // The B tile, then the A tile, both K-major swizzled (rows of 128 bytes).
  static constexpr int kBytesB = Tile::kBN * 128;
  static constexpr int kBytes = kBytesB + Tile::kBM * 128;
  static constexpr int kSmemBytes = Tile::kStages * kBytes;
};

template <Layout L, class Tile>
__device__ __forceinline__ void gemm_wgmma_tf32_staged(const GemmArgs& p) {
#if CUBINS_HAS_WGMMA
  using Stage = WgmmaTf32StagedStage<L, Tile>;
  using TA = typename Stage::TileA;
  using TB = typename Stage::TileB;
  constexpr int BM = Tile::kBM, BN = Tile::kBN, BK = Tile::kBK, S = Tile::kStages;
  constexpr bool kRound = Tile::kRound;

  extern __shared__ __align__(1024) uint4 smem[];
  if (dynamic_smem_bytes() < static_cast<unsigned>(Stage::kSmemBytes) || (smem_addr(smem) & 1023u) != 0) __trap();

  const int tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN);
  const TileCoord tile = raster_grouped(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8);
  const int m_base = tile.m * BM, n_base = tile.n * BN;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int wg = warp / 4;
  const float* A = reinterpret_cast<const float*>(p.a);
  const float* B = reinterpret_cast<const float*>(p.b);
  const bool vec_a = (p.flags & CUBINS_GEMM_VEC_A) != 0;
  const bool vec_b = (p.flags & CUBINS_GEMM_VEC_B) != 0;
  const int ktiles = ceil_div(p.k, BK);
  const unsigned ring = smem_addr(smem);

  typename TA::Regs ra;
  typename TB::Regs rb;
  auto load = [&](int kt) {
    TB::load(rb, B, p.ldb, n_base, p.n, kt * BK, p.k, vec_b, tid);
    TA::load(ra, A, p.lda, m_base, p.m, kt * BK, p.k, vec_a, tid);
    __syncwarp();  // edge tiles branch per lane; reconverge before the .aligned wgmma ops
  };
  auto store = [&](int kt) {
    const unsigned sb = ring + (kt % S) * Stage::kBytes;
    TB::template store<kRound>(sb, rb, tid);
    TA::template store<kRound>(sb + Stage::kBytesB, ra, tid);
  };

  float acc[1][BN / 8][4];
  float(&d)[BN / 2] = reinterpret_cast<float(&)[BN / 2]>(acc);
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;

  const uint64_t desc_b0 = smem_descriptor(ring, 16, 1024);
  const uint64_t desc_a0 = smem_descriptor(ring + Stage::kBytesB + 64 * wg * 128, 16, 1024);

  // Prologue: tiles 0 .. S - 3 in shared memory, tile S - 2 in registers.
#pragma unroll 1
  for (int t = 0; t < S - 2; ++t) {
    if (t < ktiles) {
      load(t);
      store(t);
    }
  }
  if (S - 2 < ktiles) load(S - 2);
  fence_proxy_async_shared();

  // k tile kt: the barrier publishes tile kt (stored two or more tiles ago, then fenced) and
  // proves every warpgroup retired tile kt - 2. Issue tile kt's four k8 steps, store the
  // registers (tile kt + S - 2) into tile kt - 2's stage, load tile kt + S - 1 into them
  // (its latency hides behind a k tile of tensor work), and leave one wgmma group in flight.
#pragma unroll 1
  for (int kt = 0; kt < ktiles; ++kt) {
    __syncthreads();
    const uint64_t stage_off = static_cast<uint64_t>((kt % S) * Stage::kBytes) >> 4;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) WgmmaTf32<BN>::ss(d, desc_a0 + stage_off + 2 * ks, desc_b0 + stage_off + 2 * ks);
    wgmma_commit();
    if (kt + S - 2 < ktiles) store(kt + S - 2);
    // The fence (MEMBAR + proxy fence) goes before the loads: it would wait for them.
    fence_proxy_async_shared();
    if (kt + S - 1 < ktiles) load(kt + S - 1);
    if (Tile::kPrefetch && kt + S < ktiles) {
      TB::prefetch(B, p.ldb, n_base, p.n, (kt + S) * BK, p.k, vec_b, tid);
      TA::prefetch(A, p.lda, m_base, p.m, (kt + S) * BK, p.k, vec_a, tid);
    }
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) pin_register(d[i]);

  __syncthreads();
  static_assert(staged_store_bytes<BN>(Tile::kThreads / 32) <= Stage::kSmemBytes, "the slices fit in the ring");
  float* slice = reinterpret_cast<float*>(smem) + warp * (staged_store_bytes<BN>(1) / 4);
  store_accumulators<float>(p, slice, acc, m_base + 16 * warp, n_base, lane);
#else
  (void)p;
  __trap();
#endif
}

// The RS variant: the wgmma A operand (global A, 64 rows per warpgroup) comes from
// registers, loaded from a raw cp.async ring tile (K-major: 128-byte swizzle, one ldmatrix.x4
// per k8; MN-major: padded rows, four 32-bit loads per k8, the transpose for free) and
// rounded on the way; the B operand travels global -> registers -> shared memory
// (RegStagedTile). Shared-memory traffic equals the plain cp.async SS kernel's: the A
// fragment loads replace the tensor cores' own reads of A.
template <Layout L, class Tile>
struct WgmmaTf32RsStage {
  static constexpr bool kAK = LayoutTraits<L>::a_k_major;
  static constexpr bool kBK = LayoutTraits<L>::b_k_major;
  using LayoutA = typename std::conditional<kAK, SwizzledTile, PaddedTile>::type;
  using CopyA = TileCopy<float, LayoutA, kAK ? Tile::kBM : Tile::kBK, kAK ? Tile::kBK : Tile::kBM, Tile::kThreads>;
  using TileB = RegStagedTile<Tile::kBN, kBK, Tile::kThreads>;
  static constexpr int kBytesB = Tile::kBN * 128;
  static constexpr int kBytes = (kBytesB + CopyA::kFootprint * 16 + 1023) / 1024 * 1024;
  static constexpr int kSmemBytes = Tile::kStages * kBytes;
};

template <Layout L, class Tile>
__device__ __forceinline__ void gemm_wgmma_tf32_rs(const GemmArgs& p) {
#if CUBINS_HAS_WGMMA
  using Stage = WgmmaTf32RsStage<L, Tile>;
  using CopyA = typename Stage::CopyA;
  using TB = typename Stage::TileB;
  constexpr bool kAK = Stage::kAK;
  constexpr int BM = Tile::kBM, BN = Tile::kBN, BK = Tile::kBK, S = Tile::kStages;
  constexpr bool kRound = Tile::kRound;

  extern __shared__ __align__(1024) uint4 smem[];
  if (dynamic_smem_bytes() < static_cast<unsigned>(Stage::kSmemBytes) || (smem_addr(smem) & 1023u) != 0) __trap();

  const int tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN);
  const TileCoord tile = raster_grouped(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8);
  const int m_base = tile.m * BM, n_base = tile.n * BN;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const float* A = reinterpret_cast<const float*>(p.a);
  const float* B = reinterpret_cast<const float*>(p.b);
  const bool vec_a = (p.flags & CUBINS_GEMM_VEC_A) != 0;
  const bool vec_b = (p.flags & CUBINS_GEMM_VEC_B) != 0;
  const int ktiles = ceil_div(p.k, BK);
  const unsigned ring = smem_addr(smem);
  const int m0 = 16 * warp;  // this warp's 16 rows: warpgroup wg owns rows 64 wg .. 64 wg + 63

  auto issue_a = [&](int kt) {
    uint4* sa = reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem) + (kt % S) * Stage::kBytes + Stage::kBytesB);
    if constexpr (kAK) {
      CopyA::issue(sa, A, p.lda, m_base, kt * BK, p.m, p.k, vec_a, tid);
    } else {
      CopyA::issue(sa, A, p.lda, kt * BK, m_base, p.k, p.m, vec_a, tid);
    }
  };
  typename TB::Regs rb;
  auto load_b = [&](int kt) {
    TB::load(rb, B, p.ldb, n_base, p.n, kt * BK, p.k, vec_b, tid);
    __syncwarp();
  };
  auto store_b = [&](int kt) { TB::template store<kRound>(ring + (kt % S) * Stage::kBytes, rb, tid); };
  auto fragments = [&](unsigned sa, uint32_t(&af)[BK / 8][4]) {
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
      if constexpr (kAK) {
        ldmatrix_x4(sa + a_ldmatrix_offset<SwizzledTile, true, 4>(lane, m0, ks * 8, BM, BK), af[ks]);
      } else {
#pragma unroll
        for (int r = 0; r < 4; ++r) af[ks][r] = ld_shared_u32(sa + a_word_offset(lane, r, m0, ks * 8, BM / 4));
      }
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        if (kRound) af[ks][r] = to_tf32(af[ks][r]);
        asm volatile("" : "+r"(af[ks][r]));  // all sixteen live at once: no reuse between wgmmas
      }
    }
  };

  float acc[1][BN / 8][4];
  float(&d)[BN / 2] = reinterpret_cast<float(&)[BN / 2]>(acc);
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
  const uint64_t desc_b0 = smem_descriptor(ring, 16, 1024);

  // Prologue: A tiles 0 .. S - 3 in flight (cp.async), B tiles 0 .. S - 3 stored, B tile
  // S - 2 in registers.
#pragma unroll 1
  for (int t = 0; t < S - 2; ++t) {
    if (t < ktiles) {
      issue_a(t);
      load_b(t);
      store_b(t);
    }
    cubins::cp_async_commit();
  }
  if (S - 2 < ktiles) load_b(S - 2);
  fence_proxy_async_shared();

  // k tile kt: A tile kt landed (this thread's part), the barrier publishes all of A tile kt
  // and B tile kt and proves tile kt - 2 retired. Fragments -> wgmma; then B tile kt + S - 2
  // from registers into tile kt - 2's stage (fenced), A tile kt + S - 2 issued there, B tile
  // kt + S - 1 loaded into the registers.
  auto step = [&](int kt, uint32_t(&af)[BK / 8][4]) {
    cubins::cp_async_wait<S - 3>();
    __syncthreads();
    const unsigned sb = ring + (kt % S) * Stage::kBytes;
    fragments(sb + Stage::kBytesB, af);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) WgmmaTf32<BN>::rs(d, af[ks], desc_b0 + (((kt % S) * Stage::kBytes) >> 4) + 2 * ks);
    wgmma_commit();
    if (kt + S - 2 < ktiles) store_b(kt + S - 2);
    fence_proxy_async_shared();
    if (kt + S - 2 < ktiles) issue_a(kt + S - 2);
    cubins::cp_async_commit();
    if (kt + S - 1 < ktiles) load_b(kt + S - 1);
    if (Tile::kPrefetch && kt + S < ktiles) TB::prefetch(B, p.ldb, n_base, p.n, (kt + S) * BK, p.k, vec_b, tid);
    wgmma_wait<1>();
  };
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
  for (int i = 0; i < BN / 2; ++i) pin_register(d[i]);

  cubins::cp_async_wait<0>();
  __syncthreads();
  static_assert(staged_store_bytes<BN>(Tile::kThreads / 32) <= Stage::kSmemBytes, "the slices fit in the ring");
  float* slice = reinterpret_cast<float*>(smem) + warp * (staged_store_bytes<BN>(1) / 4);
  store_accumulators<float>(p, slice, acc, m_base + 16 * warp, n_base, lane);
#else
  (void)p;
  __trap();
#endif
}

}  // namespace gemm
}  // namespace cubins
