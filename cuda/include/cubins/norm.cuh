// What the normalizations over rows (rmsnorm.cu, layernorm.cu) share: the forward's walks,
// generic over how a row is normalized, and the backward's walk over a block's range of
// rows with its column-sum accumulators. Row geometry and walks: rows.cuh.
//
// Forward, per row (the walk chosen per row, uniform over its threads):
//   resident: the body is one tile; it stays in registers from the first reduction to the
//     write (a centered norm's second reduction reads the registers again);
//   streamed: the body is longer than a tile; every later pass reads it again (from L2);
//   elementwise: some tensor is not 16-byte aligned with the anchor; every column is read
//     element by element (correct for any alignment and length, slower).
// The residual add (kResidual) writes h = round(x + residual) as the updated residual in
// the first pass, and every later pass reads that stored h (this thread's own writes).
#pragma once

#include <cstdint>

#include "cubins/arch.cuh"
#include "cubins/colsum.cuh"
#include "cubins/common.cuh"
#include "cubins/dtype.cuh"
#include "cubins/reduce.cuh"
#include "cubins/row_split.cuh"
#include "cubins/rows.cuh"

namespace cubins {

// Chunks per thread per tile on the streamed walk (fewer loads in flight, no residency).
constexpr int kStreamChunks = 2;
// Body chunks per thread of a short row: at most this many, the forward loads the weight
// chunks with the row's, before the reductions (the host spreads rows this thin when they
// are few: SPREAD_CHUNKS in src/ops/rows.rs). Not the residual forwards on sm_100 and
// sm_120, whose ptxas is at its 64 registers there already (LayerNorm's f32 spills 4 bytes
// with the short walk).
constexpr int kShortChunks = 2;
template <bool kResidual>
constexpr bool kShortWalk = !(kBlackwell && kResidual);
// Columns per thread per step on the elementwise walk.
constexpr int kElementUnroll = 4;
// The residual add has two loads per chunk: its chunks go in groups of kResidualGroup, so the
// group in flight and the resident chunks before it fit the registers together (1 on sm_100
// and sm_120, whose CUDA 13.0 ptxas spills 8-16 bytes at 2 and 64 registers).
constexpr int kResidualGroup = kBlackwell ? 1 : 2;

// 1 / cols by the hardware reciprocal (within 1 ulp): an IEEE division is a called
// subroutine, and the call would spill the registers that hold the resident row.
__device__ __forceinline__ float inv_cols(int n) { return __fdividef(1.0f, static_cast<float>(n)); }

// ---------------------------------------------------------------- forward
//
// A Norm says how a row is normalized: `first(v)`, the term its first reduction sums over
// the row's values; kCentered, whether a second reduction sums (v - mean)^2 with mean =
// that sum / cols (else the first sum / cols is the mean square); kBias, whether y has a
// bias; and, built from the row's NormStats as Norm{mean, rstd}, `norm(v, w, b)`, the
// output of value v with weight w and bias b.
struct NormStats {
  float mean;  // 0 where the norm is not centered
  float rstd;
};

template <class T, bool kResidual>
struct FwdRow {
  const T* __restrict__ x;
  const T* rin;  // may alias rout (in-place residual): each column is read, then written, by one thread
  T* rout;
  const T* __restrict__ w;
  const T* __restrict__ b;  // the bias (kBias)
  T* __restrict__ y;
  float eps;
  float* scratch;
};

// The stored value of column c (h = the written residual, or x) read again.
template <class T, bool kResidual>
__device__ __forceinline__ float fwd_value(const FwdRow<T, kResidual>& a, int c) {
  return to_float(kResidual ? a.rout[c] : a.x[c]);
}

// Pass 1 over body chunks of tiles of kChunks: load (add and store the residual), sum of
// Norm::first. kKeep: one tile, whose chunks stay in h for the later passes.
template <class T, class Norm, bool kResidual, int kChunks, bool kKeep>
__device__ __forceinline__ float fwd_pass1(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, Chunk (&h)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  constexpr int kGroup = kResidual ? kResidualGroup : kChunks;
  float ss = 0.0f;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk xc[kChunks];
    Chunk rc[kResidual ? kChunks : 1];
    auto group = [&](auto from) {
      constexpr int kFrom = decltype(from)::value;
      for_each_chunk<kChunks, kFrom, kGroup>(p, t, [&](int k, int m) {
        xc[k] = load_chunk(a.x + p.col(m));
        if constexpr (kResidual) rc[k] = load_chunk(a.rin + p.col(m));
      });
      for_each_chunk<kChunks, kFrom, kGroup>(p, t, [&](int k, int m) {
        if constexpr (kResidual) {
          float f[kVec];
#pragma unroll
          for (int i = 0; i < kVec; ++i) f[i] = element<T>(xc[k], i) + element<T>(rc[k], i);
          xc[k] = pack<T>(f);
          store_chunk(a.rout + p.col(m), xc[k]);
        }
#pragma unroll
        for (int i = 0; i < kVec; ++i) ss += Norm::first(element<T>(xc[k], i));  // the stored (rounded) residual
        if constexpr (kKeep) h[k] = xc[k];
      });
    };
    static_for<0, kChunks, kGroup>(group);
  }
  return ss;
}

