// Thin wrappers over Hopper's tensor memory accelerator and the mbarriers its copies complete
// on (sm_90): a 2-D tile copy from global to shared memory described by a CUtensorMap, and
// the arrive / expect-tx / wait steps of a producer-consumer ring. PTX ISA, "Tensor Copy"
// (cp.async.bulk.tensor) and "mbarrier". Only the sm_90a kernels use them (setmaxnreg is
// arch-specific), so they exist where wgmma does.
#pragma once

#include <cstdint>

#include "cubins/gemm/wgmma.cuh"

namespace cubins {
namespace gemm {

#if CUBINS_HAS_WGMMA

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes the initialized barriers visible to the async proxy (the copy engine) and the cluster.
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also tells the barrier `bytes` more will land before its phase completes.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the barrier's phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// Copies the box at (c0 = inner coordinate, c1 = outer) of the tensor `map` describes into
// shared memory at `dst`, completing `bytes` of transaction count on barrier `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const void* map, unsigned bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
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
