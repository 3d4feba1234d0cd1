// RMSNorm over the last dimension of a row-major [rows, cols] tensor:
//   y = x * rstd * w,   rstd = 1 / sqrt(mean(x^2) + eps)
// with an optional fused residual add (h = round(x + residual) is written as the updated
// residual, and y = rmsnorm(h) of that stored h), and the backward pass:
//   dx = rstd * (dy * w) - x * rstd^3 * mean(dy * w * x)
//   dw = sum over rows of dy * x * rstd
// Storage bf16, fp16 or fp32; all arithmetic in fp32. Row geometry: rows.cuh.
//
// Each row takes one of three walks, chosen per row (uniform over its threads):
//   resident: the body is one tile; it stays in registers from the reduction to the write;
//   streamed: the body is longer than a tile; pass 2 reads it again (from L2);
//   elementwise: some tensor is not 16-byte aligned with the anchor; every column is
//     read element by element (correct for any alignment and length, slower).
//
// Backward: each block walks a contiguous range of rows, and each row group adds its dw
// terms into its own shared-memory row (each column's slot has one owner thread within a
// row, rows ordered by the reduction's barrier or warp sync, so no atomics). The block
// writes the sum of its row groups (in order) to a [blocks, round_up(cols, 4)] fp32
// workspace, and `rmsnorm_dweight_*` sums the workspace over blocks in a fixed order:
// the same launch geometry gives the same bits.
#include "cubins/dtype.cuh"
#include "cubins/reduce.cuh"
#include "cubins/rows.cuh"

namespace {
using namespace cubins;

// Forward: up to 1024 threads per row at <= 64 registers (1024 threads per SM), with
// up to 8 body chunks per thread kept in registers: a resident tile is 1024 x 8 chunks
// (64 Ki bf16 columns). The residual add loads x and the residual of 2 chunks at a time.
// Backward: x and dy stay resident (4 chunks each) and the dw terms go through shared
// memory. On sm_90 it takes up to 1024 threads at 64 registers: a resident tile of
// 1024 x 4 chunks (32 Ki bf16), and two blocks per SM at 14336 columns (448 threads), so
// one block's reduction and writes overlap the other's loads. That budget holds only
// without the streamed walk (its tile loop needs more registers), so a longer row takes
// the elementwise walk there. Elsewhere (sm_80, sm_100, the PTX) it keeps 512 threads at
// up to 128 registers and streams rows past 512 x 4 chunks.
// A block that holds its SM alone (sm_90 at 32 Ki bf16 columns: 1024 threads take the
// whole register file, and 128 KB of dw accumulator) has no loads in flight while it
// reduces and writes a row, so such a block prefetches the row group's next row of x and
// dy into L2 once its own loads have landed, before the reduction: DRAM keeps working
// through the reduction and the writes. (Issued as the row starts, the prefetches compete
// with the row's own loads: 64% of the copy ceiling at 4096 x 32768 on the H200, against
// 78% after the loads and 71% without.)
// Where several blocks share an SM they already overlap each other, and the prefetch's
// instructions cost more than it hides (measured on the H200: 87-89% of the copy
// ceiling without it, 80-86% with it at 4096-14336 columns).
constexpr int kMaxThreads = 1024;
constexpr int kBwdMaxThreads = 1024;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
constexpr int kBwdBoundThreads = 512;
constexpr bool kBwdStreams = true;
#else
constexpr int kBwdBoundThreads = kBwdMaxThreads;
constexpr bool kBwdStreams = false;
#endif
constexpr int kFwdChunks = 8;
constexpr int kResidualChunks = 8;
constexpr int kResidualGroup = 2;
constexpr int kBwdChunks = 4;
// Chunks per thread per tile on the streamed walk (fewer loads in flight, no residency).
constexpr int kStreamChunks = 2;
// Columns per thread per step on the elementwise walk.
constexpr int kElementUnroll = 4;

// 1 / cols by the hardware reciprocal (within 1 ulp): an IEEE division is a called
// subroutine, and the call would spill the registers that hold the resident row.
__device__ __forceinline__ float inv_cols(int n) { return __fdividef(1.0f, static_cast<float>(n)); }

// ---------------------------------------------------------------- forward

template <class T, bool kResidual>
struct FwdRow {
  const T* __restrict__ x;
  const T* rin;  // may alias rout (in-place residual): each column is read, then written, by one thread
  T* rout;
  const T* __restrict__ w;
  T* __restrict__ y;
  float eps;
  float* scratch;
};

// Pass 1 over body chunks of tiles of kChunks: load (add and store the residual), sum of
// squares. kKeep: one tile, whose chunks stay in h for pass 2.
template <class T, bool kResidual, int kChunks, bool kKeep>
__device__ __forceinline__ float fwd_pass1(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, Chunk (&h)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  // The residual add has two loads per chunk: its chunks go in groups of kResidualGroup,
  // so the group in flight and the resident chunks before it fit the registers together.
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
        for (int i = 0; i < kVec; ++i) {
          const float v = element<T>(xc[k], i);  // the stored (rounded) residual
          ss += v * v;
        }
        if constexpr (kKeep) h[k] = xc[k];
      });
    };
    static_for<0, kChunks, kGroup>(group);
  }
  return ss;
}

