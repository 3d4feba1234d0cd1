#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// NN at M = 8 and 16: fewer blocks reading A. The crate's two NN kernels (as programmatic
// dependents, +8192) against 64-column blocks split over K in 2-CTA clusters (CL = 2): two
// column groups of 32 (WC = 2, the groups' warps read the same A chunk: L1 hits) or one warp
// over 64 columns (NI = 4, 16-byte weight loads); stagger 32 groups (+516) or none.
//             id   name                         T   NI  W  U  CL LD PIPE MB OPT    WC
REG_VARIANT_NN(b24, "nn_w24u2",                  TT, 2, 24, 2, 1, 1, 0,  1, 8192,  1)
REG_VARIANT_NN(b16, "nn_w16u1db_s32",            TT, 2, 16, 1, 1, 1, 2,  1, 8708,  1)
REG_VARIANT_NN(c1,  "nn64_cl2_wc2_w16u1db_s32",  TT, 2, 16, 1, 2, 1, 2,  1, 8708,  2)
REG_VARIANT_NN(c1n, "nn64_cl2_wc2_w16u1db",      TT, 2, 16, 1, 2, 1, 2,  1, 8192,  2)
REG_VARIANT_NN(c2,  "nn64_cl2_wc2_w24u1db_s32",  TT, 2, 24, 1, 2, 1, 2,  1, 8708,  2)
REG_VARIANT_NN(c7,  "nn64_cl2_wc2_w24u2",        TT, 2, 24, 2, 2, 1, 0,  1, 8192,  2)
REG_VARIANT_NN(c3,  "nn64_cl2_ni4_w8u1db_s32",   TT, 4, 8, 1, 2, 1, 2,  1, 8708,  1)
REG_VARIANT_NN(c3n, "nn64_cl2_ni4_w8u1db",       TT, 4, 8, 1, 2, 1, 2,  1, 8192,  1)
REG_VARIANT_NN(c4,  "nn64_cl2_ni4_w12u1db_s32",  TT, 4, 12, 1, 2, 1, 2,  1, 8708,  1)
REG_VARIANT_NN(c8,  "nn64_cl2_ni4_w16u1",        TT, 4, 16, 1, 2, 1, 0,  1, 8192,  1)
REG_VARIANT_NN(c5,  "nn64_wc2_w16u1db_s32",      TT, 2, 16, 1, 1, 1, 2,  1, 8708,  2)
REG_VARIANT_NN(c6,  "nn32_cl2_w8u2db_s32",       TT, 2, 8, 2, 2, 1, 2,  2, 8708,  1)
REG_VARIANT_NN(c9,  "nn32_wc2_w24u2",            TT, 2, 24, 2, 1, 1, 0,  1, 8192,  2)
