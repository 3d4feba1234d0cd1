// The operand pass of the 16-bit GEMM tiers (the planner's Packed, docs/kernels/gemm.md): an
// operand whose base or leading dimension keeps its rows off 16-byte chunks is copied, as
// stored (rows x cols), into the workspace with its rows padded to whole 16-byte chunks, so the
// GEMM reads it with 16-byte copies (or tensor maps) instead of element by element. A thread
// writes one 16-byte chunk of the copy from eight element loads (zeros past `cols`); a warp's
// loads cover 512 contiguous source bytes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cubins/common.cuh"

namespace {

constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ void pack(const T* __restrict__ src, T* __restrict__ dst, int rows, int cols, int ld_src,
                                     int ld_dst) {
  constexpr int kPerChunk = 16 / sizeof(T);
  const int chunks = ld_dst / kPerChunk;  // ld_dst is whole chunks
  const uint64_t total = static_cast<uint64_t>(rows) * chunks;
  cubins::wait_for_previous_grid();  // launched as a programmatic dependent (sm_90 and later)
  for (uint64_t i = cubins::global_thread_index(); i < total; i += cubins::grid_threads()) {
    const int row = static_cast<int>(i / chunks), col = static_cast<int>(i % chunks) * kPerChunk;
    const T* from = src + static_cast<int64_t>(row) * ld_src + col;
    union {
      uint4 chunk;
      T v[kPerChunk];
    } out;
#pragma unroll
    for (int j = 0; j < kPerChunk; ++j) out.v[j] = col + j < cols ? from[j] : T(0.0f);
    reinterpret_cast<uint4*>(dst + static_cast<int64_t>(row) * ld_dst)[col / kPerChunk] = out.chunk;
  }
}

}  // namespace

#define CUBINS_GEMM_PACK_ENTRY(NAME, T)                                                                           \
  extern "C" __global__ void __launch_bounds__(kThreads) NAME(const T* __restrict__ src, T* __restrict__ dst,     \
                                                              int rows, int cols, int ld_src, int ld_dst) {      \
    pack<T>(src, dst, rows, cols, ld_src, ld_dst);                                                              \
  }

CUBINS_GEMM_PACK_ENTRY(gemm_pack_bf16, __nv_bfloat16)
CUBINS_GEMM_PACK_ENTRY(gemm_pack_f16, __half)