// Pass 2: y = h * rstd * w. Without kKeep the chunks are read again (the residual from
// this thread's own writes, through coherent loads).
template <class T, bool kResidual, int kChunks, bool kKeep>
__device__ __forceinline__ void fwd_pass2(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, float rstd,
                                          const Chunk (&h)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk hc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      hc[k] = kKeep ? h[k] : kResidual ? load_chunk<T>(a.rout + p.col(m)) : load_chunk(a.x + p.col(m));
    });
    // The weight row is shared by every row (cache-resident); loaded chunk by chunk so it
    // does not double the registers the resident row holds.
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      const Chunk wc = load_chunk(a.w + p.col(m));
      float f[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) f[i] = element<T>(hc[k], i) * rstd * element<T>(wc, i);
      store_chunk(a.y + p.col(m), pack<T>(f));
    });
  }
}

// Resident (kKeep) or streamed walk: body chunks plus this thread's head or tail column.
template <class T, bool kResidual, int kChunks, bool kKeep>
__device__ __forceinline__ void fwd_row_vector(const RowPlan<T>& p, const FwdRow<T, kResidual>& a) {
  Chunk h[kChunks];
  float ss = fwd_pass1<T, kResidual, kChunks, kKeep>(p, a, h);
  if (p.has_edge()) {
    float he = to_float(a.x[p.edge_col]);
    if constexpr (kResidual) {
      he = round_to<T>(he + to_float(a.rin[p.edge_col]));
      a.rout[p.edge_col] = from_float<T>(he);
    }
    ss += he * he;
  }
  ss = row_reduce(ss, Sum{}, 0.0f, a.scratch);
  const float rstd = rsqrtf(ss * inv_cols(max(p.cols, 1)) + a.eps);
  fwd_pass2<T, kResidual, kChunks, kKeep>(p, a, rstd, h);
  if (p.has_edge()) {  // read again (the residual: this thread's own write), not held across the reduction
    const float he = to_float(kResidual ? a.rout[p.edge_col] : a.x[p.edge_col]);
    a.y[p.edge_col] = from_float<T>(he * rstd * to_float(a.w[p.edge_col]));
  }
}

template <class T, bool kResidual>
__device__ __forceinline__ void fwd_row_elementwise(const RowPlan<T>& p, const FwdRow<T, kResidual>& a) {
  float ss = 0.0f;
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    float v = to_float(a.x[c]);
    if constexpr (kResidual) {
      v = round_to<T>(v + to_float(a.rin[c]));
      a.rout[c] = from_float<T>(v);
    }
    ss += v * v;
  }
  ss = row_reduce(ss, Sum{}, 0.0f, a.scratch);
  const float rstd = rsqrtf(ss * inv_cols(max(p.cols, 1)) + a.eps);