// This thread's chunks of tile t: the kept ones, or read again (the residual from this
// thread's own writes, through coherent loads).
template <class T, bool kResidual, int kChunks, bool kKeep>
__device__ __forceinline__ void fwd_tile(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, int t,
                                         const Chunk (&h)[kChunks], Chunk (&hc)[kChunks]) {
  for_each_chunk<kChunks>(p, t, [&](int k, int m) {
    hc[k] = kKeep ? h[k] : kResidual ? load_chunk<T>(a.rout + p.col(m)) : load_chunk(a.x + p.col(m));
  });
}

// A centered norm's second sum over the body: (v - mean)^2.
template <class T, bool kResidual, int kChunks, bool kKeep>
__device__ __forceinline__ float fwd_centered(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, float mean,
                                              const Chunk (&h)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  float ss = 0.0f;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk hc[kChunks];
    fwd_tile<T, kResidual, kChunks, kKeep>(p, a, t, h, hc);
    for_each_chunk<kChunks>(p, t, [&](int k, int) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const float d = element<T>(hc[k], i) - mean;
        ss += d * d;
      }
    });
  }
  return ss;
}

// The weight chunks of a short row, loaded ahead (kAhead) of its passes, and its bias
// chunks (kBias) too except on sm_100 and sm_120 (LayerNorm's forward would spill 4 bytes
// there): otherwise each waits for a cache round trip after the row's reductions.
template <int kChunks, bool kAhead, bool kBias>
struct FwdAhead {
  static constexpr bool kBiasAhead = kAhead && kBias && !kBlackwell;
  Chunk w[kAhead ? kChunks : 1];
  Chunk b[kBiasAhead ? kChunks : 1];

  template <class T, bool kResidual>
  __device__ __forceinline__ void load(const RowPlan<T>& p, const FwdRow<T, kResidual>& a) {
    if constexpr (kAhead) {
      for_each_chunk<kChunks>(p, 0, [&](int k, int m) {
        w[k] = load_chunk(a.w + p.col(m));
        if constexpr (kBiasAhead) b[k] = load_chunk(a.b + p.col(m));
      });
    }
  }
};

