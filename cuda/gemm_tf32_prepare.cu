// The TF32 tier's operand pass for the warpgroup-MMA kernel (gemm_wgmma.cu): A and B are
// rounded to tf32 with cvt.rna (the tier's rounding, as the mma.sync kernels round) and
// written K-major into one workspace, A as [M][kp] then B as [N][kp], kp = K rounded up to
// 4 (16-byte rows), columns K .. kp - 1 zero. wgmma reads tf32 operands only K-major and
// truncates what it reads; values that are already tf32 lose nothing to the truncation, so
// the tier keeps its rounding semantics on the fast kernel.
//
// Blocks walk 64 x 64 tiles (64 rows of the output x 64 k), A's tiles first, then B's; a
// thread moves four 16-byte groups per tile, all loads issued before any store. K-major
// sources (A in NN and NT, B in NT) copy rows; MN-major ones (A in TN, B in NN) are
// transposed through shared memory. Loads are 16 bytes where the operand allows it
// (CUBINS_TF32_PREPARE_*_VEC) and the group lies inside the matrix, else element by
// element; stores are always 16 bytes.
#include <cstdint>

#include "cubins/gemm/layout.cuh"
#include "cubins/gemm/ptx.cuh"
#include "cubins/params.h"

namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;
constexpr int kGroupsPerRow = kTile / 4;              // 16-byte groups per tile row
constexpr int kRowsPerPass = kThreads / kGroupsPerRow;  // 16
constexpr int kPasses = kTile / kRowsPerPass;           // 4

struct Operand {
  const float* src;
  int ld;
  int rows;  // rows of the K-major output: M for A, N for B
  bool mn_major;
  bool vec;
  float* dst;
};

// Four consecutive values of row `r` of a row-major matrix from column `c`, zero past
// `cols` or `rows`.
__device__ __forceinline__ float4 load4(const Operand& op, int r, int c, int rows, int cols) {
  const float* p = op.src + static_cast<int64_t>(r) * op.ld + c;
  if (op.vec && r < rows && c + 3 < cols) return *reinterpret_cast<const float4*>(p);
  float v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = r < rows && c + j < cols ? p[j] : 0.0f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

__device__ __forceinline__ float round_tf32(float v) {
  return __uint_as_float(cubins::gemm::to_tf32(__float_as_uint(v)));
}

__device__ __forceinline__ float4 round_tf32(float4 v) {
  return make_float4(round_tf32(v.x), round_tf32(v.y), round_tf32(v.z), round_tf32(v.w));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    gemm_tf32_prepare(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ workspace, int m,
                      int n, int k, int lda, int ldb, int kp, unsigned flags) {
  // MN-major tiles staged as [k][outer]; the odd row pitch keeps column reads to 2-way
  // bank conflicts.
  __shared__ float staged[kTile][kTile + 1];
  const int tiles_k = cubins::gemm::ceil_div(kp, kTile);
  const int64_t tiles_a = static_cast<int64_t>(cubins::gemm::ceil_div(m, kTile)) * tiles_k;
  const int64_t tiles_b = static_cast<int64_t>(cubins::gemm::ceil_div(n, kTile)) * tiles_k;
  const int g4 = 4 * (static_cast<int>(threadIdx.x) % kGroupsPerRow);
  const int r0 = static_cast<int>(threadIdx.x) / kGroupsPerRow;

  for (int64_t t = blockIdx.x; t < tiles_a + tiles_b; t += gridDim.x) {
    const bool is_b = t >= tiles_a;
    const Operand op = is_b ? Operand{b, ldb, n, (flags & CUBINS_TF32_PREPARE_B_MN_MAJOR) != 0,
                                      (flags & CUBINS_TF32_PREPARE_B_VEC) != 0, workspace + static_cast<int64_t>(m) * kp}
                            : Operand{a, lda, m, (flags & CUBINS_TF32_PREPARE_A_MN_MAJOR) != 0,
                                      (flags & CUBINS_TF32_PREPARE_A_VEC) != 0, workspace};
    const int64_t local = is_b ? t - tiles_a : t;
    const int row0 = static_cast<int>(local / tiles_k) * kTile, k0 = static_cast<int>(local % tiles_k) * kTile;
    float4 v[kPasses];
    if (op.mn_major) {
      // Stored [K][rows]: 16-byte groups along the rows, staged, read back along k.
#pragma unroll
      for (int i = 0; i < kPasses; ++i) v[i] = load4(op, k0 + r0 + i * kRowsPerPass, row0 + g4, k, op.rows);
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
        float* s = &staged[r0 + i * kRowsPerPass][g4];
        s[0] = v[i].x, s[1] = v[i].y, s[2] = v[i].z, s[3] = v[i].w;
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
        const int r = r0 + i * kRowsPerPass;
        v[i] = make_float4(staged[g4][r], staged[g4 + 1][r], staged[g4 + 2][r], staged[g4 + 3][r]);
      }
      __syncthreads();  // the next tile reuses `staged`
    } else {
#pragma unroll
      for (int i = 0; i < kPasses; ++i) v[i] = load4(op, row0 + r0 + i * kRowsPerPass, k0 + g4, op.rows, k);
    }
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int r = row0 + r0 + i * kRowsPerPass, kk = k0 + g4;
      // kp is a multiple of 4: a group is wholly inside the row or wholly past it.
      if (r < op.rows && kk < kp)
        *reinterpret_cast<float4*>(op.dst + static_cast<int64_t>(r) * kp + kk) = round_tf32(v[i]);
    }
  }
}
