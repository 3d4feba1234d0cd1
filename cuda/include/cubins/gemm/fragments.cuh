// Shared -> register fragment loads for mma.sync, per element type and operand layout.
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16 / m16n8k8"), lane = 4g + t:
//   16-bit A (m16 x k16): a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   16-bit B (k16 x n8):  b0 (2t..2t+1, g)  b1 (2t+8.., g)
//   tf32 A (m16 x k8):    a0 (g, t)  a1 (g+8, t)  a2 (g, t+4)  a3 (g+8, t+4)
//   tf32 B (k8 x n8):     b0 (t, g)  b1 (t+4, g)
// K-major tiles hold rows of the M (or N) index with K contiguous; MN-major tiles hold rows
// of K with M (or N) contiguous.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/ptx.cuh"

namespace cubins {
namespace gemm {

template <class T>
struct MmaTraits;

template <>
struct MmaTraits<__nv_bfloat16> {
  static constexpr int kK = 16;
  __device__ __forceinline__ static uint32_t operand(uint32_t bits) { return bits; }
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    mma_16816(d, a, b, __nv_bfloat16{});
  }
};

template <>
struct MmaTraits<__half> {
  static constexpr int kK = 16;
  __device__ __forceinline__ static uint32_t operand(uint32_t bits) { return bits; }
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    mma_16816(d, a, b, __half{});
  }
};

template <>
struct MmaTraits<float> {
  static constexpr int kK = 8;
  // Operands are rounded to tf32 as they leave shared memory.
  __device__ __forceinline__ static uint32_t operand(uint32_t bits) { return to_tf32(bits); }
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    mma_1688_tf32(d, a, b);
  }
};

// Layout of a stage tile: ldmatrix readers get the swizzle; f32 MN-major tiles, read with
// 32-bit loads in the tf32 fragment pattern, get padded rows.
template <class T, bool K_MAJOR>
using StageTileLayout = typename std::conditional<sizeof(T) == 4 && !K_MAJOR, PaddedTile, SwizzledTile>::type;

// Lane address arithmetic, host-callable so fingerprints.cuh can pin it (tests/gemm_host.rs
// computes the same fingerprints from its model). Offsets are bytes from the tile start.

// ldmatrix row address of `lane` for the A fragment of rows [m0, m0 + 16) at k offset kk.
// K-major tile (BM rows x BK): matrices (rows 0-7, k lo) (rows 8-15, k lo) (rows 0-7, k hi)
// (rows 8-15, k hi). MN-major tile (BK rows x BM, 16-bit only, read with .trans, which
// hands lane 4g + t the pair (m = g, k = 2t..2t+1)): (k 0-7, m 0-7) (k 0-7, m 8-15)
// (k 8-15, m 0-7) (k 8-15, m 8-15).
template <class TileLayout, bool K_MAJOR, int EPC>
CUBINS_HD int a_ldmatrix_offset(int lane, int m0, int kk, int bm, int bk) {
  if (K_MAJOR) return TileLayout::chunk(m0 + (lane & 15), kk / EPC + (lane >> 4), bm, bk / EPC) * 16;
  const int j = lane >> 3, i = lane & 7;
  return TileLayout::chunk(kk + (j >> 1) * 8 + i, (m0 + (j & 1) * 8) / EPC, bk, bm / EPC) * 16;
}

// ldmatrix row address of `lane` for the B fragments of columns [n0, n0 + 16) at k offset
// kk. K-major tile (BN rows x BK): (n 0-7, k lo) (n 0-7, k hi) (n 8-15, k lo) (n 8-15, k hi).
// MN-major tile (BK rows x BN, .trans): (k 0-7, n 0-7) (k 8-15, n 0-7) (k 0-7, n 8-15)
// (k 8-15, n 8-15). Registers come back as b[0][0], b[0][1], b[1][0], b[1][1].
template <class TileLayout, bool K_MAJOR, int EPC>
CUBINS_HD int b_ldmatrix_offset(int lane, int n0, int kk, int bn, int bk) {
  const int j = lane >> 3, i = lane & 7;
  if (K_MAJOR) return TileLayout::chunk(n0 + (j >> 1) * 8 + i, kk / EPC + (j & 1), bn, bk / EPC) * 16;
  return TileLayout::chunk(kk + (j & 1) * 8 + i, (n0 + (j >> 1) * 8) / EPC, bk, bn / EPC) * 16;
}