// Pass 2: y = norm(h, w, b).
template <class T, class Norm, bool kResidual, int kChunks, bool kKeep, bool kAhead>
__device__ __forceinline__ void fwd_pass2(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, const Norm& norm,
                                          const Chunk (&h)[kChunks],
                                          const FwdAhead<kChunks, kAhead, Norm::kBias>& ahead) {
  constexpr int kVec = Storage<T>::kVec;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk hc[kChunks];
    fwd_tile<T, kResidual, kChunks, kKeep>(p, a, t, h, hc);
    // The weight and bias rows are shared by every row (cache-resident); loaded chunk by
    // chunk so they do not double the registers the resident row holds. Each of those loads
    // waits behind the previous chunk's store, a serial chain that many rows in flight hide
    // and a few rows do not: short rows have the weights loaded ahead (kAhead).
    using Ahead = FwdAhead<kChunks, kAhead, Norm::kBias>;
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      const Chunk wc = kAhead ? ahead.w[kAhead ? k : 0] : load_chunk(a.w + p.col(m));
      Chunk bc;
      if constexpr (Norm::kBias) bc = Ahead::kBiasAhead ? ahead.b[Ahead::kBiasAhead ? k : 0] : load_chunk(a.b + p.col(m));
      float f[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        f[i] = norm(element<T>(hc[k], i), element<T>(wc, i), Norm::kBias ? element<T>(bc, i) : 0.0f);
      }
      store_chunk(a.y + p.col(m), pack<T>(f));
    });
  }
}

// The row's Norm from the reduced first sum; `centered(mean)` gives this thread's share of
// the second sum where the norm is centered.
template <class Norm, class Split, class Centered>
__device__ __forceinline__ Norm fwd_norm(float first, float inv_n, float eps, float* scratch, const Split& split,
                                         Centered&& centered) {
  if constexpr (Norm::kCentered) {
    const float mean = first * inv_n;
    const float ss = split.template sum<1>(centered(mean), scratch);
    return Norm{mean, rsqrtf(ss * inv_n + eps)};
  } else {
    return Norm{0.0f, rsqrtf(first * inv_n + eps)};
  }
}

// Resident (kKeep) or streamed walk: body chunks plus this thread's head or tail column.
// kAhead (resident rows of at most kShortChunks a thread): the weight chunks are loaded
// before the row's, so they are in flight with it.
template <class T, class Norm, bool kResidual, int kChunks, bool kKeep, bool kAhead = false, class Split>
__device__ __forceinline__ void fwd_row_vector(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, const Split& split) {
  static_assert(kKeep || !kAhead, "weights ahead only for a resident row");
  Chunk h[kChunks];
  FwdAhead<kChunks, kAhead, Norm::kBias> ahead;
  ahead.load(p, a);
  float ss = fwd_pass1<T, Norm, kResidual, kChunks, kKeep>(p, a, h);
  if (p.has_edge()) {
    float he = to_float(a.x[p.edge_col]);
    if constexpr (kResidual) {
      he = round_to<T>(he + to_float(a.rin[p.edge_col]));
      a.rout[p.edge_col] = from_float<T>(he);
    }
    ss += Norm::first(he);
  }
  ss = split.template sum<0>(ss, a.scratch);
  // The edge is read again (the residual: this thread's own write), not held across the
  // reductions.
  const Norm norm = fwd_norm<Norm>(ss, inv_cols(max(p.cols, 1)), a.eps, a.scratch, split, [&](float mean) {
    float cs = fwd_centered<T, kResidual, kChunks, kKeep>(p, a, mean, h);
    if (p.has_edge()) {
      const float d = fwd_value(a, p.edge_col) - mean;
      cs += d * d;
    }
    return cs;
  });
  fwd_pass2<T, Norm, kResidual, kChunks, kKeep, kAhead>(p, a, norm, h, ahead);
  if (p.has_edge()) {
    const int c = p.edge_col;
    const float v = fwd_value(a, c);
    a.y[c] = from_float<T>(norm(v, to_float(a.w[c]), Norm::kBias ? to_float(a.b[c]) : 0.0f));
  }
}

template <class T, class Norm, bool kResidual, class Split>
__device__ __forceinline__ void fwd_row_elementwise(const RowPlan<T>& p, const FwdRow<T, kResidual>& a,
                                                    const Split& split) {
  float ss = 0.0f;
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    float v = to_float(a.x[c]);
    if constexpr (kResidual) {
      v = round_to<T>(v + to_float(a.rin[c]));
      a.rout[c] = from_float<T>(v);
    }
    ss += Norm::first(v);
  }
  ss = split.template sum<0>(ss, a.scratch);
  const Norm norm = fwd_norm<Norm>(ss, inv_cols(max(p.cols, 1)), a.eps, a.scratch, split, [&](float mean) {
    float cs = 0.0f;
#pragma unroll kElementUnroll
    for (int c = p.lane; c < p.cols; c += p.threads) {
      const float d = fwd_value(a, c) - mean;
      cs += d * d;
    }
    return cs;
  });
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float v = fwd_value(a, c);
    a.y[c] = from_float<T>(norm(v, to_float(a.w[c]), Norm::kBias ? to_float(a.b[c]) : 0.0f));
  }
}

