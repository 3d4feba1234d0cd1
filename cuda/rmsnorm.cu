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
// `rmsnorm_bwd_cluster_*` (sm_90) walks the same rows with the two CTAs of a cluster
// sharing each row, one column half each (ClusterHalf below); each CTA writes its half of
// the cluster's workspace row, so `rmsnorm_dweight_*` reads the same layout.
#include "cubins/arch.cuh"
#include "cubins/cluster.cuh"
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
// the elementwise walk there. Elsewhere (sm_80, sm_86, sm_89, the PTX) it keeps 512 threads
// at up to 128 registers and streams rows past 512 x 4 chunks. On Blackwell (sm_100, sm_120)
// CUDA 13.0's ptxas needs more registers for the same walks (unbounded: 171-187 against
// 98 on sm_80; at 512 threads it spills 128-144 bytes), so that build takes 384 threads at
// up to 168 registers (ptxas: 168, no spills) and streams rows past 384 x 4 chunks; the
// host reads the bound from the loaded kernel. Its residual forward loads one chunk of
// x and the residual at a time (at 2, that ptxas spills 8-16 bytes at 64 registers).
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
// The cluster variant gives such rows two CTAs of half the threads (512 at 32 Ki bf16, the
// same 64 registers, 64 KB of dw accumulator each), so two CTAs share each SM and
// overlap each other as narrower rows do; it does not prefetch.
constexpr int kMaxThreads = 1024;
constexpr int kBwdMaxThreads = 1024;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
constexpr int kBwdBoundThreads = kBlackwell ? 384 : 512;
constexpr bool kBwdStreams = true;
#else
constexpr int kBwdBoundThreads = kBwdMaxThreads;
constexpr bool kBwdStreams = false;
#endif
constexpr int kFwdChunks = 8;
constexpr int kResidualChunks = 8;
constexpr int kResidualGroup = kBlackwell ? 1 : 2;
constexpr int kBwdChunks = 4;
// The cluster variant: CTAs per cluster (one column half each), threads per CTA, and the
// CTAs per SM its 64-register budget is built for.
constexpr int kClusterCtas = 2;
constexpr int kClusterThreads = 512;
constexpr int kClusterCtasPerSm = 2;
// Chunks per thread per tile on the streamed walk (fewer loads in flight, no residency).
constexpr int kStreamChunks = 2;
// Body chunks per thread of a short row: at most this many, the forward loads the weight
// chunks with the row's, before the reduction (the host spreads rows this thin when they
// are few: SPREAD_CHUNKS in src/ops/rows.rs).
constexpr int kShortChunks = 2;
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
// this thread's own writes, through coherent loads). kWeightAhead: the weight chunks are
// already in wa (loaded with the row's, one tile).
template <class T, bool kResidual, int kChunks, bool kKeep, bool kWeightAhead>
__device__ __forceinline__ void fwd_pass2(const RowPlan<T>& p, const FwdRow<T, kResidual>& a, float rstd,
                                          const Chunk (&h)[kChunks], const Chunk (&wa)[kWeightAhead ? kChunks : 1]) {
  constexpr int kVec = Storage<T>::kVec;
  for (int t = 0; t < (kKeep ? 1 : p.tiles(kChunks)); ++t) {
    Chunk hc[kChunks];
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      hc[k] = kKeep ? h[k] : kResidual ? load_chunk<T>(a.rout + p.col(m)) : load_chunk(a.x + p.col(m));
    });
    // The weight row is shared by every row (cache-resident); loaded chunk by chunk so it
    // does not double the registers the resident row holds. Each of those loads waits
    // behind the previous chunk's store, a serial chain that many rows in flight hide and a
    // few rows do not: short rows load it ahead (kWeightAhead).
    for_each_chunk<kChunks>(p, t, [&](int k, int m) {
      const Chunk wc = kWeightAhead ? wa[kWeightAhead ? k : 0] : load_chunk(a.w + p.col(m));
      float f[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) f[i] = element<T>(hc[k], i) * rstd * element<T>(wc, i);
      store_chunk(a.y + p.col(m), pack<T>(f));
    });
  }
}

