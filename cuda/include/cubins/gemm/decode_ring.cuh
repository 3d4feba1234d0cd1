// The decode kernel's ring walk (NN, wide N): the weights B ([K][N], N contiguous) stream
// through a cp.async ring in shared memory instead of straight into fragment registers.
//
// Why: the direct walk (decode_kernel.cuh) has each lane read 8 bytes of 8 k rows, so a
// block reads its 32 columns as 64-byte stripes down K. Where N / 32 blocks outnumber the
// SMs the L2 becomes the limit (run81, H100, 1 x 28672 x 4096: L2 throughput 87% against
// DRAM 79%, 0.87-0.91x cuBLAS). Here a block owns kBlockN = 16 x kWarps columns and copies
// whole row runs of 2 kBlockN bytes per k row, 16 bytes a thread, into a kRingStages-deep
// ring of kRingK-row stages; the same pattern read 1.00-1.06x cuBLAS there (explorer).
//
// A stage holds the weights as [kRingK][kBlockN] and the activations A as [16][kRingK]
// (rows past M zero), both in the GEMM tiles' swizzle (SwizzledTile, layout.cuh), so the
// eight rows an ldmatrix reads land on distinct banks.
// Warp w multiplies columns 16 w .. 16 w + 15: the weights' m16 x k16 fragment by
// ldmatrix.x4.trans, A^T's n8 fragments by ldmatrix.x2, as the direct walk computes
// C^T = B^T A^T (one n8 tile of rows for M <= 8, two for M <= 16).
//
// Sum order (fixed): each warp walks k16 blocks 0, 1, ... in order into one accumulator per
// output; no other warp or block adds to its outputs.
//
// Split K (gridDim.z > 1, the planner's SplitK, where K is long against N and the blocks of
// N alone leave SMs idle): slice z walks ring k tiles [z * per, (z + 1) * per) and stores its
// raw sums to the z-th M x ldc plane of C, the workspace (the plan passes alpha 1, beta 0, no
// bias, f32 output); gemm_splitk_reduce sums the planes in slice order.
#pragma once

#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/args.cuh"
#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/fragments.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/ptx.cuh"

