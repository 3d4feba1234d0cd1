// The crate's mma.sync GEMM kernel (cubins/gemm/mma_kernel.cuh) at 128-row tiles for M = 64 /
// 128, N = K = 4096 / 8192: one row of tiles at M = 128, so the weights are read once,
// against the crate's skinny tiles (64 x 64 x 128 and 64 x 32 x 128).
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
#include "skinny.cuh"

//          id    name                 BM   BN  BK  WM WN ST MB
MMA_VARIANT(r0,  "crate_64x64x128s3",  64,  64, 128, 2, 2, 3, 2)
MMA_VARIANT(r1,  "crate_64x32x128s4",  64,  32, 128, 2, 2, 4, 2)
MMA_VARIANT(r2,  "m128x64x128s3_w8",   128, 64, 128, 4, 2, 3, 1)
MMA_VARIANT(r3,  "m128x64x128s4_w8",   128, 64, 128, 4, 2, 4, 1)
MMA_VARIANT(r4,  "m128x64x64s6_w8",    128, 64, 64,  4, 2, 6, 1)
MMA_VARIANT(r5,  "m128x64x128s3_w4",   128, 64, 128, 2, 2, 3, 1)
MMA_VARIANT(r6,  "m128x32x128s4_w4",   128, 32, 128, 4, 1, 4, 1)
MMA_VARIANT(r7,  "m128x128x64s4_w8",   128, 128, 64, 2, 4, 4, 1)
MMA_VARIANT(r8,  "m128x32x128s3_w4",   128, 32, 128, 4, 1, 3, 2)