// The warp walk: rows of at most 32 threads (a row group within a warp) whose tensors are all
// 16-byte aligned and whose length is whole chunks, at most kWarpChunks a thread. Every load of
// the row and of its weight (and bias) chunks is issued first, then one butterfly per sum and
// the stores: none of the general walks' head, tail or alignment tests per row, and no weight
// load waiting behind the reduction. Its sums add the same terms in the same order as the
// resident walk's (chunk by chunk, then the butterfly). Chunks a thread holds: x, w (and b)
// together, 48 registers of operands for 16-bit types (src/ops/rows.rs `RowKernel::warp_chunks`
// keeps the host's copy); 0 (off) where the kernel then spills at its 64 registers: Blackwell's
// ptxas (CUDA 13.0), and f32 (RMSNorm on sm_80, LayerNorm on sm_80 / sm_86 / sm_89).
constexpr int kRmsWarpChunks = 6;
constexpr int kLnWarpChunks = 4;
template <class T, class Norm>
constexpr int kWarpChunks = kBlackwell || sizeof(T) != 2 ? 0 : Norm::kBias ? kLnWarpChunks : kRmsWarpChunks;

// A warp walk's sums: one butterfly over the row's threads (row_reduce's, for a row of at most
// a warp).
struct WarpRow {
  template <int kRound>
  __device__ __forceinline__ float sum(float v, float*) const {
    return warp_reduce(v, Sum{}, static_cast<int>(blockDim.x));
  }
};

// Whether the launch's rows take the warp walk: the test is uniform over the launch.
template <class T, int kChunks>
__device__ __forceinline__ bool warp_walk_fits(uint32_t cols, uintptr_t bases) {
  constexpr int kVec = Storage<T>::kVec;
  return blockDim.x <= 32 && cols % kVec == 0 &&
         cols <= static_cast<uint32_t>(blockDim.x * kChunks * kVec) && (bases & 15u) == 0;
}

template <class T, class Norm, int kChunks>
__device__ __forceinline__ void fwd_rows_warp(const T* __restrict__ x, const T* __restrict__ w,
                                              const T* __restrict__ b, T* __restrict__ y, uint32_t rows,
                                              uint32_t cols, float eps) {
  constexpr int kVec = Storage<T>::kVec;
  const RowGroup g = RowGroup::current();
  const int chunks = static_cast<int>(cols) / kVec;
  const bool live = g.row < rows;
  const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols);
  // This thread's k-th chunk, m = k * threads + lane, if the row has it.
  auto has = [&](int k) { return live && k * g.threads + g.lane < chunks; };
  auto col = [&](int k) { return (k * g.threads + g.lane) * kVec; };
  Chunk xc[kChunks], wc[kChunks], bc[Norm::kBias ? kChunks : 1];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    if (has(k)) {
      xc[k] = load_chunk(x + offset + col(k));
      wc[k] = load_chunk(w + col(k));
      if constexpr (Norm::kBias) bc[k] = load_chunk(b + col(k));
    }
  }
  float first = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    if (has(k)) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) first += Norm::first(element<T>(xc[k], i));
    }
  }
  const WarpRow split;
  first = split.template sum<0>(first, nullptr);
  const Norm norm = fwd_norm<Norm>(first, inv_cols(max(static_cast<int>(cols), 1)), eps, nullptr, split, [&](float mean) {
    float cs = 0.0f;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (has(k)) {
#pragma unroll
        for (int i = 0; i < kVec; ++i) {
          const float d = element<T>(xc[k], i) - mean;
          cs += d * d;
        }
      }
    }
    return cs;
  });
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    if (has(k)) {
      float f[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        f[i] = norm(element<T>(xc[k], i), element<T>(wc[k], i), Norm::kBias ? element<T>(bc[k], i) : 0.0f);
      }
      store_chunk(y + offset + col(k), pack<T>(f));
    }
  }
}

