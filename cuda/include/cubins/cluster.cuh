// Thread-block clusters (sm_90+): a CTA's rank, stores into a peer CTA's shared memory
// (distributed shared memory) counted on the peer's mbarrier, and the cluster barrier. Everything here exists only where
// CUBINS_HAS_CLUSTERS is set; nvcc rejects `__cluster_dims__` for older targets, so entry
// points take their cluster shape from CUBINS_CLUSTER_DIMS, empty before sm_90.
#pragma once

#include <cstdint>

#include "cubins/mbarrier.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CUBINS_HAS_CLUSTERS 1
#define CUBINS_CLUSTER_DIMS(x) __cluster_dims__(x, 1, 1)
#else
#define CUBINS_HAS_CLUSTERS 0
#define CUBINS_CLUSTER_DIMS(x)
#endif

#if CUBINS_HAS_CLUSTERS
namespace cubins {

// This CTA's rank within its cluster, and the cluster's index in the grid (x only).
__device__ __forceinline__ int cluster_rank() {
  uint32_t r;
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return static_cast<int>(r);
}

__device__ __forceinline__ int cluster_index_x() {
  uint32_t c;
  asm("mov.u32 %0, %%clusterid.x;\n" : "=r"(c));
  return static_cast<int>(c);
}

__device__ __forceinline__ uint32_t shared_addr(const void* local) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(local));
}

// The shared::cluster address of `local` (a variable in this CTA's shared memory) in the
// shared memory of the cluster's CTA `rank`.
__device__ __forceinline__ uint32_t cluster_map(const void* local, int rank) {
  uint32_t mapped;
  asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(mapped) : "r"(shared_addr(local)), "r"(rank));
  return mapped;
}

// The cluster barrier: every thread of every CTA of the cluster arrives (warp-uniformly:
// `.aligned`) and waits. Writes before it are visible to every thread of the cluster after
// it. Costly (a GPU-scope memory barrier and an L1 invalidation): for a kernel's start and
// end, not for every row.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

// The cluster barrier in two halves, so work between them overlaps the wait: `arrive`
// and `wait` (acquire). Every thread of every CTA calls both, warp-uniformly. The arrival
// is relaxed: it publishes only mbarrier initializations, which their own fence
// (mbarrier_init_cluster_visible) releases, so it costs no GPU-scope memory barrier.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// An mbarrier in this CTA's shared memory expecting one arrival per phase. Initialize it
// before the cluster barrier that precedes any peer's use of it.
__device__ __forceinline__ void mbarrier_init_cluster_visible(uint64_t* bar) {
  mbarrier_init(shared_addr(bar), 1);
  fence_mbarrier_init();
}

__device__ __forceinline__ void mbarrier_arrive_expect_bytes(uint64_t* bar, uint32_t bytes) {
  mbarrier_arrive_expect_bytes(shared_addr(bar), bytes);
}

// Stores v at a peer CTA's shared::cluster address and counts its bytes on the peer's
// mbarrier (also a shared::cluster address): no fence, no cluster barrier.
__device__ __forceinline__ void cluster_store_counted(uint32_t peer_addr, float2 v, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(peer_addr),
               "f"(v.x), "f"(v.y), "r"(peer_bar)
               : "memory");
}

__device__ __forceinline__ void cluster_store_counted(uint32_t peer_addr, float v, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];\n" ::"r"(peer_addr), "f"(v),
               "r"(peer_bar)
               : "memory");
}

__device__ __forceinline__ void cluster_store_counted(uint32_t peer_addr, float4 v, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
                   peer_addr),
               "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(peer_bar)
               : "memory");
}

__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  mbarrier_wait_parity(shared_addr(bar), parity);
}

// Reads of this CTA's shared memory that the compiler cannot fold: peers write it.
__device__ __forceinline__ float shared_load(const float* local) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(shared_addr(local)) : "memory");
  return v;
}

__device__ __forceinline__ float2 shared_load(const float2* local) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(shared_addr(local)) : "memory");
  return v;
}

__device__ __forceinline__ float4 shared_load(const float4* local) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(shared_addr(local))
               : "memory");
  return v;
}

}  // namespace cubins
#endif