// Resident (kKeep) or streamed walk: body chunks plus this thread's head or tail column.
// kWeightAhead (resident rows of at most kShortChunks a thread): the weight chunks are
// loaded before the row's, so every load of the row is in flight at once.
template <class T, bool kResidual, int kChunks, bool kKeep, bool kWeightAhead = false>
__device__ __forceinline__ void fwd_row_vector(const RowPlan<T>& p, const FwdRow<T, kResidual>& a) {
  static_assert(kKeep || !kWeightAhead, "weights ahead only for a resident row");
  Chunk h[kChunks];
  Chunk wa[kWeightAhead ? kChunks : 1];
  if constexpr (kWeightAhead) for_each_chunk<kChunks>(p, 0, [&](int k, int m) { wa[k] = load_chunk(a.w + p.col(m)); });
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
  fwd_pass2<T, kResidual, kChunks, kKeep, kWeightAhead>(p, a, rstd, h, wa);
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
  } else if (p.tiles(kShortChunks) <= 1) {
    fwd_row_vector<T, kResidual, kShortChunks, true, true>(p, a);
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
  float inv_n;  // 1 / the whole row's columns (a row may be split over CTAs)
  float2* scratch;
  bool prefetch_next;  // the block holds its SM alone and the row group has a next row
};

// How a block covers its rows. WholeRow: every column of its row groups (any arch).
template <class T>
struct WholeRow {
  static constexpr bool kStreams = kBwdStreams;
  // Only the 1024-thread build (sm_90) has blocks that hold an SM alone.
  static constexpr bool kPrefetch = kBwdBoundThreads == kBwdMaxThreads;

  __device__ __forceinline__ static WholeRow current() { return {}; }
  // The block's range of rows, and its workspace row.
  __device__ __forceinline__ int64_t group() const { return blockIdx.x; }
  __device__ __forceinline__ int first_col(int) const { return 0; }
  __device__ __forceinline__ int cols(int n) const { return n; }
  __device__ __forceinline__ void start() const { __syncthreads(); }
  __device__ __forceinline__ void finish() const {}
  // As row step s sees it (ClusterHalf's exchange slot).
  __device__ __forceinline__ WholeRow step(int) const { return *this; }
  // The row's sums from the block's.
  __device__ __forceinline__ float2 combine(float2 sums) const { return sums; }
};

#if CUBINS_HAS_CLUSTERS
// ClusterHalf (clusters: sm_90+): the two CTAs of a cluster share each row of the cluster's range, one
// row group per CTA (blockDim.y == 1). Rank 0 takes the first ceil(chunks / 2) whole 16-byte
// chunks, rank 1 the rest and the tail (both halves start on a 16-byte boundary, so both
// take the same walk). After its block reduction each CTA stores its (sum x^2, sum dy w x)
// into the peer's shared memory with `st.async`, counted on the peer's mbarrier, and waits
// on its own for the peer's; each adds rank 0's sums + rank 1's, so both halves scale with
// the same rstd and coef bits. (The cluster barrier would also order the exchange, but it
// costs a GPU-scope memory barrier and an L1 invalidation per row.)
template <class T>
struct ClusterHalf {
  static constexpr int kVec = Storage<T>::kVec;
  // The host gives it rows whose halves are resident; unaligned rows go element by element.
  static constexpr bool kStreams = false;
  // Two CTAs share each SM: each one's loads overlap the other's reduction.
  static constexpr bool kPrefetch = false;
  int rank;
  // Row step s uses exchange slot s % 2 and its mbarrier's phase s / 2: a CTA that runs
  // ahead stores row s + 1's sums while its peer may still read row s's, and it cannot
  // store row s + 2's before it has the peer's row s + 1 sums, which the peer sends after
  // reading row s's.
  float2* slot;        // where the peer's sums land (this CTA's shared memory)
  uint64_t* landed;    // counts them
  uint32_t peer_slot;  // the same pair in the peer CTA (shared::cluster addresses)
  uint32_t peer_landed;
  uint32_t parity;

