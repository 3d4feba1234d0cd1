// f32 GEMM on tensor cores through tf32 (mma.sync m16n8k8, operands rounded with
// cvt.rna.tf32.f32 as they leave shared memory, f32 accumulation), output f32.
#include "cubins/gemm/mma_kernel.cuh"
#include "cubins/gemm/tiles.cuh"

using cubins::gemm::TileTf32Large;
using cubins::gemm::TileTf32Wide;
using cubins::gemm::TileTf32Small;

// 128 x 256 for NN and TN only: the NT instantiation spills at the 255-register limit.
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_nn_128x256, float, NN, TileTf32Wide)
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_tn_128x256, float, TN, TileTf32Wide)
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_nn_128x128, float, NN, TileTf32Large)
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_tn_128x128, float, TN, TileTf32Large)
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_nt_128x128, float, NT, TileTf32Large)
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_nn_64x64, float, NN, TileTf32Small)
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_tn_64x64, float, TN, TileTf32Small)
CUBINS_GEMM_MMA_ENTRY(gemm_tf32_nt_64x64, float, NT, TileTf32Small)
