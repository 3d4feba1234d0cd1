// The arguments every GEMM entry point takes, and the struct the kernel bodies read them
// from. C = alpha * op(A) op(B) + beta * C (+ bias[n]), row-major storage: op(A) is M x K,
// op(B) is K x N; layout NN has A [M][K] and B [K][N], TN has A [K][M], NT has B [N][K].
// Leading dimensions are in elements. beta == 0 never reads C, so C may hold anything (NaN
// included) on entry. Flag bits: CUBINS_GEMM_* in cubins/params.h.
#pragma once

#include <cstdint>

#include "cubins/params.h"

// The parameter list, in the order cuda/kernels.toml declares it for every GEMM entry.
#define CUBINS_GEMM_PARAMS(T)                                                                          \
  const T *__restrict__ a, const T *__restrict__ b, void *__restrict__ c, const float *__restrict__ bias, \
      int m, int n, int k, int lda, int ldb, int ldc, float alpha, float beta, unsigned flags
#define CUBINS_GEMM_ARGS {a, b, c, bias, m, n, k, lda, ldb, ldc, alpha, beta, flags}

namespace cubins {
namespace gemm {

struct GemmArgs {
  const void* a;
  const void* b;
  void* c;
  const float* bias;  // f32[N] when CUBINS_GEMM_BIAS is set, else ignored
  int m, n, k;
  int lda, ldb, ldc;
  float alpha, beta;
  unsigned flags;
};

}  // namespace gemm
}  // namespace cubins