  __device__ __forceinline__ static ClusterHalf current() {
    __shared__ float2 slots[2];
    __shared__ uint64_t bars[2];
    const int rank = cluster_rank();
    if (threadIdx.x == 0) {
      mbarrier_init_cluster_visible(&bars[0]);
      mbarrier_init_cluster_visible(&bars[1]);
    }
    return ClusterHalf{rank, slots, bars, cluster_map(slots, rank ^ 1), cluster_map(bars, rank ^ 1), 0};
  }
  __device__ __forceinline__ int64_t group() const { return cluster_index_x(); }
  __device__ __forceinline__ static int half_cols(int n) { return (n / kVec + 1) / 2 * kVec; }
  __device__ __forceinline__ int first_col(int n) const { return rank == 0 ? 0 : half_cols(n); }
  __device__ __forceinline__ int cols(int n) const { return rank == 0 ? half_cols(n) : n - half_cols(n); }
  // Orders the accumulators' zeroing and the mbarriers' initialization before any use, and
  // the peer has started before its shared memory is written.
  __device__ __forceinline__ void start() const { cluster_sync(); }
  // No CTA leaves while its peer's stores may still be landing in it.
  __device__ __forceinline__ void finish() const { cluster_sync(); }
  __device__ __forceinline__ ClusterHalf step(int s) const {
    const int k = s & 1;
    const uint32_t offset = static_cast<uint32_t>(k * sizeof(float2));
    const uint32_t bar_offset = static_cast<uint32_t>(k * sizeof(uint64_t));
    return ClusterHalf{rank,        slot + k, landed + k, peer_slot + offset, peer_landed + bar_offset,
                       static_cast<uint32_t>((s >> 1) & 1)};
  }
  __device__ __forceinline__ float2 combine(float2 mine) const {
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_bytes(landed, sizeof(float2));
      cluster_store_counted(peer_slot, mine, peer_landed);
    }
    mbarrier_wait_parity(landed, parity);
    const float2 theirs = shared_load(slot);
    const float2 lo = rank == 0 ? mine : theirs;
    const float2 hi = rank == 0 ? theirs : mine;
    return make_float2(lo.x + hi.x, lo.y + hi.y);
  }
};
#endif

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

// rstd and coef = sum(dy w x) rstd^3 / n of the row whose sums this thread holds a share of.
struct RowScale {
  float rstd;
  float coef;
};

template <class T, class Span>
__device__ __forceinline__ RowScale bwd_scale(float2 sums, const BwdRow<T>& a, const Span& span) {
  sums = span.combine(row_reduce(sums, Sum{}, make_float2(0.0f, 0.0f), a.scratch));
  const float rstd = rsqrtf(sums.x * a.inv_n + a.eps);
  return RowScale{rstd, sums.y * rstd * rstd * rstd * a.inv_n};
}

template <class T, class Span, int kChunks, bool kKeep>
__device__ __forceinline__ void bwd_row_vector(const RowPlan<T>& p, const BwdRow<T>& a, const Span& span) {
  Chunk xk[kChunks], dyk[kChunks];
  float2 sums = bwd_pass1<T, kChunks, kKeep>(p, a, xk, dyk);
  float ex = 0.0f, edy = 0.0f;  // held across the reduction: two registers, not an address
  if (p.has_edge()) {
    ex = load_ro(a.x + p.edge_col);
    edy = load_ro(a.dy + p.edge_col);
    sums.x += ex * ex;
    sums.y += edy * load_ro(a.w + p.edge_col) * ex;
  }
  // Only resident rows: the build whose blocks can hold an SM alone has no streamed walk.
  if constexpr (kKeep && Span::kPrefetch) bwd_prefetch_next<T, kChunks>(p, a);
  const RowScale k = bwd_scale(sums, a, span);
  bwd_pass2<T, kChunks, kKeep>(p, a, k.rstd, k.coef, xk, dyk);
  if (p.has_edge()) {
    a.acc.at_col(p.edge_col) += edy * ex * k.rstd;
    a.dx[p.edge_col] = from_float<T>(k.rstd * edy * load_ro(a.w + p.edge_col) - k.coef * ex);
  }
}

