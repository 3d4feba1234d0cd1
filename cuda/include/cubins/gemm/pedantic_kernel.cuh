// Pedantic f32 GEMM: plain FFMA, every output owned by one thread that sums k in ascending
// order with explicit fmaf, starting from +0. The value of an output is therefore
//   acc = fmaf(a[k-1], b[k-1], ... fmaf(a[1], b[1], fmaf(a[0], b[0], 0)))
// whatever the tile shape, thread count, grid size or raster: bit-identical across runs,
// configurations and launch geometry, and reproducible on a CPU with f32 fused multiply-add.
// Zero padding past K adds fmaf(0, 0, acc) == acc exactly (acc is never -0: it starts at +0
// and an exact zero sum rounds to +0), so tails do not change the bits either.
//
// Tiles of BM x BN outputs, TM x TN per thread; A and B tiles are staged in shared memory
// K-row-major ([BK][BM] and [BK][BN]), double-buffered, the next tile prefetched into
// registers while this one is consumed. Blocks walk tiles with a grid-stride loop, so any
// grid size is a valid launch.
#pragma once

#include <cstdint>

#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/args.cuh"

namespace cubins {
namespace gemm {

template <int BM_, int BN_, int BK_, int TM_, int TN_, int MIN_BLOCKS_>
struct FmaTile {
  static constexpr int kBM = BM_, kBN = BN_, kBK = BK_, kTM = TM_, kTN = TN_;
  static constexpr int kMinBlocks = MIN_BLOCKS_;
  static constexpr int kThreadsM = kBM / kTM, kThreadsN = kBN / kTN;
  static constexpr int kThreads = kThreadsM * kThreadsN;
  static_assert(kTM % 4 == 0 && kTN % 4 == 0, "threads own runs of 4 rows and 4 columns");
};

// Padding of a staged row: 16-byte aligned rows whose bank offset moves by 4 per k, so the
// K-contiguous staging stores of 8 consecutive k hit distinct banks.
constexpr int kFmaPad = 4;

// Row (or column) of the i-th output a thread owns along one dimension: runs of 4, the runs
// spread over the tile so a warp's shared reads are broadcasts or contiguous.
CUBINS_HD int fma_owned(int i, int thread_idx, int tile, int per_thread) {
  return (i / 4) * (tile / (per_thread / 4)) + thread_idx * 4 + (i % 4);
}

// The run of `per_thread` elements thread `tid` stages: stored row `line` (of K_MAJOR's
// rows, else of k), elements [first, first + per_thread) along it.
struct FmaRun {
  int line;
  int first;
};

CUBINS_HD FmaRun fma_run(int tid, int runs_per_line, int per_thread) {
  return FmaRun{tid / runs_per_line, (tid % runs_per_line) * per_thread};
}

// Stages a ROWS x BK slice of op(X) (rows: M or N) into `s` as [BK][ROWS + pad].
// K_MAJOR: X is stored [rows][K]; else [K][rows]. Each thread loads a run of kPerThread
// elements that are contiguous in global memory (one pointer, one bounds check per run
// start), and consecutive threads take consecutive runs. Out-of-range elements are zero.
template <int ROWS, int BK, int THREADS, bool K_MAJOR>
struct FmaStage {
  static constexpr int kPerThread = ROWS * BK / THREADS;
  static constexpr int kRunsPerLine = (K_MAJOR ? BK : ROWS) / kPerThread;
  static_assert(ROWS * BK % THREADS == 0, "whole elements per thread");
  static_assert((K_MAJOR ? BK : ROWS) % kPerThread == 0, "runs do not cross a stored row");

  __device__ __forceinline__ static void load(float (&r)[kPerThread], const float* x, int64_t ld, int row0, int k0,
                                              int rows_total, int k_total, int tid) {
    const FmaRun run = fma_run(tid, kRunsPerLine, kPerThread);
    const int line = run.line, first = run.first;
    // K_MAJOR: stored row `row0 + line`, k from k0 + first. Else stored row k0 + line.
    const int grow = K_MAJOR ? row0 + line : row0 + first;
    const int gk = K_MAJOR ? k0 + first : k0 + line;
    const float* src = K_MAJOR ? x + grow * ld + gk : x + static_cast<int64_t>(gk) * ld + grow;
    const int valid = K_MAJOR ? (grow < rows_total ? k_total - gk : 0) : (gk < k_total ? rows_total - grow : 0);
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) r[i] = i < valid ? src[i] : 0.0f;
  }

