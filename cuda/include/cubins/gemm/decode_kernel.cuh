// Decode GEMM (M <= 16): C = A B with A (the activations, [M][K]) tiny and B (the weights)
// streamed once from DRAM. Computed as C^T = B^T A^T on m16n8k16 tensor cores so that the
// weights are the A operand, loaded straight from global memory into fragment registers
// with wide loads (no shared-memory round trip); A^T is the n8 operand: one n8 tile of rows
// for M <= 8, two for M <= 16 (the kernel picks by M at run time; rows past M are zeros).
//
// One template, `DecodeTile` (instantiated in tiles.cuh):
//  - kBlockN: columns of C per block, 16 (one mma tile; NT only) or 32 (two tiles); the ring
//    walk (below) 16 per warp.
//  - kWarps: warps per block; they split K in 32-wide steps (below).
//  - kUnroll: steps each warp loads per round before it issues their mma.
//  - kLoad: weight loads as ld.global.cs (kStreaming) or ld.global.nc.L1::no_allocate.L2::256B
//    (kPrefetch256: read-only path, no L1 allocation, 256-byte L2 prefetch). A is read with
//    ld.global.nc. Every load is predicated, the destination zeroed when it is off.
//  - kStaggerGroups (G, 0 = off): column block c starts its K walk at step (c % G) * steps / G
//    and wraps, so blocks running at the same time read different K offsets: the weight rows'
//    stride (NT) lands on different memory channels, and the blocks' loads of A (every block
//    reads all of it) spread over more L2 lines instead of queueing on the same few.
//  - kDoubleBuffer: two register sets; the loads of round j + 1 are issued before the mma
//    of round j (the mma overlap the next round's latency). Else one set: a round is
//    loaded, then consumed.
//  - kRingStages, kRingK (0: the direct walk): NN only, the weights stream through a
//    kRingStages-deep ring of kRingK-row stages in shared memory (decode_ring.cuh); unroll,
//    load flavour, stagger and double buffer do not apply there.
//
// Sum order (fixed; the result does not depend on timing). Steps are numbered by walk
// position s = 0 .. steps - 1; position s reads physical step (s + shift) % steps, with
// shift = (blockIdx.x % G) * steps / G with G = kStaggerGroups, else 0. Warp w takes positions
// w, w + W, w + 2W, ... (W = kWarps) and accumulates them in that order, one m16n8k16 mma
// per 16 k (both round structures consume rounds and steps within a round in position
// order). The warps' partial sums are then added in shared memory in warp order 0, 1, ...,
// W - 1. The stagger only moves where a block starts; for a given K and block index the
// order is fixed.
//
// The mma sums over 16 logical k; which physical k each logical k is only has to agree
// between the two operands. Lane (g, t) reads physical k = 32 s + 8 t + [0, 8) of step s;
// half h of the step feeds mma k-slots {2t, 2t+1} from physical 8t + 4h + {0, 1} and
// slots {2t+8, 2t+9} from 8t + 4h + {2, 3}. A 16-byte load of A row m therefore yields
// the n8-operand registers of both halves: b0 = word 2h, b1 = word 2h + 1.
//
// NT (B is [N][K], K contiguous): mma row r of tile i is column n = 16 i + r; lane (g, t)
// loads rows g and g + 8 of each tile, 16 bytes each, and uses words 2h / 2h + 1 directly.
// NN (B is [K][N], N contiguous; 32 columns): lane (g, t) loads 8 bytes (4 columns 4g ..
// 4g + 3) of each of its 8 physical k rows; byte permutes pair rows k, k + 1 per column.
// mma row r of tile j is column n = 4 (r % 8) + 2 j + r / 8.
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/args.cuh"
#include "cubins/gemm/decode_ring.cuh"