template <class T, class Span>
__device__ __forceinline__ void bwd_row_elementwise(const RowPlan<T>& p, const BwdRow<T>& a, const Span& span) {
  // fp32 unrolls less: the 64-register budget of the sm_90 build holds without spills.
  constexpr int kUnroll = sizeof(T) == 4 ? 1 : kElementUnroll;
  float2 sums = make_float2(0.0f, 0.0f);
#pragma unroll kUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float xv = load_ro(a.x + c);
    sums.x += xv * xv;
    sums.y += load_ro(a.dy + c) * load_ro(a.w + c) * xv;
  }
  const RowScale k = bwd_scale(sums, a, span);
#pragma unroll kUnroll
  for (int c = p.lane; c < p.cols; c += p.threads) {
    const float xv = load_ro(a.x + c), dv = load_ro(a.dy + c);
    a.acc.at_col(c) += dv * xv * k.rstd;
    a.dx[c] = from_float<T>(k.rstd * dv * load_ro(a.w + c) - k.coef * xv);
  }
}

// The block's share of workspace row `group`: columns [first_col, first_col + span_cols)
// of a [groups, round_up(n, 4)] fp32 workspace (first_col a multiple of 4), each the sum
// of the block's row groups' accumulators in row-group order.
template <class T>
__device__ __forceinline__ void write_partial_row(float* __restrict__ partial, int64_t group, int n, int first_col,
                                                  int span_cols, float* acc_all, int acc_floats) {
  const int block_threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int quads = (span_cols + 3) / 4;
  float4* out = reinterpret_cast<float4*>(partial) + group * ((n + 3) / 4) + first_col / 4;
  for (int u = tid; u < quads; u += block_threads) {
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int c = 4 * u + e;
      v[e] = 0.0f;
      if (c < span_cols) {
        for (int yy = 0; yy < static_cast<int>(blockDim.y); ++yy) {
          v[e] += DwAcc<T>::at(acc_all + yy * acc_floats, span_cols).at_col(c);
        }
      }
    }
    out[u] = make_float4(v[0], v[1], v[2], v[3]);
  }
}

