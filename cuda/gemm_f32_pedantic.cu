// Pedantic f32 GEMM: FFMA only, one owner per output, k ascending (see pedantic_kernel.cuh).
// Two tile configurations that must agree bit for bit.
#include "cubins/gemm/pedantic_kernel.cuh"
#include "cubins/gemm/tiles.cuh"

using cubins::gemm::TileFmaLarge;
using cubins::gemm::TileFmaSmall;

CUBINS_GEMM_PEDANTIC_ENTRY(gemm_f32_pedantic_nn_128x128, NN, TileFmaLarge)
CUBINS_GEMM_PEDANTIC_ENTRY(gemm_f32_pedantic_tn_128x128, TN, TileFmaLarge)
CUBINS_GEMM_PEDANTIC_ENTRY(gemm_f32_pedantic_nt_128x128, NT, TileFmaLarge)
CUBINS_GEMM_PEDANTIC_ENTRY(gemm_f32_pedantic_nn_64x64, NN, TileFmaSmall)
CUBINS_GEMM_PEDANTIC_ENTRY(gemm_f32_pedantic_tn_64x64, TN, TileFmaSmall)
CUBINS_GEMM_PEDANTIC_ENTRY(gemm_f32_pedantic_nt_64x64, NT, TileFmaSmall)
