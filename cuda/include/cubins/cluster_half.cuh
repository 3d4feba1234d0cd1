// A backward norm's row shared by the two CTAs of a cluster, one column half each (a Span for
// norm.cuh's bwd_rows, beside WholeRows). Rank 0 takes the first ceil(chunks / 2) whole
// 16-byte chunks, rank 1 the rest and the tail (both halves start on a 16-byte boundary, so
// both take the same walk). A row's statistics take kRounds exchanges: after each block
// reduction a CTA stores its share into the peer's shared memory with `st.async`, counted
// on the peer's mbarrier, and waits on its own for the peer's; each adds rank 0's share +
// rank 1's, so both halves see the same bits. (The cluster barrier would also order the
// exchange, but it costs a GPU-scope memory barrier and an L1 invalidation per row.)
//
// Exchange e (row step s, round r: e = s * kRounds + r) uses slot e % 2 and its mbarrier's
// phase e / 2: a CTA that runs ahead stores exchange e + 1 while its peer may still read
// exchange e, and it cannot store exchange e + 2 before it has the peer's e + 1, which the
// peer sends after reading e.
#pragma once

#include "cubins/cluster.cuh"
#include "cubins/dtype.cuh"
#include "cubins/reduce.cuh"

#if CUBINS_HAS_CLUSTERS
namespace cubins {

// What a row's share travels as: st.async has no 3-vector, so a float3 goes as a float4.
template <class V>
struct ClusterWire {
  using type = V;
};
template <>
struct ClusterWire<float3> {
  using type = float4;
};

// One row group per CTA (blockDim.y == 1). kStreams: the build streams halves past a resident tile; such CTAs never prefetch.
template <class T, int kRounds, bool kStreamsRows>
struct ClusterHalf {
  static constexpr int kVec = Storage<T>::kVec;
  static constexpr bool kStreams = kStreamsRows;
  static constexpr bool kPrefetch = false;
  int rank;
  int exchange;        // of the row step's first round
  float4* slots;       // where the peer's shares land (this CTA's shared memory), 2
  uint64_t* landed;    // counts them, 2
  uint32_t peer_slots;  // the same pairs in the peer CTA (shared::cluster addresses)
  uint32_t peer_landed;

  __device__ __forceinline__ static ClusterHalf current() {
    __shared__ float4 slots[2];
    __shared__ uint64_t bars[2];
    const int rank = cluster_rank();
    if (threadIdx.x == 0) {
      mbarrier_init_cluster_visible(&bars[0]);
      mbarrier_init_cluster_visible(&bars[1]);
    }
    return ClusterHalf{rank, 0, slots, bars, cluster_map(slots, rank ^ 1), cluster_map(bars, rank ^ 1)};
  }
  // The cluster's range of rows, and its workspace row.
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
    ClusterHalf h = *this;
    h.exchange = s * kRounds;
    return h;
  }
  // The row's sum of round `round`: this CTA's threads (one row group a CTA: the block's
  // barriers), then the peer's share.
  template <class V>
  __device__ __forceinline__ V row_sum(V v, V* scratch, int round = 0) const {
    return combine(row_reduce(v, Sum{}, V{}, scratch), round);
  }
  // The row's sums of round `round` from this CTA's (float, float2 or float3).
  template <class V>
  __device__ __forceinline__ V combine(V mine, int round = 0) const {
    const int e = exchange + round;
    const int k = e & 1;
    const uint32_t parity = static_cast<uint32_t>((e >> 1) & 1);
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_bytes(landed + k, sizeof(Wire<V>));
      cluster_store_counted(peer_slots + k * sizeof(float4), wire(mine),
                            peer_landed + k * static_cast<uint32_t>(sizeof(uint64_t)));
    }
    mbarrier_wait_parity(landed + k, parity);
    const V theirs = unwire<V>(shared_load(reinterpret_cast<const Wire<V>*>(slots + k)));
    return rank == 0 ? add(mine, theirs) : add(theirs, mine);
  }

 private:
  template <class V>
  using Wire = typename ClusterWire<V>::type;
  __device__ __forceinline__ static float wire(float v) { return v; }
  __device__ __forceinline__ static float2 wire(float2 v) { return v; }
  __device__ __forceinline__ static float4 wire(float3 v) { return make_float4(v.x, v.y, v.z, 0.0f); }
  template <class V>
  __device__ __forceinline__ static V unwire(Wire<V> v) {
    if constexpr (sizeof(V) == sizeof(float3)) {
      return make_float3(v.x, v.y, v.z);
    } else {
      return v;
    }
  }
  __device__ __forceinline__ static float add(float a, float b) { return a + b; }
  __device__ __forceinline__ static float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
  __device__ __forceinline__ static float3 add(float3 a, float3 b) {
    return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);
  }
};

}  // namespace cubins
#endif
