// The crate's mma.sync GEMM kernel (cubins/gemm/mma_kernel.cuh) at tiles for skinny problems
// (M = 32 .. 128, N = K = 4096 / 8192): the crate's 64 x 64 x 64 three-stage tile against
// narrower N tiles (more blocks, so every SM streams weights) and deeper rings (more bytes
// in flight per SM).
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
#include "skinny.cuh"

//          id    name                 BM   BN  BK  WM WN ST MB
MMA_VARIANT(t0,  "crate_64x64x64s3",   64,  64, 64, 2, 2, 3, 3)
MMA_VARIANT(t1,  "m64x64x64s6",        64,  64, 64, 2, 2, 6, 2)
MMA_VARIANT(t2,  "m64x32x64s8",        64,  32, 64, 2, 2, 8, 2)
MMA_VARIANT(t3,  "m64x32x64s8w41",     64,  32, 64, 4, 1, 8, 2)
MMA_VARIANT(t4,  "m64x32x128s4",       64,  32, 128, 2, 2, 4, 2)
MMA_VARIANT(t5,  "m64x16x64s8w41",     64,  16, 64, 4, 1, 8, 2)
MMA_VARIANT(t6,  "m128x32x64s6w41",    128, 32, 64, 4, 1, 6, 1)
MMA_VARIANT(t7,  "m32x64x64s8",        32,  64, 64, 2, 2, 8, 2)
MMA_VARIANT(t8,  "m64x32x64s12",       64,  32, 64, 2, 2, 12, 1)
