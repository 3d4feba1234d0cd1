// GEMM on Hopper's warpgroup MMA (wgmma.mma_async, f32 accumulation): bf16 and fp16, output
// in the input type or f32 (CUBINS_GEMM_OUT_F32), and tf32 for NT operands that
// gemm_tf32_prepare.cu has rounded and laid out K-major (every TF32 layout runs through it). Real code only in sm_90a builds; other
// builds carry trapping stubs that the selector never picks (src/ops/gemm/plan.rs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cubins/gemm/wgmma_kernel.cuh"
#include "cubins/gemm/wgmma_tiles.cuh"

// TileWgmma (128 x 256 x 64 for 16-bit, x 32 for tf32, a 4 x 48 KB ring) and each entry's
// layout and tile come from cuda/gemm_catalogue.toml (`cargo xtask codegen`), as the
// planner's do; each ENTRY line below checks itself against them (CUBINS_GEMM_CATALOGUED,
// cubins/gemm/args.cuh). The lines are written here rather than generated: the cubin's line
// table places every entry point at its line.

using cubins::gemm::TileWgmma;

CUBINS_GEMM_WGMMA_ENTRY(gemm_bf16_nn_wgmma_128x256, __nv_bfloat16, NN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_bf16_tn_wgmma_128x256, __nv_bfloat16, TN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_bf16_nt_wgmma_128x256, __nv_bfloat16, NT, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_fp16_nn_wgmma_128x256, __half, NN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_fp16_tn_wgmma_128x256, __half, TN, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_fp16_nt_wgmma_128x256, __half, NT, TileWgmma)
CUBINS_GEMM_WGMMA_ENTRY(gemm_tf32_nt_wgmma_128x256, float, NT, TileWgmma)
