// GEMM index math shared by every tier: operand layouts, the swizzled shared-memory
// layout of a tile, and the block raster. Host-callable so the arithmetic can be checked
// without a GPU; tests/gemm_host.rs models the same functions.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CUBINS_HD __host__ __device__ constexpr
#else
#define CUBINS_HD constexpr
#endif

namespace cubins {
namespace gemm {

// Which operand is stored transposed. op(A) is M x K and op(B) is K x N; storage is
// row-major: NN has A [M][K] and B [K][N], TN has A [K][M], NT has B [N][K].
enum class Layout { NN, TN, NT };

template <Layout L>
struct LayoutTraits {
  // K is the contiguous dimension of the stored operand.
  static constexpr bool a_k_major = L != Layout::TN;
  static constexpr bool b_k_major = L == Layout::NT;
};

// Shared-memory tiles are arrays of 16-byte chunks: `rows` rows of `cpr` chunks each. A
// tile layout says where logical chunk (row, col) lives, in chunks from the tile start,
// and how many chunks the tile occupies.

// For tiles read by ldmatrix (eight consecutive rows at one chunk column per phase) and
// written 16 bytes per thread along rows. Chunks are grouped in 128-byte lines (one pass
// over the 32 banks); a chunk's position in its line is XORed with the line index mod 8,
// so the eight chunks of an ldmatrix phase, or of a store phase, fall in eight different
// bank groups. Rows of up to eight chunks are packed back to back; wider rows are cut
// into panels eight chunks wide, each panel holding every row.
struct SwizzledTile {
  static CUBINS_HD int chunk(int row, int col, int rows, int cpr) {
    const int u = cpr <= 8 ? row * cpr + col : (col >> 3) * rows * 8 + row * 8 + (col & 7);
    const int line = u >> 3;
    return (line << 3) | ((u & 7) ^ (line & 7));
  }
  static CUBINS_HD int footprint(int rows, int cpr) { return rows * cpr; }
};

// For f32 tiles stored MN-major and read with 32-bit loads in the tf32 fragment pattern
// (lane 4g + t reads row t, element g, and row t + 4): rows padded by two chunks (8 words)
// put row t at bank offset 8t, so the 32 lanes hit 32 banks. Addresses stay affine in
// (row, element), which keeps the per-lane address arithmetic out of the inner loop.
struct PaddedTile {
  static constexpr int kPadChunks = 2;
  static CUBINS_HD int chunk(int row, int col, int rows, int cpr) {
    (void)rows;
    return row * (cpr + kPadChunks) + col;
  }
  static CUBINS_HD int footprint(int rows, int cpr) { return rows * (cpr + kPadChunks); }
};

// Block raster: consecutive block ids walk down a group of `group` tile rows before moving
// to the next tile column, so blocks resident together share A rows and B columns in L2.
struct TileCoord {
  int m;
  int n;
};

// Rows of tiles one raster group spans in the tiled kernels.
constexpr int kRasterGroup = 8;

CUBINS_HD TileCoord raster_grouped(int bid, int tiles_m, int tiles_n, int group) {
  const int per_group = group * tiles_n;
  const int first_m = (bid / per_group) * group;
  const int rows_here = tiles_m - first_m < group ? tiles_m - first_m : group;
  const int in_group = bid % per_group;
  return TileCoord{first_m + in_group % rows_here, in_group / rows_here};
}

CUBINS_HD int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace gemm
}  // namespace cubins
