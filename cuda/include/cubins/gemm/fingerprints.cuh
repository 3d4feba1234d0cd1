// Compile-time fingerprints of the GEMM index math: FNV-1a (32-bit) over the values the
// host-callable index functions take on the shapes the kernels use. tests/gemm_host.rs
// computes the same fingerprints from its model of these functions and compares them with
// the constants below, so a change on either side without the other fails: here as a
// static_assert when the kernels compile, there as a failing host test.
#pragma once

#include <cstdint>

#include "cubins/gemm/decode_kernel.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/mma_kernel.cuh"
#include "cubins/gemm/pedantic_kernel.cuh"
#include "cubins/gemm/tile_copy.cuh"

namespace cubins {
namespace gemm {
namespace fingerprint {

struct Fnv {
  uint32_t h = 2166136261u;
  constexpr void add(int v) {
    const uint32_t u = static_cast<uint32_t>(v);
    for (int b = 0; b < 4; ++b) {
      h ^= (u >> (8 * b)) & 0xffu;
      h *= 16777619u;
    }
  }
};

// Tile layouts over every (rows, chunks per row) a stage tile has.
constexpr uint32_t layouts() {
  Fnv f;
  constexpr int swizzled[][2] = {{128, 4}, {256, 4}, {32, 16}, {32, 32}, {64, 8}, {128, 8}, {32, 8}};
  for (const auto& s : swizzled)
    for (int r = 0; r < s[0]; ++r)
      for (int c = 0; c < s[1]; ++c) f.add(SwizzledTile::chunk(r, c, s[0], s[1]));
  constexpr int padded[][2] = {{32, 32}, {32, 16}};
  for (const auto& s : padded)
    for (int r = 0; r < s[0]; ++r)
      for (int c = 0; c < s[1]; ++c) f.add(PaddedTile::chunk(r, c, s[0], s[1]));
  return f.h;
}

// ldmatrix lane offsets of one (element width, outer tile extent, BK) combination.
template <int EPC, bool TRANS_TOO>
constexpr void add_ldmatrix(Fnv& f, int outer, int bk) {
  constexpr int mma_k = EPC == 8 ? 16 : 8;
  for (int x0 = 0; x0 < outer; x0 += 16)
    for (int kk = 0; kk < bk; kk += mma_k)
      for (int lane = 0; lane < 32; ++lane) {
        f.add(a_ldmatrix_offset<SwizzledTile, true, EPC>(lane, x0, kk, outer, bk));
        f.add(b_ldmatrix_offset<SwizzledTile, true, EPC>(lane, x0, kk, outer, bk));
        if (TRANS_TOO) {
          f.add(a_ldmatrix_offset<SwizzledTile, false, EPC>(lane, x0, kk, outer, bk));
          f.add(b_ldmatrix_offset<SwizzledTile, false, EPC>(lane, x0, kk, outer, bk));
        }
      }
}

// Fragment addresses for the tile extents the kernels are instantiated with.
constexpr uint32_t fragments() {
  Fnv f;
  add_ldmatrix<8, true>(f, 128, 32);
  add_ldmatrix<8, true>(f, 256, 32);
  add_ldmatrix<8, true>(f, 64, 64);
  add_ldmatrix<4, false>(f, 128, 16);
  add_ldmatrix<4, false>(f, 64, 32);
  constexpr int words[][2] = {{128, 16}, {64, 32}};  // f32 MN-major: (outer, BK)
  for (const auto& w : words)
    for (int x0 = 0; x0 < w[0]; x0 += 16)
      for (int kk = 0; kk < w[1]; kk += 8)
        for (int lane = 0; lane < 32; ++lane)
          for (int r = 0; r < 4; ++r) {
            f.add(a_word_offset(lane, r, x0, kk, w[0] / 4));
            f.add(b_word_offset(lane, r, x0, kk, w[0] / 4));
          }
  return f.h;
}

// Copy slots of every stage tile: (threads, rows, chunks per row, padded).
constexpr uint32_t copies() {
  Fnv f;
  constexpr int tiles[][4] = {{256, 128, 4, 0}, {256, 32, 16, 0}, {256, 256, 4, 0}, {256, 32, 32, 0},
                              {128, 64, 8, 0},  {256, 128, 8, 0}, {256, 32, 32, 1}, {128, 64, 8, 1},
                              {128, 32, 16, 1}, {256, 16, 32, 1}};
  for (const auto& t : tiles)
    for (int i = 0; i < t[1] * t[2] / t[0]; ++i)
      for (int tid = 0; tid < t[0]; ++tid) {
        const CopySlot s = t[3] ? copy_slot<PaddedTile>(i, tid, t[0], t[1], t[2])
                                : copy_slot<SwizzledTile>(i, tid, t[0], t[1], t[2]);
        f.add(s.row);
        f.add(s.col);
        f.add(s.offset);
      }
  return f.h;
}

// Raster, decode output columns, epilogue staging, pedantic ownership and staging runs.
constexpr uint32_t ownership() {
  Fnv f;
  constexpr int grids[][2] = {{1, 1}, {9, 5}, {17, 3}, {33, 64}, {8, 8}};
  for (const auto& g : grids)
    for (int bid = 0; bid < g[0] * g[1]; ++bid) {
      const TileCoord c = raster_grouped(bid, g[0], g[1], 8);
      f.add(c.m);
      f.add(c.n);
    }
  for (int i = 0; i < 2; ++i)
    for (int r = 0; r < 16; ++r) {
      f.add(decode_column<Layout::NT>(i, r));
      f.add(decode_column<Layout::NN>(i, r));
    }
  constexpr int owned[][2] = {{128, 8}, {64, 4}};  // (tile, per thread)
  for (const auto& o : owned)
    for (int t = 0; t < 16; ++t)
      for (int i = 0; i < o[1]; ++i) f.add(fma_owned(i, t, o[0], o[1]));
  for (int lane = 0; lane < 32; ++lane)
    for (int ni = 0; ni < 8; ++ni)
      for (int r = 0; r < 4; ++r) {
        const EpilogueSlot at = epilogue_slot(lane, ni, r);
        f.add(at.row);
        f.add(at.col);
      }
  for (int warp_n = 32; warp_n <= 64; warp_n += 32)
    for (int idx = 0; idx < 16 * warp_n / 4; ++idx) {
      const EpilogueSlot q = epilogue_quad(idx, warp_n);
      f.add(q.row);
      f.add(q.col);
    }
  constexpr int runs[][2] = {{2, 4}, {32, 4}, {4, 4}, {16, 4}};  // (runs per line, per thread)
  for (const auto& r : runs)
    for (int tid = 0; tid < 256; ++tid) {
      const FmaRun run = fma_run(tid, r[0], r[1]);
      f.add(run.line);
      f.add(run.first);
    }
  return f.h;
}

static_assert(layouts() == 0xd44a8b85u, "SwizzledTile / PaddedTile changed: update tests/gemm_host.rs's model");
static_assert(fragments() == 0xa3588cc5u, "fragment addressing changed: update tests/gemm_host.rs's model");
static_assert(copies() == 0xa67c5965u, "copy_slot changed: update tests/gemm_host.rs's model");
static_assert(ownership() == 0x6899c60au, "raster / decode / pedantic ownership changed: update the model");

}  // namespace fingerprint
}  // namespace gemm
}  // namespace cubins
