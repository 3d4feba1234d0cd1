// Thin wrappers over Hopper's tensor memory accelerator and warpgroup register reallocation:
// 2-D tile copies described by a CUtensorMap, global to shared memory completing on an
// mbarrier (cubins/mbarrier.cuh) and shared to global in bulk groups, and setmaxnreg. PTX ISA, "Tensor Copy"
// (cp.async.bulk.tensor). Only the sm_90a kernels use them (setmaxnreg is arch-specific), so
// they exist where wgmma does.
#pragma once

#include <cstdint>

#include "cubins/gemm/wgmma.cuh"
#include "cubins/mbarrier.cuh"

namespace cubins {
namespace gemm {

#if CUBINS_HAS_WGMMA

// Copies the box at (c0 = inner coordinate, c1 = outer) of the tensor `map` describes into
// shared memory at `dst`; its bytes complete on barrier `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const void* map, unsigned bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
// Copies shared memory at `src` into the box at (c0, c1) of the tensor `map` describes, as a
// bulk group of this thread; the copy engine clips the box to the tensor (nothing is written
// past it). The writes to `src` must be fenced to the async proxy first
// (fence_proxy_async_shared) and ordered before this thread by a barrier.
__device__ __forceinline__ void tma_store_2d(const void* map, unsigned src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until this thread's bulk groups have read their shared-memory sources (which may then be
// rewritten); their global writes may still be in flight.
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// Until this thread's bulk groups have completed.
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// The `threads` threads of named barrier `id` (1 to 15: 0 is __syncthreads') meet.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void st_shared_u32(unsigned addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(unsigned addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

// Gives back registers (producer warps) or takes them (consumer warps); every warp of the
// warpgroup executes it, and the CTA's total must stay within the register file.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

#endif  // CUBINS_HAS_WGMMA

}  // namespace gemm
}  // namespace cubins
