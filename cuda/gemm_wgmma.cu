// GEMM on Hopper's warpgroup MMA (wgmma.mma_async, f32 accumulation): bf16 and fp16, output
// in the input type or f32 (CUBINS_GEMM_OUT_F32), and tf32 for NT operands that
// gemm_tf32_prepare.cu has rounded and laid out K-major (every TF32 layout runs through it). Real code only in sm_90a builds; other
// builds carry trapping stubs that the selector never picks (src/ops/gemm/plan.rs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cubins/gemm/wgmma_kernel.cuh"

namespace cubins {
namespace gemm {
//                           warpgroups  BN  stages
using TileWgmma = WgmmaTile<2, 256, 4>;  // 128 x 256 x 64 (16-bit) or x 32 (tf32), 4 x 48 KB ring
}  // namespace gemm
}  // namespace cubins

using cubins::gemm::TileWgmma;

CUBINS_GEMM_WGMMA_ENTRY(gemm_bf16_nn_wgmma_128x256, __nv_bfloat16, NN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_bf16_tn_wgmma_128x256, __nv_bfloat16, TN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_bf16_nt_wgmma_128x256, __nv_bfloat16, NT, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_fp16_nn_wgmma_128x256, __half, NN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_fp16_tn_wgmma_128x256, __half, TN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_fp16_nt_wgmma_128x256, __half, NT, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_tf32_nt_wgmma_128x256, float, NT, TileWgmma)