// Rows [group * rows_per_block, ...) in steps of blockDim.y, over the span's columns of
// each row (Span: WholeRow or ClusterHalf). Dynamic shared memory: blockDim.y *
// DwAcc::floats(span columns) fp32. partial: [groups, round_up(cols, 4)] fp32.
template <class T, class Span>
__device__ __forceinline__ void rmsnorm_bwd(const T* __restrict__ x, const T* __restrict__ w,
                                            const T* __restrict__ dy, T* __restrict__ dx,
                                            float* __restrict__ partial, uint32_t rows, uint32_t cols,
                                            uint32_t rows_per_block, float eps) {
  extern __shared__ float4 acc_smem[];
  __shared__ float2 scratch[32];
  const Span span = Span::current();
  const int n = static_cast<int>(cols);
  const int first_col = span.first_col(n);
  const int span_cols = span.cols(n);
  const int acc_floats = DwAcc<T>::floats(span_cols);
  float* acc_all = reinterpret_cast<float*>(acc_smem);
  const int block_threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int i = tid; i < acc_floats * static_cast<int>(blockDim.y); i += block_threads) acc_all[i] = 0.0f;
  span.start();

  const int64_t first = span.group() * rows_per_block;
  const int64_t end = min(first + rows_per_block, static_cast<int64_t>(rows));
  const int steps = (rows_per_block + blockDim.y - 1) / blockDim.y;  // uniform over the block
  const bool alone_on_sm = block_threads == kBwdMaxThreads;  // 64 registers x 1024 = the register file
  const float inv_n = inv_cols(max(n, 1));
  for (int s = 0; s < steps; ++s) {
    RowGroup g = RowGroup::current();
    g.row = first + static_cast<int64_t>(s) * blockDim.y + threadIdx.y;
    const bool live = g.row < end;
    const int64_t offset = (live ? g.row : 0) * static_cast<int64_t>(cols) + first_col;
    const BwdRow<T> a{x + offset,
                      w + first_col,
                      dy + offset,
                      dx + offset,
                      DwAcc<T>::at(acc_all + threadIdx.y * acc_floats, span_cols),
                      eps,
                      inv_n,
                      scratch,
                      alone_on_sm && g.row + blockDim.y < end};
    const auto p = RowPlan<T>::with_head(0, span_cols, live, g);
    const Span row_span = span.step(s);
    const bool vec = p.vector_ok(a.x) && p.vector_ok(a.dy) && p.vector_ok(a.dx) && p.vector_ok(a.w);
    if (vec && p.tiles(kBwdChunks) <= 1) {
      bwd_row_vector<T, Span, kBwdChunks, true>(p, a, row_span);
    } else if (vec && Span::kStreams) {
      bwd_row_vector<T, Span, kStreamChunks, false>(p, a, row_span);
    } else {
      bwd_row_elementwise<T>(p, a, row_span);
    }
    // Order this row's accumulator updates before the next row's (a row spanning warps
    // is ordered by its reduction's barriers; one within a warp needs the warp sync).
    if (blockDim.x <= 32) __syncwarp(group_mask(blockDim.x));
  }

  __syncthreads();
  write_partial_row<T>(partial, span.group(), n, first_col, span_cols, acc_all, acc_floats);
  span.finish();
}

// The cluster variant's body is built for sm_90 (and sm_90a), where its budget of 2 CTAs
// per SM at 64 registers is tuned and the host selects it. Every arch's cubin carries every
// entry point: the others get one that traps (before sm_90 there are no clusters; the
// sm_100 and sm_120 ptxas spill the body at 64 registers).
template <class T>
__device__ __forceinline__ void rmsnorm_bwd_cluster(const T* __restrict__ x, const T* __restrict__ w,
                                                    const T* __restrict__ dy, T* __restrict__ dx,
                                                    float* __restrict__ partial, uint32_t rows, uint32_t cols,
                                                    uint32_t rows_per_cluster, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  rmsnorm_bwd<T, ClusterHalf<T>>(x, w, dy, dx, partial, rows, cols, rows_per_cluster, eps);
#else
  __trap();
#endif
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
    rmsnorm_bwd<T, WholeRow<T>>(x, w, dy, dx, partial, rows, cols, rows_per_block, eps);                            \
  }                                                                                                                 \
  extern "C" __global__ void CUBINS_CLUSTER_DIMS(kClusterCtas) __launch_bounds__(kClusterThreads, kClusterCtasPerSm) \
      rmsnorm_bwd_cluster_##SUFFIX(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,      \
                                   T* __restrict__ dx, float* __restrict__ partial, uint32_t rows, uint32_t cols,   \
                                   uint32_t rows_per_cluster, float eps) {                                          \
    rmsnorm_bwd_cluster<T>(x, w, dy, dx, partial, rows, cols, rows_per_cluster, eps);                               \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(kDwWarps * 32)                                                       \
      rmsnorm_dweight_##SUFFIX(const float* __restrict__ partial, T* __restrict__ dw, uint32_t blocks,              \
                               uint32_t cols) {                                                                     \
    rmsnorm_dweight<T>(partial, dw, blocks, cols);                                                                  \
  }

CUBINS_RMSNORM_ENTRY_POINTS(__nv_bfloat16, bf16)
CUBINS_RMSNORM_ENTRY_POINTS(__half, f16)
CUBINS_RMSNORM_ENTRY_POINTS(float, f32)