  __device__ __forceinline__ static void store(const float (&r)[kPerThread], float* s, int tid) {
    const FmaRun run = fma_run(tid, kRunsPerLine, kPerThread);
    const int line = run.line, first = run.first;
    if constexpr (K_MAJOR) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) s[(first + i) * (ROWS + kFmaPad) + line] = r[i];
    } else {
      // The run is contiguous in the staged row too: 16-byte stores (rows are 16-byte aligned).
      static_assert(kPerThread % 4 == 0 && (ROWS + kFmaPad) % 4 == 0, "runs of whole float4s");
#pragma unroll
      for (int i = 0; i < kPerThread; i += 4)
        *reinterpret_cast<float4*>(&s[line * (ROWS + kFmaPad) + first + i]) =
            make_float4(r[i], r[i + 1], r[i + 2], r[i + 3]);
    }
  }
};

template <Layout L, class Tile>
__device__ __forceinline__ void gemm_pedantic(const GemmArgs& p) {
  constexpr int BM = Tile::kBM, BN = Tile::kBN, BK = Tile::kBK, TM = Tile::kTM, TN = Tile::kTN;
  constexpr int THREADS = Tile::kThreads;
  using StageA = FmaStage<BM, BK, THREADS, LayoutTraits<L>::a_k_major>;
  using StageB = FmaStage<BN, BK, THREADS, LayoutTraits<L>::b_k_major>;
  __shared__ __align__(16) float sa[2][BK][BM + kFmaPad];
  __shared__ __align__(16) float sb[2][BK][BN + kFmaPad];

  const int tid = static_cast<int>(threadIdx.x);
  const int ty = tid / Tile::kThreadsN, tx = tid % Tile::kThreadsN;
  const float* A = reinterpret_cast<const float*>(p.a);
  const float* B = reinterpret_cast<const float*>(p.b);
  const int tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN);
  const int ktiles = ceil_div(p.k, BK);
  const EpilogueArgs e = EpilogueArgs::from(p);
  float* C = reinterpret_cast<float*>(p.c);

  for (int tile = static_cast<int>(blockIdx.x); tile < tiles_m * tiles_n; tile += static_cast<int>(gridDim.x)) {
    const TileCoord tc = raster_grouped(tile, tiles_m, tiles_n, 8);
    const int m0 = tc.m * BM, n0 = tc.n * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    float ra[StageA::kPerThread], rb[StageB::kPerThread];
    StageA::load(ra, A, p.lda, m0, 0, p.m, p.k, tid);
    StageB::load(rb, B, p.ldb, n0, 0, p.n, p.k, tid);
    // Buffer 0 may still be read by a slower thread finishing the previous tile (with K == 0
    // no k loop ran to end on a barrier).
    __syncthreads();
    StageA::store(ra, &sa[0][0][0], tid);
    StageB::store(rb, &sb[0][0][0], tid);
    __syncthreads();

    for (int kt = 0; kt < ktiles; ++kt) {
      const int buf = kt & 1;
      const bool more = kt + 1 < ktiles;
      if (more) {
        StageA::load(ra, A, p.lda, m0, (kt + 1) * BK, p.m, p.k, tid);
        StageB::load(rb, B, p.ldb, n0, (kt + 1) * BK, p.n, p.k, tid);
      }
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float a[TM], b[TN];
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
          const float4 v = *reinterpret_cast<const float4*>(&sa[buf][k][fma_owned(i, ty, BM, TM)]);
          a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
        }
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          const float4 v = *reinterpret_cast<const float4*>(&sb[buf][k][fma_owned(j, tx, BN, TN)]);
          b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
      if (more) {
        // Buffer buf ^ 1 was last read in iteration kt - 1, before the barrier ending it.
        StageA::store(ra, &sa[buf ^ 1][0][0], tid);
        StageB::store(rb, &sb[buf ^ 1][0][0], tid);
      }
      __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        store_quad(e, C, m0 + fma_owned(i, ty, BM, TM), n0 + fma_owned(j, tx, BN, TN),
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
  }
}

}  // namespace gemm
}  // namespace cubins

#define CUBINS_GEMM_PEDANTIC_ENTRY(NAME, LAYOUT, TILE)                                                     \
  extern "C" __global__ void __launch_bounds__(TILE::kThreads, TILE::kMinBlocks) NAME(CUBINS_GEMM_PARAMS(float)) { \
    cubins::gemm::gemm_pedantic<cubins::gemm::Layout::LAYOUT, TILE>(CUBINS_GEMM_ARGS);                                   \
  }                                                                                                        \
  CUBINS_GEMM_CATALOGUED(NAME, LAYOUT, TILE)
