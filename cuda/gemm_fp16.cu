// fp16 GEMM on tensor cores (mma.sync m16n8k16, f32 accumulation), output fp16 or f32
// (CUBINS_GEMM_OUT_F32).
#include <cuda_fp16.h>

#define CUBINS_GEMM_ELEM __half
#define CUBINS_GEMM_NAME(suffix) gemm_fp16_##suffix
#include "cubins/gemm/entries_16bit.inc"
