// The store of a warp's accumulators through shared memory, shared by the mma.sync and
// wgmma tiers (both hold accumulators in the m16n8 fragment pattern). A warp writes one m16
// slice of its accumulators (16 rows x its warp-tile width, rows padded by kEpiloguePad
// floats) to its own shared buffer, then reads it back four columns at a time for
// 4-element stores. Slot math is host-callable for fingerprints.cuh.
#pragma once

#include "cubins/gemm/args.cuh"
#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/layout.cuh"

namespace cubins {
namespace gemm {

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

// Shared memory the slices of `warps` warps of width kWarpN need, bytes.
template <int kWarpN>
constexpr int staged_store_bytes(int warps) {
  return warps * 16 * (kWarpN + kEpiloguePad) * 4;
}

// Stores accumulators acc[mi][ni][r] of this warp: element (mi, ni, r) is C row
// row0 + 16 mi + epilogue_slot(lane, ni, r).row, column col0 + its .col. `slice` is this
// warp's staged_store_bytes<kWarpN>(1) bytes of shared memory.
template <class T, int kMt, int kNt>
__device__ __forceinline__ void store_accumulators(const GemmArgs& p, float* slice, const float (&acc)[kMt][kNt][4],
                                                   int row0, int col0, int lane) {
  constexpr int kWarpN = kNt * 8;
  constexpr int kRow = kWarpN + kEpiloguePad;  // floats per staged row
  const EpilogueArgs e = EpilogueArgs::from(p);
  const bool out_f32 = sizeof(T) == 4 || (p.flags & CUBINS_GEMM_OUT_F32) != 0;
#pragma unroll
  for (int mi = 0; mi < kMt; ++mi) {
#pragma unroll
    for (int ni = 0; ni < kNt; ++ni)
#pragma unroll
      for (int r = 0; r < 4; r += 2) {
        const EpilogueSlot at = epilogue_slot(lane, ni, r);
        *reinterpret_cast<float2*>(slice + at.row * kRow + at.col) = make_float2(acc[mi][ni][r], acc[mi][ni][r + 1]);
      }
    __syncwarp();
#pragma unroll 1
    for (int idx = lane; idx < 16 * kWarpN / 4; idx += 32) {
      const EpilogueSlot q = epilogue_quad(idx, kWarpN);
      const float4 v = *reinterpret_cast<const float4*>(slice + q.row * kRow + q.col);
      const int row = row0 + mi * 16 + q.row, col = col0 + q.col;
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
