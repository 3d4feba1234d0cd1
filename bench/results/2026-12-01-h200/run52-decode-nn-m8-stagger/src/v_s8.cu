#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// NN decode at 2 <= M <= 8, N = K = 4096: the crate's `n32w24` (no stagger) against the same
// kernel with 16 / 32 / 64 / 128 / 256 stagger groups (OPT 4 with none / 512 / 128 / 2048 /
// 256), 128 groups shared by four neighbouring blocks (G4 8388608), and the crate's M > 8
// kernel `n32w16` (double-buffered, 32 groups). All programmatic dependents (OPT 8192).
//             id    name                      T   NI  W  U  CL LD PIPE MB OPT        WC
REG_VARIANT_NN(c24,  "nn_w24u2",               TT, 2, 24, 2, 1, 1, 0,  1, 8192,      1)
REG_VARIANT_NN(c16,  "nn_w16u1db_s32",         TT, 2, 16, 1, 1, 1, 2,  1, 8708,      1)
REG_VARIANT_NN(s1,   "nn_w24u2_s16",           TT, 2, 24, 2, 1, 1, 0,  1, 8196,      1)
REG_VARIANT_NN(s2,   "nn_w24u2_s32",           TT, 2, 24, 2, 1, 1, 0,  1, 8708,      1)
REG_VARIANT_NN(s3,   "nn_w24u2_s64",           TT, 2, 24, 2, 1, 1, 0,  1, 8324,      1)
REG_VARIANT_NN(s4,   "nn_w24u2_s128",          TT, 2, 24, 2, 1, 1, 0,  1, 10244,     1)
REG_VARIANT_NN(s5,   "nn_w24u2_s256",          TT, 2, 24, 2, 1, 1, 0,  1, 8452,      1)
REG_VARIANT_NN(s6,   "nn_w24u2_s128g4",        TT, 2, 24, 2, 1, 1, 0,  1, 8398852,   1)
