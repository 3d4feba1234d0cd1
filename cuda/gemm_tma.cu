// GEMM on Hopper with TMA loads and warp specialization (cubins/gemm/tma_kernel.cuh): bf16 and
// fp16, output in the input type or f32 (CUBINS_GEMM_OUT_F32), every layout; and tf32 for NT
// operands that gemm_tf32_prepare.cu has rounded and laid out K-major (every TF32 layout runs
// through it), f32 output. Real code only in sm_90a builds; other builds carry trapping stubs
// that the selector never picks (src/ops/gemm/plan.rs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cubins/gemm/tma_kernel.cuh"

CUBINS_GEMM_TMA_ENTRY(gemm_bf16_nn_tma_128x256, __nv_bfloat16, NN)
CUBINS_GEMM_TMA_ENTRY(gemm_bf16_tn_tma_128x256, __nv_bfloat16, TN)
CUBINS_GEMM_TMA_ENTRY(gemm_bf16_nt_tma_128x256, __nv_bfloat16, NT)
CUBINS_GEMM_TMA_ENTRY(gemm_fp16_nn_tma_128x256, __half, NN)
CUBINS_GEMM_TMA_ENTRY(gemm_fp16_tn_tma_128x256, __half, TN)
CUBINS_GEMM_TMA_ENTRY(gemm_fp16_nt_tma_128x256, __half, NT)
CUBINS_GEMM_TMA_ENTRY(gemm_tf32_nt_tma_128x256, float, NT)
