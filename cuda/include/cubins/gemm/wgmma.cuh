// Thin wrappers over the Hopper warpgroup MMA (wgmma.mma_async, sm_90a only): shared-memory
// matrix descriptors, the fences and groups that order it, and m64n256 blocks with f32
// accumulators: k16 for bf16 and fp16, k8 for tf32. PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply".
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "cubins/gemm/layout.cuh"

// wgmma exists only in arch-specific sm_90a code; other builds compile the entry points as
// stubs that trap (the selector never launches them there).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CUBINS_HAS_WGMMA 1
#else
#define CUBINS_HAS_WGMMA 0
#endif

namespace cubins {
namespace gemm {

// A shared-memory matrix descriptor for a tile in the 128-byte swizzle (the layout
// SwizzledTile gives rows of eight 16-byte chunks when the tile starts 1024-byte aligned):
// start address, leading and stride byte offsets (16-byte units), swizzle mode 1 (128 B).
// K-major: rows of 64 16-bit k values; SBO steps 8 rows (1024 B), LBO is unused (1).
// MN-major: rows of 64 M (or N) values per k; LBO steps one 64-wide panel, SBO 8 k rows.
CUBINS_HD uint64_t smem_descriptor(unsigned addr, unsigned lbo_bytes, unsigned sbo_bytes) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo_bytes >> 4) << 16) |
         (static_cast<uint64_t>(sbo_bytes >> 4) << 32) | (uint64_t{1} << 62);
}

#if CUBINS_HAS_WGMMA

// Orders this thread's prior register accesses (the accumulators) before the next wgmma.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed wgmma groups of this warpgroup are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Makes this thread's generic-proxy shared-memory writes (cp.async included) visible to the
// async proxy that wgmma reads its operands through.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Pins an accumulator register so the compiler neither reads nor moves it across a pending
// wgmma.
__device__ __forceinline__ void pin_register(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// The 128 f32 accumulators of one m64n256 block (d, in the m16n8 fragment pattern per warp)
// as inline-asm operands %0 .. %127 and their place in the instruction text.
#define CUBINS_WGMMA_D_TEXT                                                                                             \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

#define CUBINS_WGMMA_D_OPERANDS                                                                                         \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),  \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),  \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),  \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),  \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),  \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),  \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),  \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),  \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),  \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),  \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),  \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),  \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),  \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),  \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// D (+)= A B for one m64n256k16 block: A and B from shared memory (descriptors), f32
// accumulators, kTrans* = 1 for an MN-major operand. The CTYPE argument picks the overload.
#define CUBINS_WGMMA_M64N256K16(CTYPE, PTXTYPE)                                                                         \
template <int kTransA, int kTransB>                                                                                     \
__device__ __forceinline__ void wgmma_m64n256(float (&d)[128], uint64_t desc_a, uint64_t desc_b, CTYPE) {               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                          \
               "wgmma.mma_async.sync.aligned.m64n256k16.f32." PTXTYPE "." PTXTYPE " {" CUBINS_WGMMA_D_TEXT            \
               "}, %128, %129, p, 1, 1, %131, %132;\n}\n"                                                               \
               : CUBINS_WGMMA_D_OPERANDS                                                                                \
               : "l"(desc_a), "l"(desc_b), "r"(1), "n"(kTransA), "n"(kTransB));                                         \
}

CUBINS_WGMMA_M64N256K16(__nv_bfloat16, "bf16")
CUBINS_WGMMA_M64N256K16(__half, "f16")
#undef CUBINS_WGMMA_M64N256K16

// D (+)= A B for one m64n256k8 block of tf32 operands (f32 bits; the tensor cores drop the
// low 13 mantissa bits, they do not round). tf32 has no transpose bits: both operands must
// be K-major.
template <int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_m64n256(float (&d)[128], uint64_t desc_a, uint64_t desc_b, float) {
  static_assert(kTransA == 0 && kTransB == 0, "wgmma reads tf32 operands K-major only");
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" CUBINS_WGMMA_D_TEXT "}, %128, %129, p, 1, 1;\n}\n"
               : CUBINS_WGMMA_D_OPERANDS
               : "l"(desc_a), "l"(desc_b), "r"(1));
}
#undef CUBINS_WGMMA_D_TEXT
#undef CUBINS_WGMMA_D_OPERANDS

#endif  // CUBINS_HAS_WGMMA

}  // namespace gemm
}  // namespace cubins
