// Who shares a row, and how its sums are reduced: the forward norms (norm.cuh) take one of
//   BlockRow: a row group of one block (rows.cuh's geometry); its sums are row_reduce's;
//   ClusterRow: the kCtas CTAs of a thread-block cluster (sm_90+), one run of the row's body
//     chunks each (RowPlan::segment; the head and tail columns with rank 0). A few long rows
//     then spread over kCtas SMs each instead of one: each CTA reduces its run, stores the
//     sum into every peer's shared memory (`st.async`, counted on the peer's mbarrier), and
//     adds the kCtas sums in rank order, so every CTA scales its run with the same bits.
#pragma once

#include <cstdint>

#include "cubins/cluster.cuh"
#include "cubins/reduce.cuh"
#include "cubins/rows.cuh"

namespace cubins {

struct BlockRow {
  // Whether the forward streams rows longer than a resident tile (a block takes any row).
  static constexpr bool kStreams = true;

  __device__ __forceinline__ static BlockRow current() { return BlockRow{}; }
  __device__ __forceinline__ RowGroup group() const { return RowGroup::current(); }
  // This block's part of a row: all of it, on either walk.
  template <class T>
  __device__ __forceinline__ RowPlan<T> part(const RowPlan<T>& p) const {
    return p;
  }
  template <class T>
  __device__ __forceinline__ RowPlan<T> part_elementwise(const RowPlan<T>& p) const {
    return p;
  }
  // Round kRound's sum over the row's threads (block-uniform where the row spans warps).
  template <int kRound>
  __device__ __forceinline__ float sum(float v, float* scratch) const {
    return row_reduce(v, Sum{}, 0.0f, scratch);
  }
};

#if CUBINS_HAS_CLUSTERS
// One row per cluster (grid.x = rows x kCtas, blockDim.y == 1); up to kRounds sums per row.
template <int kCtas, int kRounds>
struct ClusterRow {
  // The host gives a cluster only rows whose runs stay resident (fwd_cluster_geometry in
  // src/ops/norm_fwd.rs), so the twin has no streamed walk: 20% less code.
  static constexpr bool kStreams = false;

  int rank;
  float* slots;    // round r's sum from rank c lands at slots[r * kCtas + c]
  uint64_t* bars;  // round r's kCtas - 1 sums from the peers, counted in bytes

  // Every thread calls it first: the mbarriers are initialized and the cluster barrier's
  // arrival made, so the wait before the first exchange overlaps the row's loads.
  __device__ __forceinline__ static ClusterRow current() {
    __shared__ float slots[kRounds * kCtas];
    __shared__ uint64_t bars[kRounds];
    if (threadIdx.x == 0) {
#pragma unroll
      for (int r = 0; r < kRounds; ++r) mbarrier_init_cluster_visible(&bars[r]);
    }
    cluster_arrive_relaxed();
    return ClusterRow{cluster_rank(), slots, bars};
  }
  __device__ __forceinline__ RowGroup group() const {
    return RowGroup{static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x),
                    static_cast<int64_t>(cluster_index_x())};
  }
  template <class T>
  __device__ __forceinline__ RowPlan<T> part(const RowPlan<T>& p) const {
    return p.segment(rank, (p.body_chunks + kCtas - 1) / kCtas);
  }
  // A row some tensor of which is not 16-byte aligned with the others: rank 0 walks all
  // of it element by element; the other ranks only add zeros to its sums.
  template <class T>
  __device__ __forceinline__ RowPlan<T> part_elementwise(const RowPlan<T>& p) const {
    return rank == 0 ? p : p.nothing();
  }
  template <int kRound>
  __device__ __forceinline__ float sum(float v, float* scratch) const {
    static_assert(kRound < kRounds, "a slot and an mbarrier per round");
    v = row_reduce(v, Sum{}, 0.0f, scratch);
    // Every peer's mbarriers are initialized before any store reaches them.
    if constexpr (kRound == 0) cluster_wait();
    float* round = slots + kRound * kCtas;
    uint64_t* bar = bars + kRound;
    const int peer = static_cast<int>(threadIdx.x);
    if (peer < kCtas && peer != rank) cluster_store_counted(cluster_map(round + rank, peer), v, cluster_map(bar, peer));
    if (threadIdx.x == 0) mbarrier_arrive_expect_bytes(bar, (kCtas - 1) * sizeof(float));
    // Each mbarrier completes one phase (one row, one round): parity 0. A CTA leaves only
    // after every peer's stores into it have landed.
    mbarrier_wait_parity(bar, 0);
    float total = 0.0f;
#pragma unroll
    for (int c = 0; c < kCtas; ++c) total += c == rank ? v : shared_load(round + c);
    return total;
  }
};
#endif

}  // namespace cubins
