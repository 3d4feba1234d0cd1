// Thin wrappers over Hopper's tensor memory accelerator and warpgroup register reallocation:
// a 2-D tile copy from global to shared memory described by a CUtensorMap, completing on an
// mbarrier (cubins/mbarrier.cuh), and setmaxnreg. PTX ISA, "Tensor Copy"
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
