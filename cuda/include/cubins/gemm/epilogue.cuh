// The GEMM epilogue every tier shares: v = alpha * acc, then + beta * C, then + bias[n],
// each step rounded on its own (no contraction), then converted to the output type. One
// definition keeps the tiers' semantics identical and lets the host reference mirror it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "cubins/dtype.cuh"
#include "cubins/gemm/args.cuh"

namespace cubins {
namespace gemm {

// Storage conversions are the crate's one definition (cubins/dtype.cuh).
using cubins::from_float;
using cubins::to_float;

// Four adjacent output elements as one access.
template <class T>
struct Quad;
template <>
struct Quad<float> {
  using type = float4;
};
template <>
struct Quad<__nv_bfloat16> {
  struct __align__(8) type {
    __nv_bfloat16 v[4];
  };
};
template <>
struct Quad<__half> {
  struct __align__(8) type {
    __half v[4];
  };
};

__device__ __forceinline__ float& lane_of(float4& q, int i) { return i == 0 ? q.x : i == 1 ? q.y : i == 2 ? q.z : q.w; }
__device__ __forceinline__ float lane_of(const float4& q, int i) { return i == 0 ? q.x : i == 1 ? q.y : i == 2 ? q.z : q.w; }
template <class T>
__device__ __forceinline__ T& lane_of(typename Quad<T>::type& q, int i) {
  return q.v[i];
}

struct EpilogueArgs {
  float alpha;
  float beta;
  const float* bias;  // null without CUBINS_GEMM_BIAS
  int m;
  int n;
  int ldc;
  bool vec_c;

  __device__ static EpilogueArgs from(const GemmArgs& p) {
    return EpilogueArgs{p.alpha,
                        p.beta,
                        (p.flags & CUBINS_GEMM_BIAS) ? p.bias : nullptr,
                        p.m,
                        p.n,
                        p.ldc,
                        (p.flags & CUBINS_GEMM_VEC_C) != 0};
  }

  // `old` is only read when beta != 0, as BLAS does.
  __device__ __forceinline__ float apply(float acc, float old, int col) const {
    float v = __fmul_rn(alpha, acc);
    if (beta != 0.0f) v = __fadd_rn(v, __fmul_rn(beta, old));
    if (bias != nullptr) v = __fadd_rn(v, bias[col]);
    return v;
  }
};

// Writes element (row, col) of C if it lies inside M x N.
template <class OutT>
__device__ __forceinline__ void store_one(const EpilogueArgs& e, OutT* c, int row, int col, float acc) {
  if (row >= e.m || col >= e.n) return;
  OutT* p = c + static_cast<int64_t>(row) * e.ldc + col;
  const float old = e.beta != 0.0f ? to_float(*p) : 0.0f;
  *p = from_float<OutT>(e.apply(acc, old, col));
}

// Writes elements (row, col .. col + 3); col is a multiple of 4. One vector access when C
// allows it (CUBINS_GEMM_VEC_C) and all four lie inside N, else element by element.
template <class OutT>
__device__ __forceinline__ void store_quad(const EpilogueArgs& e, OutT* c, int row, int col, float4 acc) {
  if (row >= e.m) return;
  if (e.vec_c && col + 3 < e.n) {
    using Q = typename Quad<OutT>::type;
    Q* p = reinterpret_cast<Q*>(c + static_cast<int64_t>(row) * e.ldc + col);
    Q old{};
    if (e.beta != 0.0f) old = *p;
    Q v;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (sizeof(OutT) == 4) {
        lane_of(v, i) = e.apply(lane_of(acc, i), e.beta != 0.0f ? lane_of(old, i) : 0.0f, col + i);
      } else {
        lane_of<OutT>(v, i) =
            from_float<OutT>(e.apply(lane_of(acc, i), e.beta != 0.0f ? to_float(lane_of<OutT>(old, i)) : 0.0f, col + i));
      }
    }
    *p = v;
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) store_one(e, c, row, col + i, lane_of(acc, i));
  }
}

}  // namespace gemm
}  // namespace cubins