#pragma unroll kElementUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float v = kResidual ? to_float(a.rout[c]) : to_float(a.x[c]);
    a.y[c] = from_float<T>(v * rstd * to_float(a.w[c]));
  }
}

template <class T, bool kResidual>
__device__ __forceinline__ void rmsnorm_fwd(const T* __restrict__ x, const T* residual_in, T* residual_out,
                                            const T* __restrict__ w, T* __restrict__ y, uint32_t rows,
                                            uint32_t cols, float eps) {
  constexpr int kChunks = kResidual ? kResidualChunks : kFwdChunks;
  __shared__ float scratch[32];
  const RowGroup g = RowGroup::current();
  const bool live = g.row < rows;
  const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols);
  FwdRow<T, kResidual> a{x + offset, nullptr, nullptr, w, y + offset, eps, scratch};
  if constexpr (kResidual) {
    a.rin = residual_in + offset;
    a.rout = residual_out + offset;
  }
  const auto p = RowPlan<T>::anchored(a.x, static_cast<int>(cols), live, g);
  // Uniform over the row's threads (a row spanning warps is the whole block).
  const bool vec = p.vector_ok(a.w) && p.vector_ok(a.y) && (!kResidual || (p.vector_ok(a.rin) && p.vector_ok(a.rout)));
  if (!vec) {
    fwd_row_elementwise<T, kResidual>(p, a);
  } else if (p.tiles(kChunks) <= 1) {
    fwd_row_vector<T, kResidual, kChunks, true>(p, a);
  } else {
    fwd_row_vector<T, kResidual, kStreamChunks, false>(p, a);
  }
}

// ---------------------------------------------------------------- backward

// The dw accumulator of one row group in shared memory: column c = 4 * (planes * m + q) + e
// of body chunk m lives in plane q (kVec / 4 planes of float4, so a warp's 16-byte
// accesses to one plane are lane-consecutive: no bank conflicts), the tail after them.
// Body chunks start at column 0 in every row, so each slot has one owner thread.
template <class T>
struct DwAcc {
  static constexpr int kVec = Storage<T>::kVec;
  static constexpr int kPlanes = kVec / 4;
  float4* body;  // [kPlanes][chunks]
  float* tail;   // [kVec]
  int chunks;

  __host__ __device__ static constexpr int floats(int cols) { return (cols / kVec + 1) * kVec; }
  __device__ __forceinline__ static DwAcc at(float* base, int cols) {
    DwAcc a;
    a.chunks = cols / kVec;
    a.body = reinterpret_cast<float4*>(base);
    a.tail = base + a.chunks * kVec;
    return a;
  }
  __device__ __forceinline__ float4& plane(int q, int m) const { return body[q * chunks + m]; }
  __device__ __forceinline__ float& at_col(int c) const {
    if (c >= chunks * kVec) return tail[c - chunks * kVec];
    return reinterpret_cast<float*>(&plane((c % kVec) / 4, c / kVec))[c % 4];
  }
};