namespace cubins {
namespace gemm {

constexpr int kDecodeStepK = 32;
constexpr int kDecodeMaxM = 16;

// How the weights are loaded (kReadOnly is A's load).
enum class DecodeLoad : int { kStreaming = 0, kPrefetch256 = 1, kReadOnly = 2 };

template <int BLOCK_N_, int WARPS_, int UNROLL_, int LOAD_, int STAGGER_GROUPS_, int DOUBLE_BUFFER_, int MIN_BLOCKS_,
          int RING_STAGES_ = 0, int RING_K_ = 0>
struct DecodeTile {
  static constexpr int kBlockN = BLOCK_N_;
  static constexpr int kWarps = WARPS_;
  static constexpr int kUnroll = UNROLL_;
  static constexpr DecodeLoad kLoad = static_cast<DecodeLoad>(LOAD_);
  static constexpr int kStaggerGroups = STAGGER_GROUPS_;
  static constexpr bool kStagger = STAGGER_GROUPS_ != 0;
  static constexpr bool kDoubleBuffer = DOUBLE_BUFFER_ != 0;
  static constexpr int kMinBlocks = MIN_BLOCKS_;
  static constexpr int kRingStages = RING_STAGES_, kRingK = RING_K_;
  static constexpr bool kRing = RING_STAGES_ != 0;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kTiles = kBlockN / 16;  // 16-column mma tiles per block
  static_assert(kRing || kBlockN == 16 || kBlockN == 32, "16 or 32 columns per block");
  static_assert(!kRing || kRingStages >= 2, "a ring of at least two stages");
  static_assert(kLoad == DecodeLoad::kStreaming || kLoad == DecodeLoad::kPrefetch256, "a weight-load flavour");
};

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Column of C held by mma row `r` (0..15) of column tile `i` in the decode kernel.
template <Layout L>
CUBINS_HD int decode_column(int i, int r) {
  return L == Layout::NT ? 16 * i + r : 4 * (r & 7) + 2 * i + (r >> 3);
}

// Predicated vector loads: the destination is zeroed and the load issued under `ok`, in one
// asm statement (no select after the load).
#define CUBINS_DECODE_LD16(QUAL, V, PTR, OK)                                                                  \
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n" \
               " mov.b32 %3, 0;\n @p " QUAL ".v4.u32 {%0, %1, %2, %3}, [%4];\n}\n"                             \
               : "=r"(V.x), "=r"(V.y), "=r"(V.z), "=r"(V.w)                                                    \
               : "l"(PTR), "r"(static_cast<int>(OK)))
#define CUBINS_DECODE_LD8(QUAL, V, PTR, OK)                                                                   \
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n"                  \
               " @p " QUAL ".v2.u32 {%0, %1}, [%2];\n}\n"                                                       \
               : "=r"(V.x), "=r"(V.y)                                                                          \
               : "l"(PTR), "r"(static_cast<int>(OK)))
#define CUBINS_DECODE_STREAMING "ld.global.cs"
#define CUBINS_DECODE_PREFETCH256 "ld.global.nc.L1::no_allocate.L2::256B"
#define CUBINS_DECODE_READ_ONLY "ld.global.nc"

template <DecodeLoad LOAD>
__device__ __forceinline__ uint4 decode_load16(const void* ptr, bool ok) {
  uint4 v;
  if constexpr (LOAD == DecodeLoad::kStreaming) CUBINS_DECODE_LD16(CUBINS_DECODE_STREAMING, v, ptr, ok);
  else if constexpr (LOAD == DecodeLoad::kPrefetch256) CUBINS_DECODE_LD16(CUBINS_DECODE_PREFETCH256, v, ptr, ok);
  else CUBINS_DECODE_LD16(CUBINS_DECODE_READ_ONLY, v, ptr, ok);
  return v;
}

template <DecodeLoad LOAD>
__device__ __forceinline__ uint2 decode_load8(const void* ptr, bool ok) {
  static_assert(LOAD != DecodeLoad::kReadOnly, "8-byte loads are weight loads");
  uint2 v;
  if constexpr (LOAD == DecodeLoad::kStreaming) CUBINS_DECODE_LD8(CUBINS_DECODE_STREAMING, v, ptr, ok);
  else CUBINS_DECODE_LD8(CUBINS_DECODE_PREFETCH256, v, ptr, ok);
  return v;
}

#undef CUBINS_DECODE_LD16
#undef CUBINS_DECODE_LD8
#undef CUBINS_DECODE_STREAMING
#undef CUBINS_DECODE_PREFETCH256
#undef CUBINS_DECODE_READ_ONLY

// One 32-wide k step of a warp: the loads it issues. NI column tiles, MT n8 tiles of rows.
template <Layout L, int NI, int MT>
struct DecodeStep {
  uint4 a[MT];                              // A rows g (+ 8), physical k 8t .. 8t + 7
  uint4 b_nt[L == Layout::NT ? NI : 1][2];  // NT: [tile][row g / g + 8]
  uint2 b_nn[L == Layout::NN ? 8 : 1];      // NN: physical k rows 8t + r, columns 4g .. 4g + 3
};