// One row per row group (Split: BlockRow), or per cluster (ClusterRow): rows of `cols`, a
// resident tile of kChunks chunks per thread. residual_in / residual_out only with
// kResidual, b only with Norm::kBias.
template <class T, class Norm, bool kResidual, int kChunks, class Split = BlockRow>
__device__ __forceinline__ void norm_fwd(const T* __restrict__ x, const T* residual_in, T* residual_out,
                                         const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
                                         uint32_t rows, uint32_t cols, float eps) {
  constexpr int kWarp = kWarpChunks<T, Norm>;
  if constexpr (!kResidual && std::is_same_v<Split, BlockRow> && kWarp > 0) {
    const uintptr_t bases = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(w) |
                            reinterpret_cast<uintptr_t>(y) | (Norm::kBias ? reinterpret_cast<uintptr_t>(b) : 0u);
    if (warp_walk_fits<T, kWarp>(cols, bases)) {
      fwd_rows_warp<T, Norm, kWarp>(x, w, b, y, rows, cols, eps);
      return;
    }
  }
  __shared__ float scratch[32];
  const Split split = Split::current();
  const RowGroup g = split.group();
  const bool live = g.row < rows;
  const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols);
  FwdRow<T, kResidual> a{x + offset, nullptr, nullptr, w, b, y + offset, eps, scratch};
  if constexpr (kResidual) {
    a.rin = residual_in + offset;
    a.rout = residual_out + offset;
  }
  const auto row = RowPlan<T>::anchored(a.x, static_cast<int>(cols), live, g);
  // Uniform over the row's threads (a row spanning warps is the whole block) and over the
  // blocks that share it: every walk takes the same rounds of sums.
  const bool vec = row.vector_ok(a.w) && row.vector_ok(a.y) &&
                   (!kResidual || (row.vector_ok(a.rin) && row.vector_ok(a.rout))) &&
                   (!Norm::kBias || row.vector_ok(a.b));
  const RowPlan<T> p = vec ? split.part(row) : split.part_elementwise(row);
  if (!vec) {
    fwd_row_elementwise<T, Norm, kResidual>(p, a, split);
  } else if (kShortWalk<kResidual> && p.tiles(kShortChunks) <= 1) {
    fwd_row_vector<T, Norm, kResidual, kShortChunks, true, true>(p, a, split);
  } else if (p.tiles(kChunks) <= 1) {
    fwd_row_vector<T, Norm, kResidual, kChunks, true>(p, a, split);
  } else if constexpr (Split::kStreams) {
    fwd_row_vector<T, Norm, kResidual, kStreamChunks, false>(p, a, split);
  } else {
    __trap();  // a run longer than the launch keeps resident: never planned
  }
}

// The forward over clusters of kFwdClusterCtas CTAs, one row each (row_split.cuh's
// ClusterRow: one round of sums, two for a centered norm). Its body is built for sm_90 (and
// sm_90a), where the host selects it; every other build's entry point traps (no clusters
// before sm_90; Blackwell's cubins are not measured with it).
constexpr int kFwdClusterCtas = 8;

template <class T, class Norm, bool kResidual, int kChunks>
__device__ __forceinline__ void norm_fwd_cluster(const T* __restrict__ x, const T* residual_in, T* residual_out,
                                                 const T* __restrict__ w, const T* __restrict__ b,
                                                 T* __restrict__ y, uint32_t rows, uint32_t cols, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  using Split = ClusterRow<kFwdClusterCtas, Norm::kCentered ? 2 : 1>;
  norm_fwd<T, Norm, kResidual, kChunks, Split>(x, residual_in, residual_out, w, b, y, rows, cols, eps);
#else
  __trap();
#endif
}

// ---------------------------------------------------------------- backward

