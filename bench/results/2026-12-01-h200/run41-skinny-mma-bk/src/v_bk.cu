// The crate's mma.sync GEMM kernel (cubins/gemm/mma_kernel.cuh) at tiles for skinny problems
// (M = 32 .. 128, N = K = 4096 / 8192), second round: k tiles of 128 (run40's best) at
// more ring depths, tile widths and blocks per SM.
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
#include "skinny.cuh"

//          id    name                 BM   BN  BK  WM WN ST MB
MMA_VARIANT(r0,  "m64x32x128s4",       64,  32, 128, 2, 2, 4, 2)
MMA_VARIANT(r1,  "m64x32x128s5",       64,  32, 128, 2, 2, 5, 1)
MMA_VARIANT(r2,  "m64x64x128s3",       64,  64, 128, 2, 2, 3, 2)
MMA_VARIANT(r3,  "m64x32x256s3",       64,  32, 256, 2, 2, 3, 1)
MMA_VARIANT(r4,  "m32x64x128s4",       32,  64, 128, 2, 2, 4, 2)
MMA_VARIANT(r5,  "m64x32x128s3",       64,  32, 128, 2, 2, 3, 3)
MMA_VARIANT(r6,  "m64x64x64s6",        64,  64, 64, 2, 2, 6, 2)
MMA_VARIANT(r7,  "m32x32x128s4",       32,  32, 128, 2, 2, 4, 3)
MMA_VARIANT(r8,  "crate_64x64x64s3",   64,  64, 64, 2, 2, 3, 3)