// The block's work with MT n8 tiles of rows (M <= 8 MT) into `partial` (kWarps x NI MT 4 x 32
// floats), then the reduction and the epilogue.
template <class T, Layout L, class Tile, int MT>
__device__ __forceinline__ void decode_rows(const GemmArgs& p, float* partial) {
  constexpr int NI = Tile::kTiles, U = Tile::kUnroll, W = Tile::kWarps;
  constexpr int SETS = Tile::kDoubleBuffer ? 2 : 1;
  constexpr int NACC = NI * MT * 4;  // accumulators per lane
  constexpr bool NT = L == Layout::NT;
  static_assert(NT || NI == 2, "NN: 32 columns per block (4 per lane)");

  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int block = static_cast<int>(blockIdx.x);
  const int n_block = block * Tile::kBlockN;
  const T* A = reinterpret_cast<const T*>(p.a);
  const T* B = reinterpret_cast<const T*>(p.b);
  const int steps = ceil_div(p.k, kDecodeStepK);
  const int shift = Tile::kStagger ? (block % Tile::kStaggerGroups) * steps / Tile::kStaggerGroups : 0;
  const int64_t ldb = p.ldb;

  // Per-lane bases (rows out of range point at row 0 and never load); a step adds k.
  const T* a_row[MT];
  bool a_ok[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int m = g + 8 * mt;
    a_ok[mt] = m < p.m;
    a_row[mt] = A + static_cast<int64_t>(a_ok[mt] ? m : 0) * p.lda + 8 * t;
  }
  const T* b_row[NT ? NI : 1][2];
  bool b_ok[NT ? NI : 1][2];
  if constexpr (NT) {
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
      for (int h2 = 0; h2 < 2; ++h2) {
        const int n = n_block + 16 * i + 8 * h2 + g;
        b_ok[i][h2] = n < p.n;
        b_row[i][h2] = B + static_cast<int64_t>(b_ok[i][h2] ? n : 0) * ldb + 8 * t;
      }
  } else {
    const int n = n_block + 4 * g;  // N % 4 == 0: the 4 columns are all in or all out
    b_ok[0][0] = n < p.n;
    b_row[0][0] = B + static_cast<int64_t>(8 * t) * ldb + (b_ok[0][0] ? n : 0);
  }

  float acc[NI][MT][4];
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][mt][r] = 0.0f;

  DecodeStep<L, NI, MT> st[SETS][U];

  // Walk position s: physical step (s + shift) % steps; positions past the end load nothing.
  auto load = [&](DecodeStep<L, NI, MT>& x, int s) {
    int phys = s + shift;
    if (Tile::kStagger && phys >= steps) phys -= steps;
    const int kk = phys * kDecodeStepK;
    const bool k_in = s < steps && kk + 8 * t < p.k;  // K % 8 == 0: the 8 k are all in or all out
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) x.a[mt] = decode_load16<DecodeLoad::kReadOnly>(a_row[mt] + kk, k_in && a_ok[mt]);
    if constexpr (NT) {
#pragma unroll
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h2 = 0; h2 < 2; ++h2) x.b_nt[i][h2] = decode_load16<Tile::kLoad>(b_row[i][h2] + kk, k_in && b_ok[i][h2]);
    } else {
      const T* src = b_row[0][0] + kk * ldb;
#pragma unroll
      for (int r = 0; r < 8; ++r) x.b_nn[r] = decode_load8<Tile::kLoad>(src + r * ldb, k_in && b_ok[0][0]);
    }
  };
  auto compute = [&](const DecodeStep<L, NI, MT>& x) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint32_t a_ops[NI][4];