template <class T>
struct BwdRow {
  const T* __restrict__ x;
  const T* __restrict__ w;
  const T* __restrict__ dy;
  T* __restrict__ dx;
  DwAcc<T> acc;
  float eps;
  float2* scratch;
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

// x and dy of the row group's next row into L2 (one request per 128-byte line), in flight
// while this row is reduced and written.
template <class T, int kTileChunks>
__device__ __forceinline__ void bwd_prefetch_next(const RowPlan<T>& p, const BwdRow<T>& a) {
  if (!a.prefetch_next) return;
  const int64_t next = static_cast<int64_t>(blockDim.y) * p.cols;
  p.template prefetch_row_l2<kTileChunks>(a.x + next);
  p.template prefetch_row_l2<kTileChunks>(a.dy + next);
}

// Pass 1: (sum x^2, sum dy * w * x) over body chunks; kKeep as in the forward.
template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ float2 bwd_pass1(const RowPlan<T>& p, const BwdRow<T>& a, Chunk (&xk)[kChunks],
                                            Chunk (&dyk)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  float2 sums = make_float2(0.0f, 0.0f);
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk xc[kChunks], dyc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      xc[k] = load_ro_chunk(a.x + p.col(m));
      dyc[k] = load_ro_chunk(a.dy + p.col(m));
    });
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      const Chunk wc = load_ro_chunk(a.w + p.col(m));
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const float xv = element<T>(xc[k], i);
        sums.x += xv * xv;
        sums.y += element<T>(dyc[k], i) * element<T>(wc, i) * xv;
      }
      if constexpr (kKeep) {
        xk[k] = xc[k];
        dyk[k] = dyc[k];
      }
    });
  }
  return sums;
}

// Pass 2: dx, and dy * x * rstd into the accumulator planes.
template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_pass2(const RowPlan<T>& p, const BwdRow<T>& a, float rstd, float coef,
                                          const Chunk (&xk)[kChunks], const Chunk (&dyk)[kChunks]) {
  constexpr int kVec = Storage<T>::kVec;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk xc[kChunks], dyc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      xc[k] = kKeep ? xk[k] : load_ro_chunk(a.x + p.col(m));
      dyc[k] = kKeep ? dyk[k] : load_ro_chunk(a.dy + p.col(m));
    });
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      const Chunk wc = load_ro_chunk(a.w + p.col(m));
      float out[kVec];
#pragma unroll
      for (int q = 0; q < DwAcc<T>::kPlanes; ++q) {
        float4& slot = a.acc.plane(q, m);
        float4 s = slot;
        float* sv = &s.x;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = 4 * q + e;
          const float xv = element<T>(xc[k], i), dv = element<T>(dyc[k], i);
          sv[e] += dv * xv * rstd;
          out[i] = rstd * dv * element<T>(wc, i) - coef * xv;
        }
        slot = s;
      }
      store_chunk(a.dx + p.col(m), pack<T>(out));
    });
  }
}

template <class T, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_row_vector(const RowPlan<T>& p, const BwdRow<T>& a) {
  Chunk xk[kChunks], dyk[kChunks];
  float2 sums = bwd_pass1<T, kChunks, kKeep>(p, a, xk, dyk);
  float ex = 0.0f, edy = 0.0f;  // held across the reduction: two registers, not an address
  if (p.has_edge()) {
    ex = load_ro(a.x + p.edge_col);
    edy = load_ro(a.dy + p.edge_col);
    sums.x += ex * ex;
    sums.y += edy * load_ro(a.w + p.edge_col) * ex;
  }
  // Only the 1024-thread build (sm_90) has blocks that hold an SM alone, and only resident
  // rows: it has no streamed walk.
  if constexpr (kKeep && kBwdBoundThreads == kBwdMaxThreads) bwd_prefetch_next<T, kChunks>(p, a);
  sums = row_reduce(sums, Sum{}, make_float2(0.0f, 0.0f), a.scratch);
  const float inv_n = inv_cols(max(p.cols, 1));
  const float rstd = rsqrtf(sums.x * inv_n + a.eps);
  const float coef = sums.y * rstd * rstd * rstd * inv_n;
  bwd_pass2<T, kChunks, kKeep>(p, a, rstd, coef, xk, dyk);
  if (p.has_edge()) {
    a.acc.at_col(p.edge_col) += edy * ex * rstd;
    a.dx[p.edge_col] = from_float<T>(rstd * edy * load_ro(a.w + p.edge_col) - coef * ex);
  }
}