namespace cubins {
namespace gemm {

template <class Tile>
struct DecodeRing {
  static constexpr int kBK = Tile::kRingK;
  static constexpr int kStages = Tile::kRingStages;
  static constexpr int kBBytes = kBK * Tile::kBlockN * 2;
  static constexpr int kABytes = 16 * kBK * 2;  // A^T's 16 rows
  static constexpr int kStageBytes = kBBytes + kABytes;
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static constexpr int kBChunks = kBBytes / 16;
  // Byte offsets of chunk q of row r in the swizzled weight and A tiles (SwizzledTile).
  static CUBINS_HD unsigned b_chunk(int r, int q) {
    return 16u * static_cast<unsigned>(SwizzledTile::chunk(r, q, kBK, Tile::kBlockN / 8));
  }
  static CUBINS_HD unsigned a_chunk(int r, int q) {
    return 16u * static_cast<unsigned>(SwizzledTile::chunk(r, q, 16, kBK / 8));
  }
  static_assert(Tile::kBlockN == 16 * Tile::kWarps, "one 16-column mma tile per warp");
  static_assert(kBK % 64 == 0 && Tile::kBlockN % 64 == 0, "rows of whole 128-byte swizzle lines");
  static_assert(kBChunks % Tile::kThreads == 0, "whole chunks per thread");
  static_assert(16 * (kBK / 8) <= Tile::kThreads, "one chunk of A per thread at most");
};

template <class T, class Tile, int MT>
__device__ __forceinline__ void decode_ring_rows(const GemmArgs& p, unsigned ring) {
  using R = DecodeRing<Tile>;
  constexpr int BN = Tile::kBlockN, BK = R::kBK, S = R::kStages, THREADS = Tile::kThreads;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = static_cast<int>(blockIdx.x) * BN;
  const T* A = static_cast<const T*>(p.a);
  const T* B = static_cast<const T*>(p.b);
  const int ktiles_all = ceil_div(p.k, BK);
  const int per_slice = ceil_div(ktiles_all, static_cast<int>(gridDim.z));
  const int kt_first = static_cast<int>(blockIdx.z) * per_slice;
  const int ktiles = max(0, min(per_slice, ktiles_all - kt_first));

  // The slice's k tile i into stage i % S. Rows past K and chunks past N read nothing (zeros); a chunk
  // that starts inside N stays inside the row (ldb is a multiple of 8, at least N).
  auto load = [&](int i) {
    const unsigned sb = ring + (i % S) * R::kStageBytes, sa = sb + R::kBBytes;
    const int k0 = (kt_first + i) * BK;
#pragma unroll
    for (int j = 0; j < R::kBChunks / THREADS; ++j) {
      const int c = tid + j * THREADS, r = c / (BN / 8), q = c % (BN / 8);
      const bool ok = k0 + r < p.k && n0 + 8 * q < p.n;
      const T* src = B + (ok ? static_cast<int64_t>(k0 + r) * p.ldb + n0 + 8 * q : 0);
      cp_async_16_zfill(sb + R::b_chunk(r, q), src, ok ? 16 : 0);
    }
    if (tid < 16 * (BK / 8)) {
      const int r = tid / (BK / 8), q = tid % (BK / 8);
      const bool ok = r < p.m && k0 + 8 * q < p.k;  // K % 8 == 0: a chunk is all in or all out
      const T* src = A + (ok ? static_cast<int64_t>(r) * p.lda + k0 + 8 * q : 0);
      cp_async_16_zfill(sa + R::a_chunk(r, q), src, ok ? 16 : 0);
    }
  };

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[mt][r] = 0.0f;

#pragma unroll
  for (int i = 0; i < S - 1; ++i) {
    if (i < ktiles) load(i);
    cp_async_commit();
  }
  const int mi = lane >> 3, rr = lane & 7;
  for (int i = 0; i < ktiles; ++i) {
    cp_async_wait<S - 2>();
    __syncthreads();  // stage i landed for every thread; stage i - 1 is free for i + S - 1
    if (i + S - 1 < ktiles) load(i + S - 1);
    cp_async_commit();
    const unsigned sb = ring + (i % S) * R::kStageBytes, sa = sb + R::kBBytes;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      // The weights' fragment (rows = columns n, cols = k) from [k][n]: matrix mi covers k
      // rows 8 (mi / 2) .. + 7 and columns 16 warp + 8 (mi % 2) .. + 7, transposed.
      uint32_t a_ops[4];
      ldmatrix_x4_trans(sb + R::b_chunk(16 * kk + 8 * (mi >> 1) + rr, 2 * warp + (mi & 1)), a_ops);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        // A^T's k16 x n8 fragment from [m][k]: rows 8 mt .. + 7, k chunks 2 kk and 2 kk + 1.
        uint32_t b_ops[2];
        ldmatrix_x2(sa + R::a_chunk(8 * mt + rr, 2 * kk + (mi & 1)), b_ops);
        MmaTraits<T>::mma(acc[mt], a_ops, b_ops);
      }
    }
  }
  cp_async_wait<0>();

  // Accumulator (mt, r) of lane (g, t): column n0 + 16 warp + g + 8 (r / 2), row 8 mt + 2 t + r % 2.
  const EpilogueArgs e = EpilogueArgs::from(p);
  const bool out_f32 = (p.flags & CUBINS_GEMM_OUT_F32) != 0;
  float* const c32 = static_cast<float*>(p.c) + static_cast<int64_t>(blockIdx.z) * p.m * p.ldc;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int m = 8 * mt + 2 * t + (r & 1), n = n0 + 16 * warp + g + 8 * (r >> 1);
      if (m >= p.m || n >= p.n) continue;
      if (out_f32) {
        store_one(e, c32, m, n, acc[mt][r]);
      } else {
        store_one(e, static_cast<T*>(p.c), m, n, acc[mt][r]);
      }
    }
}

template <class T, class Tile>
__device__ __forceinline__ void gemm_decode_ring(const GemmArgs& p) {
  extern __shared__ __align__(128) unsigned char decode_ring_smem[];
  // A launch with less shared memory than the ring would corrupt memory.
  if (dynamic_smem_bytes() < static_cast<unsigned>(DecodeRing<Tile>::kSmemBytes)) __trap();
  const unsigned ring = smem_addr(decode_ring_smem);
  if (p.m <= 8) {
    decode_ring_rows<T, Tile, 1>(p, ring);
  } else {
    decode_ring_rows<T, Tile, 2>(p, ring);
  }
}

}  // namespace gemm
}  // namespace cubins