#pragma unroll
      for (int i = 0; i < NI; ++i) {
        if constexpr (NT) {
          a_ops[i][0] = word(x.b_nt[i][0], 2 * h);
          a_ops[i][1] = word(x.b_nt[i][1], 2 * h);
          a_ops[i][2] = word(x.b_nt[i][0], 2 * h + 1);
          a_ops[i][3] = word(x.b_nt[i][1], 2 * h + 1);
        } else {
          // Rows 4h + {0, 1} feed k-slots 2t.., rows 4h + {2, 3} feed 2t+8..; column 2i + c.
          const uint2 r0 = x.b_nn[4 * h], r1 = x.b_nn[4 * h + 1];
          const uint2 r2 = x.b_nn[4 * h + 2], r3 = x.b_nn[4 * h + 3];
          const uint32_t w0 = i == 0 ? r0.x : r0.y, w1 = i == 0 ? r1.x : r1.y;
          const uint32_t w2 = i == 0 ? r2.x : r2.y, w3 = i == 0 ? r3.x : r3.y;
          a_ops[i][0] = __byte_perm(w0, w1, 0x5410);  // column 2i, k rows 4h, 4h+1
          a_ops[i][1] = __byte_perm(w0, w1, 0x7632);  // column 2i+1
          a_ops[i][2] = __byte_perm(w2, w3, 0x5410);  // column 2i, k rows 4h+2, 4h+3
          a_ops[i][3] = __byte_perm(w2, w3, 0x7632);
        }
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const uint32_t b_ops[2] = {word(x.a[mt], 2 * h), word(x.a[mt], 2 * h + 1)};
#pragma unroll
        for (int i = 0; i < NI; ++i) MmaTraits<T>::mma(acc[i][mt], a_ops[i], b_ops);
      }
    }
  };
  // Round j of this warp: positions (j U + u) W + warp, u = 0 .. U - 1.
  auto position = [&](int j, int u) { return (j * U + u) * W + warp; };
  auto load_round = [&](DecodeStep<L, NI, MT>(&set)[U], int j) {
#pragma unroll
    for (int u = 0; u < U; ++u) load(set[u], position(j, u));
  };
  auto compute_round = [&](const DecodeStep<L, NI, MT>(&set)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) compute(set[u]);
  };

  if constexpr (Tile::kDoubleBuffer) {
    load_round(st[0], 0);
    for (int j = 0; position(j, 0) < steps; j += 2) {
      load_round(st[SETS - 1], j + 1);
      compute_round(st[0]);
      if (position(j + 1, 0) >= steps) break;
      load_round(st[0], j + 2);
      compute_round(st[SETS - 1]);
    }
  } else {
    // All loads of a round first, so that many bytes are in flight per lane.
    for (int j = 0; position(j, 0) < steps; ++j) {
      load_round(st[0], j);
      compute_round(st[0]);
    }
  }

  // Deterministic reduction over the warps' k slices: always warp 0, 1, ..., W - 1.
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) partial[(warp * NACC + (i * MT + mt) * 4 + r) * 32 + lane] = acc[i][mt][r];
  __syncthreads();

  const EpilogueArgs e = EpilogueArgs::from(p);
  const bool out_f32 = (p.flags & CUBINS_GEMM_OUT_F32) != 0;
  for (int idx = tid; idx < NACC * 32; idx += Tile::kThreads) {
    const int v = idx >> 5, ln = idx & 31;
    // Accumulator (i, mt, r) of lane (g, t): mma row g + 8 (r / 2), n8 column 2t + r % 2.
    const int i = v / (MT * 4), mt = (v >> 2) % MT, r = v & 3;
    const int m = 8 * mt + 2 * (ln & 3) + (r & 1);
    if (m >= p.m) continue;
    float sum = partial[idx];
#pragma unroll
    for (int w = 1; w < W; ++w) sum = __fadd_rn(sum, partial[w * NACC * 32 + idx]);
    const int row = (ln >> 2) + 8 * (r >> 1);
    const int n = n_block + decode_column<L>(i, row);
    if (out_f32) {
      store_one(e, reinterpret_cast<float*>(p.c), m, n, sum);
    } else {
      store_one(e, reinterpret_cast<T*>(p.c), m, n, sum);
    }
  }
}

template <class T, Layout L, class Tile>
__device__ __forceinline__ void gemm_decode(const GemmArgs& p) {
  static_assert(L == Layout::NT || L == Layout::NN, "decode reads A as [M][K]");
  wait_for_previous_grid();  // launched as a programmatic dependent (sm_90 code and later)
  if constexpr (Tile::kRing) {
    static_assert(L == Layout::NN, "the ring walk reads B as [K][N]");
    gemm_decode_ring<T, Tile>(p);
  } else {
    // Sized for two n8 tiles of rows; M <= 8 uses the first half.
    __shared__ float partial[Tile::kWarps * Tile::kTiles * 2 * 4 * 32];
    if (p.m <= 8) {
      decode_rows<T, L, Tile, 1>(p, partial);
    } else {
      decode_rows<T, L, Tile, 2>(p, partial);
    }
  }
}

}  // namespace gemm
}  // namespace cubins

#define CUBINS_GEMM_DECODE_ENTRY(NAME, T, LAYOUT, TILE)                                                    \
  extern "C" __global__ void __launch_bounds__(TILE::kThreads, TILE::kMinBlocks) NAME(CUBINS_GEMM_PARAMS(T)) { \
    cubins::gemm::gemm_decode<T, cubins::gemm::Layout::LAYOUT, TILE>(CUBINS_GEMM_ARGS);                         \
  }                                                                                                        \
  CUBINS_GEMM_CATALOGUED(NAME, LAYOUT, TILE)