template <class T>
__device__ __forceinline__ void bwd_row_elementwise(const RowPlan<T>& p, const BwdRow<T>& a) {
  // fp32 unrolls less: the 64-register budget of the sm_90 build holds without spills.
  constexpr int kUnroll = sizeof(T) == 4 ? 1 : kElementUnroll;
  float2 sums = make_float2(0.0f, 0.0f);
#pragma unroll kUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float xv = load_ro(a.x + c);
    sums.x += xv * xv;
    sums.y += load_ro(a.dy + c) * load_ro(a.w + c) * xv;
  }
  sums = row_reduce(sums, Sum{}, make_float2(0.0f, 0.0f), a.scratch);
  const float inv_n = inv_cols(max(p.cols, 1));
  const float rstd = rsqrtf(sums.x * inv_n + a.eps);
  const float coef = sums.y * rstd * rstd * rstd * inv_n;
#pragma unroll kUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float xv = load_ro(a.x + c), dv = load_ro(a.dy + c);
    a.acc.at_col(c) += dv * xv * rstd;
    a.dx[c] = from_float<T>(rstd * dv * load_ro(a.w + c) - coef * xv);
  }
}

// Rows [blockIdx.x * rows_per_block, ...) in steps of blockDim.y. Dynamic shared memory:
// blockDim.y * DwAcc::floats(cols) fp32. partial: [gridDim.x, round_up(cols, 4)] fp32.
template <class T>
__device__ __forceinline__ void rmsnorm_bwd(const T* __restrict__ x, const T* __restrict__ w,
                                            const T* __restrict__ dy, T* __restrict__ dx,
                                            float* __restrict__ partial, uint32_t rows, uint32_t cols,
                                            uint32_t rows_per_block, float eps) {
  extern __shared__ float4 acc_smem[];
  __shared__ float2 scratch[32];
  const int n = static_cast<int>(cols);
  const int acc_floats = DwAcc<T>::floats(n);
  float* acc_all = reinterpret_cast<float*>(acc_smem);
  const int block_threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int i = tid; i < acc_floats * static_cast<int>(blockDim.y); i += block_threads) acc_all[i] = 0.0f;
  __syncthreads();

  const int64_t first = static_cast<int64_t>(blockIdx.x) * rows_per_block;
  const int64_t end = min(first + rows_per_block, static_cast<int64_t>(rows));
  const int steps = (rows_per_block + blockDim.y - 1) / blockDim.y;  // uniform over the block
  const bool alone_on_sm = block_threads == kBwdMaxThreads;  // 64 registers x 1024 = the register file
  for (int s = 0; s < steps; ++s) {
    RowGroup g = RowGroup::current();
    g.row = first + static_cast<int64_t>(s) * blockDim.y + threadIdx.y;
    const bool live = g.row < end;
    const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols);
    const BwdRow<T> a{x + offset, w, dy + offset, dx + offset,
                      DwAcc<T>::at(acc_all + threadIdx.y * acc_floats, n), eps, scratch,
                      alone_on_sm && g.row + blockDim.y < end};
    const auto p = RowPlan<T>::with_head(0, n, live, g);
    const bool vec = p.vector_ok(a.x) && p.vector_ok(a.dy) && p.vector_ok(a.dx) && p.vector_ok(a.w);
    if (vec && p.tiles(kBwdChunks) <= 1) {
      bwd_row_vector<T, kBwdChunks, true>(p, a);
    } else if (vec && kBwdStreams) {
      bwd_row_vector<T, kStreamChunks, false>(p, a);
    } else {
      bwd_row_elementwise<T>(p, a);
    }
    // Order this row's accumulator updates before the next row's (a row spanning warps
    // is ordered by its reduction's barriers; one within a warp needs the warp sync).
    if (blockDim.x <= 32) __syncwarp(group_mask(blockDim.x));
  }

  // The block's partial row: the row groups' accumulators summed in row-group order.
  __syncthreads();
  const int quads = (n + 3) / 4;
  float4* out = reinterpret_cast<float4*>(partial) + static_cast<int64_t>(blockIdx.x) * quads;
  for (int u = tid; u < quads; u += block_threads) {
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int c = 4 * u + e;
      v[e] = 0.0f;
      if (c < n) {
        for (int yy = 0; yy < static_cast<int>(blockDim.y); ++yy) {
          v[e] += DwAcc<T>::at(acc_all + yy * acc_floats, n).at_col(c);
        }
      }
    }
    out[u] = make_float4(v[0], v[1], v[2], v[3]);
  }
}

