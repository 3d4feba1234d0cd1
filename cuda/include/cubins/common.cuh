// Device helpers shared by every kernel file.
#pragma once

#include <cstdint>

namespace cubins {

// Grid-stride loop bounds as 64-bit indices (element counts can exceed 2^32).
__device__ __forceinline__ uint64_t global_thread_index() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ uint64_t grid_threads() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

// A kernel the runtime may launch as a programmatic dependent of the stream's previous kernel
// (sm_90 code and later) calls this before its first global memory access: its blocks may be
// scheduled while that kernel drains, so nothing is read or written before that kernel has
// finished and its writes are visible. Launched plainly, it returns at once.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the stream's next kernel, where it is launched as a programmatic dependent, be scheduled
// once every block of this grid has called this (or exited): its blocks take the SM slots
// this grid leaves and wait in their own wait_for_previous_grid, so its launch overlaps this
// grid's work instead of following it. Moves no data; the dependent still sees every write
// of this grid (its wait returns only once this grid has finished). Called by the norms and
// softmax right after their wait (H100, run124: 1.04-1.11x median per op over rows 1-4000);
// their contracts require its PREEXIT (`releases_grid` in cuda/kernels.toml).
// Not by SwiGLU and RoPE, whose one-block launches took longer with it (SwiGLU 1 x 768
// 0.85 -> 1.21 us, RoPE 1 x 768 0.91x): there the dependent's early blocks cost more than
// the launch they hide.
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// cp.async (sm_80+): 16-byte global -> shared copy that bypasses L1 (LDGSTS.E.BYPASS.128).
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_src) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Hints the 128-byte line holding `p` into L2 (prefetch.global.L2, sm_80+); nothing waits
// on it. No memory clobber, so loads may be scheduled across it. The asm takes the
// address, so the compiler no longer proves that tensor read-only: its loads take the
// non-coherent path only where they name it (__ldg).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(__cvta_generic_to_global(p)));
}

}  // namespace cubins