// A backward's row: its tensors (at the row's first span column), its kAccs column-sum
// accumulators, what its scale needs, and whether to prefetch the next row.
template <class T, int kAccs, class Scratch>
struct BwdRowOf {
  const T* __restrict__ x;
  const T* __restrict__ w;
  const T* __restrict__ dy;
  T* __restrict__ dx;
  ColSums<T, kAccs> acc;
  float eps;
  float inv_n;  // 1 / the whole row's columns (a row may be split over CTAs)
  Scratch* scratch;
  bool prefetch_next;  // the block holds its SM alone and the row group has a next row
};

// Loads of x, dy and w name the read-only (non-coherent) path: the prefetch's asm takes
// addresses in x and dy, after which the compiler no longer infers it.
template <class T>
__device__ __forceinline__ Chunk load_ro_chunk(const T* p) {
  return __ldg(reinterpret_cast<const Chunk*>(p));
}
template <class T>
__device__ __forceinline__ float load_ro(const T* p) {
  return to_float(__ldg(p));
}

// x and dy of this thread's head or tail column (0 where it has none): held across the
// reductions as two registers, not an address.
struct BwdEdge {
  float x;
  float dy;
  template <class T, class Row>
  __device__ __forceinline__ static BwdEdge load(const RowPlan<T>& p, const Row& a) {
    BwdEdge e{0.0f, 0.0f};
    if (p.has_edge()) {
      e.x = load_ro(a.x + p.edge_col);
      e.dy = load_ro(a.dy + p.edge_col);
    }
    return e;
  }
};

// Calls f(x chunk, dy chunk, w chunk, m) for each of this thread's body chunks m, tile by
// tile: x and dy kept in registers (kKeep: one tile), or read again.
template <class T, int kChunks, bool kKeep, class Row, class F>
__device__ __forceinline__ void bwd_each_chunk(const RowPlan<T>& p, const Row& a, const Chunk (&xk)[kChunks],
                                               const Chunk (&dyk)[kChunks], F&& f) {
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk xc[kChunks], dyc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      xc[k] = kKeep ? xk[k] : load_ro_chunk(a.x + p.col(m));
      dyc[k] = kKeep ? dyk[k] : load_ro_chunk(a.dy + p.col(m));
    });
    for_each_chunk<kChunks>(p, t, [&](int k, int m) { f(xc[k], dyc[k], load_ro_chunk(a.w + p.col(m)), m); });
  }
}

// Pass 2's body chunk m: out[i] = f(i, terms) for each element i, where f sets terms[j] to
// the element's term of column sum j; the terms go into the accumulators a plane (4
// columns) at a time, so few are live at once; then dx's chunk is stored.
template <class T, int kAccs, class Scratch, class F>
__device__ __forceinline__ void bwd_store_chunk(const RowPlan<T>& p, const BwdRowOf<T, kAccs, Scratch>& a, int m,
                                                F&& f) {
  constexpr int kVec = Storage<T>::kVec;
  float out[kVec];
#pragma unroll
  for (int q = 0; q < DwAcc<T>::kPlanes; ++q) {
    float terms[kAccs][4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float t[kAccs];
      out[4 * q + e] = f(4 * q + e, t);
#pragma unroll
      for (int j = 0; j < kAccs; ++j) terms[j][e] = t[j];
    }
    a.acc.add(q, m, terms);
  }
  store_chunk(a.dx + p.col(m), pack<T>(out));
}

// x and dy of the row group's next row into L2 (one request per 128-byte line), in flight
// while this row is reduced and written; only where a.prefetch_next (the block holds its SM
// alone and the row group has a next row).
template <class T, int kTileChunks, class Row>
__device__ __forceinline__ void bwd_prefetch_next(const RowPlan<T>& p, const Row& a) {
  if (!a.prefetch_next) return;
  const int64_t next = static_cast<int64_t>(blockDim.y) * p.cols;
  p.template prefetch_row_l2<kTileChunks>(a.x + next);
  p.template prefetch_row_l2<kTileChunks>(a.dy + next);
}