// Byte offset of 32-bit element (row, elem) of a padded tile with `cpr` chunks per row.
CUBINS_HD int padded_word_offset(int row, int elem, int cpr) {
  return row * (cpr + PaddedTile::kPadChunks) * 16 + elem * 4;
}

// 32-bit loads of the tf32 fragments from MN-major padded tiles (ldmatrix cannot transpose
// 32-bit elements). A register r of lane 4g + t: (k = kk + t + 4 (r / 2), m = m0 + g + 8 (r % 2)).
CUBINS_HD int a_word_offset(int lane, int reg, int m0, int kk, int cpr) {
  return padded_word_offset(kk + (lane & 3) + (reg >> 1) * 4, m0 + (lane >> 2) + (reg & 1) * 8, cpr);
}

// B register r (b[r / 2][r % 2]): (k = kk + t + 4 (r % 2), n = n0 + g + 8 (r / 2)).
CUBINS_HD int b_word_offset(int lane, int reg, int n0, int kk, int cpr) {
  return padded_word_offset(kk + (lane & 3) + (reg & 1) * 4, n0 + (lane >> 2) + (reg >> 1) * 8, cpr);
}

// The A fragment of rows [m0, m0 + 16) at k offset kk of a stage tile at shared address `tile`.
template <class T, class TileLayout, bool K_MAJOR, int BM, int BK>
__device__ __forceinline__ void load_a(unsigned tile, int m0, int kk, int lane, uint32_t (&a)[4]) {
  constexpr int epc = 16 / static_cast<int>(sizeof(T));
  if constexpr (K_MAJOR) {
    ldmatrix_x4(tile + a_ldmatrix_offset<TileLayout, true, epc>(lane, m0, kk, BM, BK), a);
  } else if constexpr (sizeof(T) == 2) {
    ldmatrix_x4_trans(tile + a_ldmatrix_offset<TileLayout, false, epc>(lane, m0, kk, BM, BK), a);
  } else {
    static_assert(std::is_same<TileLayout, PaddedTile>::value, "f32 MN-major tiles are padded");
#pragma unroll
    for (int r = 0; r < 4; ++r) a[r] = ld_shared_u32(tile + a_word_offset(lane, r, m0, kk, BM / epc));
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) a[r] = MmaTraits<T>::operand(a[r]);
}

// The B fragments of columns [n0, n0 + 16) at k offset kk: b[0] for [n0, n0 + 8), b[1] for
// [n0 + 8, n0 + 16).
template <class T, class TileLayout, bool K_MAJOR, int BN, int BK>
__device__ __forceinline__ void load_b_pair(unsigned tile, int n0, int kk, int lane, uint32_t (&b)[2][2]) {
  constexpr int epc = 16 / static_cast<int>(sizeof(T));
  uint32_t r[4];
  if constexpr (K_MAJOR) {
    ldmatrix_x4(tile + b_ldmatrix_offset<TileLayout, true, epc>(lane, n0, kk, BN, BK), r);
  } else if constexpr (sizeof(T) == 2) {
    ldmatrix_x4_trans(tile + b_ldmatrix_offset<TileLayout, false, epc>(lane, n0, kk, BN, BK), r);
  } else {
    static_assert(std::is_same<TileLayout, PaddedTile>::value, "f32 MN-major tiles are padded");
#pragma unroll
    for (int q = 0; q < 4; ++q) r[q] = ld_shared_u32(tile + b_word_offset(lane, q, n0, kk, BN / epc));
  }
  b[0][0] = MmaTraits<T>::operand(r[0]);
  b[0][1] = MmaTraits<T>::operand(r[1]);
  b[1][0] = MmaTraits<T>::operand(r[2]);
  b[1][1] = MmaTraits<T>::operand(r[3]);
}

}  // namespace gemm
}  // namespace cubins
