// The TF32 tier's operand pass for the warpgroup-MMA kernel (gemm_wgmma.cu): A and B are
// rounded to tf32 with cvt.rna (the tier's rounding, as the mma.sync kernels round) and
// written K-major into one workspace, A as [M][kp] then B as [N][kp], kp = K rounded up to
// 4 (16-byte rows), columns K .. kp - 1 zero. wgmma reads tf32 operands only K-major and
// truncates what it reads; values that are already tf32 lose nothing to the truncation, so
// the tier keeps its rounding semantics on the fast kernel.
//
// Blocks walk 32 x 32 tiles (32 rows of the output x 32 k), A's tiles first, then B's.
// K-major sources (A in NN and NT, B in NT) copy rows; MN-major ones (A in TN, B in NN) are
// transposed through shared memory. Both read and write 128-byte runs per warp.
#include <cstdint>

#include "cubins/common.cuh"
#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/ptx.cuh"
#include "cubins/params.h"

namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // 256 threads as 8 rows of 32: each thread moves 4 values per tile

struct Operand {
  const float* src;
  int ld;
  int rows;  // rows of the K-major output: M for A, N for B
  bool mn_major;
  float* dst;
};

__device__ __forceinline__ float round_tf32(float v) {
  return __uint_as_float(cubins::gemm::to_tf32(__float_as_uint(v)));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kTile * kRowsPerPass)
    gemm_tf32_prepare(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ workspace, int m,
                      int n, int k, int lda, int ldb, int kp, unsigned flags) {
  __shared__ float staged[kTile][kTile + 1];
  const int tiles_k = cubins::gemm::ceil_div(kp, kTile);
  const int64_t tiles_a = static_cast<int64_t>(cubins::gemm::ceil_div(m, kTile)) * tiles_k;
  const int64_t tiles_b = static_cast<int64_t>(cubins::gemm::ceil_div(n, kTile)) * tiles_k;
  const int tx = static_cast<int>(threadIdx.x) % kTile, ty = static_cast<int>(threadIdx.x) / kTile;

  for (int64_t t = blockIdx.x; t < tiles_a + tiles_b; t += gridDim.x) {
    const bool is_b = t >= tiles_a;
    const Operand op = is_b ? Operand{b, ldb, n, (flags & CUBINS_TF32_PREPARE_B_MN_MAJOR) != 0,
                                      workspace + static_cast<int64_t>(m) * kp}
                            : Operand{a, lda, m, (flags & CUBINS_TF32_PREPARE_A_MN_MAJOR) != 0, workspace};
    const int64_t local = is_b ? t - tiles_a : t;
    const int row0 = static_cast<int>(local / tiles_k) * kTile, k0 = static_cast<int>(local % tiles_k) * kTile;
    float v[kTile / kRowsPerPass];
    if (op.mn_major) {
      // Stored [K][rows]: read along rows, stage, write along k.
#pragma unroll
      for (int i = 0; i < kTile / kRowsPerPass; ++i) {
        const int kk = k0 + ty + i * kRowsPerPass, r = row0 + tx;
        staged[ty + i * kRowsPerPass][tx] = kk < k && r < op.rows ? op.src[static_cast<int64_t>(kk) * op.ld + r] : 0.0f;
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kTile / kRowsPerPass; ++i) v[i] = staged[tx][ty + i * kRowsPerPass];
      __syncthreads();  // the next tile reuses `staged`
    } else {
#pragma unroll
      for (int i = 0; i < kTile / kRowsPerPass; ++i) {
        const int r = row0 + ty + i * kRowsPerPass, kk = k0 + tx;
        v[i] = kk < k && r < op.rows ? op.src[static_cast<int64_t>(r) * op.ld + kk] : 0.0f;
      }
    }
#pragma unroll
    for (int i = 0; i < kTile / kRowsPerPass; ++i) {
      const int r = row0 + ty + i * kRowsPerPass, kk = k0 + tx;
      if (r < op.rows && kk < kp) op.dst[static_cast<int64_t>(r) * kp + kk] = round_tf32(v[i]);
    }
  }
}