// How a block covers its rows. WholeRows: every column of its row groups (any arch);
// cluster_half.cuh's ClusterHalf: a column half of each row, with the cluster's other CTA.
// kStreams: the build streams rows past a resident tile; kPrefetch: its blocks may hold an
// SM alone, and prefetch their next row.
template <bool kStreamsRows, bool kPrefetchRows>
struct WholeRows {
  static constexpr bool kStreams = kStreamsRows;
  static constexpr bool kPrefetch = kPrefetchRows;

  __device__ __forceinline__ static WholeRows current() { return {}; }
  // The block's range of rows, and its workspace row.
  __device__ __forceinline__ int64_t group() const { return blockIdx.x; }
  __device__ __forceinline__ int first_col(int) const { return 0; }
  __device__ __forceinline__ int cols(int n) const { return n; }
  __device__ __forceinline__ void start() const { __syncthreads(); }
  __device__ __forceinline__ void finish() const {}
  // As row step s sees it (a cluster span's exchange slot).
  __device__ __forceinline__ WholeRows step(int) const { return *this; }
  // The row's sum of a round (of its statistics' reductions) over its row group: groups
  // packed in a block reduce apart (reduce.cuh's row_group_reduce).
  template <class V>
  __device__ __forceinline__ V row_sum(V v, V* scratch, int = 0) const {
    return row_group_reduce(v, Sum{}, V{}, scratch);
  }
};

// A backward's block: rows [span.group() * rows_per_block, ...) in steps of blockDim.y,
// over the span's columns of each row, accumulating kAccs column sums per row group in
// dynamic shared memory (blockDim.y * kAccs * DwAcc::floats(span columns) fp32), then its
// partial rows of the workspace, or the outputs where the launch is one row range
// (colsum.cuh's ColSumOut). For each row step:
//   row(plan, offset of the row's first span column, the row group's accumulators,
//       the span as the step sees it, whether the row group has a next row)
// with the body starting at the span's column 0 (each accumulator slot has one owner).
template <class T, int kAccs, class Span, class Row>
__device__ __forceinline__ void bwd_rows(const Span& span, const ColSumOut<T, kAccs>& sums, uint32_t rows,
                                         uint32_t cols, uint32_t rows_per_block, Row&& row) {
  extern __shared__ float4 acc_smem[];
  const int n = static_cast<int>(cols);
  const int first_col = span.first_col(n);
  const int span_cols = span.cols(n);
  const int acc_floats = DwAcc<T>::floats(span_cols);
  float* acc_all = reinterpret_cast<float*>(acc_smem);
  const int block_threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  // acc_floats is a multiple of kVec, so of 4: zeroed a float4 at a time. Not unrolled: a
  // few iterations a thread, where unrolling computes the trip count with a division.
#pragma unroll 1
  for (int i = tid; i < kAccs * acc_floats * static_cast<int>(blockDim.y) / 4; i += block_threads) {
    acc_smem[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  span.start();

  const int64_t first = span.group() * rows_per_block;
  const int64_t end = min(first + rows_per_block, static_cast<int64_t>(rows));
  const int steps = (rows_per_block + blockDim.y - 1) / blockDim.y;  // uniform over the block
  for (int s = 0; s < steps; ++s) {
    RowGroup g = RowGroup::current();
    g.row = first + static_cast<int64_t>(s) * blockDim.y + threadIdx.y;
    const bool live = g.row < end;
    const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols) + first_col;
    const auto p = RowPlan<T>::with_head(0, span_cols, live, g);
    row(p, offset, acc_all + threadIdx.y * kAccs * acc_floats, span.step(s), g.row + blockDim.y < end);
    // Order this row's accumulator updates before the next row's (a row spanning warps
    // is ordered by its reduction's barriers; one within a warp needs the warp sync).
    if (blockDim.x <= 32) __syncwarp(group_mask(blockDim.x));
  }

  __syncthreads();
  write_column_sums<T, kAccs>(sums, span.group(), n, first_col, span_cols, acc_all, acc_floats);
  span.finish();
}

}  // namespace cubins