// dw[c] = sum over b of partial[b][c]: warp w adds blocks w, w + kDwWarps, ... in
// ascending order, then warp 0 adds the warps' sums in warp order. Each lane owns 4
// consecutive columns of the [blocks, round_up(cols, 4)] workspace; 128 per block.
constexpr int kDwWarps = 16;

template <class T>
__device__ __forceinline__ void rmsnorm_dweight(const float* __restrict__ partial, T* __restrict__ dw,
                                                uint32_t blocks, uint32_t cols) {
  __shared__ float4 sums[kDwWarps][32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int n = static_cast<int>(cols);
  const int quads = (n + 3) / 4;
  const int u = blockIdx.x * 32 + lane;
  const float4* column = reinterpret_cast<const float4*>(partial) + u;
  auto add = [](float4& s, const float4& v) {
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
  };
  float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (u < quads) {
    int b = warp;
    for (; b + 3 * kDwWarps < static_cast<int>(blocks); b += 4 * kDwWarps) {
      float4 v[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) v[r] = column[static_cast<int64_t>(b + r * kDwWarps) * quads];  // in flight together
#pragma unroll
      for (int r = 0; r < 4; ++r) add(s, v[r]);
    }
    for (; b < static_cast<int>(blocks); b += kDwWarps) add(s, column[static_cast<int64_t>(b) * quads]);
  }
  sums[warp][lane] = s;
  __syncthreads();
  if (warp == 0 && u < quads) {
    float4 t = sums[0][lane];
#pragma unroll
    for (int r = 1; r < kDwWarps; ++r) add(t, sums[r][lane]);
    const float v[4] = {t.x, t.y, t.z, t.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (4 * u + e < n) dw[4 * u + e] = from_float<T>(v[e]);
    }
  }
}

}  // namespace

#define CUBINS_RMSNORM_ENTRY_POINTS(T, SUFFIX)                                                                      \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                         \
      rmsnorm_fwd_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, uint32_t rows,      \
                           uint32_t cols, float eps) {                                                              \
    rmsnorm_fwd<T, false>(x, nullptr, nullptr, w, y, rows, cols, eps);                                              \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                         \
      rmsnorm_fwd_residual_##SUFFIX(const T* __restrict__ x, const T* residual_in, T* residual_out,                 \
                                    const T* __restrict__ w, T* __restrict__ y, uint32_t rows, uint32_t cols,       \
                                    float eps) {                                                                    \
    rmsnorm_fwd<T, true>(x, residual_in, residual_out, w, y, rows, cols, eps);                                      \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kBwdBoundThreads)                                                      \
      rmsnorm_bwd_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,              \
                           T* __restrict__ dx, float* __restrict__ partial, uint32_t rows, uint32_t cols,           \
                           uint32_t rows_per_block, float eps) {                                                    \
    rmsnorm_bwd<T>(x, w, dy, dx, partial, rows, cols, rows_per_block, eps);                                         \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kDwWarps * 32)                                                       \
      rmsnorm_dweight_##SUFFIX(const float* __restrict__ partial, T* __restrict__ dw, uint32_t blocks,              \
                               uint32_t cols) {                                                                     \
    rmsnorm_dweight<T>(partial, dw, blocks, cols);                                                                  \
  }

CUBINS_RMSNORM_ENTRY_POINTS(__nv_bfloat16, bf16)
CUBINS_RMSNORM_ENTRY_POINTS(__half, f16)
CUBINS_RMSNORM_ENTRY_POINTS(float, f32)
