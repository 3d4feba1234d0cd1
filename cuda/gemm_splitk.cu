// The reduce pass of a split-K GEMM (the planner's SplitK, docs/kernels/gemm.md): the
// mma.sync kernel's `splits` slices of the K loop wrote their raw f32 sums to `splits` planes
// of M x N floats in the workspace; this sums each element's planes in slice order (the same
// bits whatever the launch), applies the GEMM epilogue (alpha, beta, bias: epilogue.cuh) and
// writes C in its element type. A thread takes four adjacent columns: one 16-byte load per
// plane where N % 4 == 0 (each plane row then starts 16-byte aligned), else element by element.
#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/epilogue.cuh"
#include "cubins/gemm/layout.cuh"

namespace {

using cubins::gemm::EpilogueArgs;

constexpr int kThreads = 256;
// Six blocks per SM (40 registers): without the bound, sm_100's ptxas aims at eight and spills.
constexpr int kMinBlocks = 6;

template <class OutT>
__device__ __forceinline__ void splitk_reduce(const float* __restrict__ partial, OutT* __restrict__ c,
                                              const float* __restrict__ bias, int m, int n, int ldc, int splits,
                                              float alpha, float beta, unsigned flags) {
  const EpilogueArgs e{alpha, beta, (flags & CUBINS_GEMM_BIAS) ? bias : nullptr, m, n, ldc,
                       (flags & CUBINS_GEMM_VEC_C) != 0};
  const int64_t plane = static_cast<int64_t>(m) * n;
  const int quads = cubins::gemm::ceil_div(n, 4);
  const uint64_t total = static_cast<uint64_t>(m) * quads;
  const bool vec = n % 4 == 0;
  cubins::wait_for_previous_grid();  // launched as a programmatic dependent (sm_90 and later)
  for (uint64_t i = cubins::global_thread_index(); i < total; i += cubins::grid_threads()) {
    const int row = static_cast<int>(i / quads), col = static_cast<int>(i % quads) * 4;
    const float* p = partial + static_cast<int64_t>(row) * n + col;
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (vec) {
#pragma unroll 4
      for (int z = 0; z < splits; ++z) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(p + z * plane));
        s[0] = __fadd_rn(s[0], v.x);
        s[1] = __fadd_rn(s[1], v.y);
        s[2] = __fadd_rn(s[2], v.z);
        s[3] = __fadd_rn(s[3], v.w);
      }
    } else {
      for (int z = 0; z < splits; ++z)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < n) s[j] = __fadd_rn(s[j], __ldg(p + z * plane + j));
    }
    cubins::gemm::store_quad(e, c, row, col, make_float4(s[0], s[1], s[2], s[3]));
  }
}

}  // namespace

#define CUBINS_SPLITK_REDUCE_ENTRY(NAME, OutT)                                                                  \
  extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks) NAME(const float* __restrict__ partial, OutT* __restrict__ c, \
                                                         const float* __restrict__ bias, int m, int n, int ldc,  \
                                                         int splits, float alpha, float beta, unsigned flags) {  \
    splitk_reduce<OutT>(partial, c, bias, m, n, ldc, splits, alpha, beta, flags);                              \
  }

CUBINS_SPLITK_REDUCE_ENTRY(gemm_splitk_reduce_bf16, __nv_bfloat16)
CUBINS_SPLITK_REDUCE_ENTRY(gemm_splitk_reduce_f16, __half)
CUBINS_SPLITK_REDUCE_ENTRY(gemm_splitk_reduce_f32, float)
