// The crate's decode kernel, instantiated exactly as entries_16bit.inc does (UNROLL 3;
// w8 with min-blocks 2, w16 with 1). The crate's selector takes w16 when N/32 <= #SMs.
#include "common.h"
#include "cubins/gemm/decode_kernel.cuh"
using namespace cubins::gemm;

#define BASE(NAME, T, L, W, MB) CUBINS_GEMM_DECODE_ENTRY(NAME, T, L, W, 3, MB)
BASE(base_b_nt_w8, __nv_bfloat16, NT, 8, 2)
BASE(base_b_nn_w8, __nv_bfloat16, NN, 8, 2)
BASE(base_b_nt_w16, __nv_bfloat16, NT, 16, 1)
BASE(base_b_nn_w16, __nv_bfloat16, NN, 16, 1)
BASE(base_h_nt_w8, __half, NT, 8, 2)
BASE(base_h_nn_w8, __half, NN, 8, 2)
BASE(base_h_nt_w16, __half, NT, 16, 1)
BASE(base_h_nn_w16, __half, NN, 16, 1)

#define BASE_REG(ID, NAME, T, L, W)                                                                          \
  static void launch_##NAME(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {                             \
    NAME<<<g, b, 0, s>>>((const T*)p.a, (const T*)p.b, p.c, p.bias, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.alpha, \
                         p.beta, p.flags);                                                                   \
  }                                                                                                          \
  static Reg reg_##NAME(Variant{ID, dt_of<T>(), L, 32, 1, W * 32, launch_##NAME, nullptr, true});

BASE_REG("base_w8u3", base_b_nt_w8, __nv_bfloat16, Lay::NT, 8)
BASE_REG("base_w16u3", base_b_nt_w16, __nv_bfloat16, Lay::NT, 16)
BASE_REG("base_w8u3", base_b_nn_w8, __nv_bfloat16, Lay::NN, 8)
BASE_REG("base_w16u3", base_b_nn_w16, __nv_bfloat16, Lay::NN, 16)
BASE_REG("base_w8u3", base_h_nt_w8, __half, Lay::NT, 8)
BASE_REG("base_w16u3", base_h_nt_w16, __half, Lay::NT, 16)
BASE_REG("base_w8u3", base_h_nn_w8, __half, Lay::NN, 8)
BASE_REG("base_w16u3", base_h_nn_w16, __half, Lay::NN, 16)

// Pure weight read (the floor): every byte of B once, 16-byte loads, 256 threads x 4 in flight.
__global__ void __launch_bounds__(512) memread(const uint4* __restrict__ b, size_t n16, uint32_t* out) {
  uint32_t x = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldcs(b + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n16; i += stride) { uint4 v = __ldcs(b + i); x ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (x == 0x12345678u) out[0] = x;  // keeps the loads; practically never stores
}
static void launch_memread(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  memread<<<g, b, 0, s>>>((const uint4*)p.b, (size_t)p.n * p.k / 8, (uint32_t*)p.c);
}
static Reg r1(Variant{"memread_floor", Dt::BF16, Lay::NT, 16, 1, 512, launch_memread, nullptr, false});
static Reg r2(Variant{"memread_floor", Dt::BF16, Lay::NN, 16, 1, 512, launch_memread, nullptr, false});
static Reg r3(Variant{"memread_floor", Dt::FP16, Lay::NT, 16, 1, 512, launch_memread, nullptr, false});
static Reg r4(Variant{"memread_floor", Dt::FP16, Lay::NN, 16, 1, 512, launch_memread, nullptr, false});
// Same read with the decode grid's occupancy: N/32 blocks of 512 threads.
static Reg r5(Variant{"memread_n32x512", Dt::BF16, Lay::NT, 32, 1, 512, launch_memread, nullptr, false});
static Reg r6(Variant{"memread_n32x512", Dt::BF16, Lay::NN, 32, 1, 512, launch_memread, nullptr, false});
