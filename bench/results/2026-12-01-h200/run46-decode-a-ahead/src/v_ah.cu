#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// Decode with A's loads running ahead of the weights' (PIPE 3; DA 33554432 one round, 67108864
// two; WDB 134217728 two weight sets), against the crate's kernels; all programmatic
// dependents (OPT 8192), stagger bits as in run30 (4 on, 512: 32 groups, 128: 64, 2048: 128).
//             id    name                      T   NI  W  U  CL LD PIPE MB OPT        WC
REG_VARIANT_NN(c24,  "nn_w24u2",               TT, 2, 24, 2, 1, 1, 0,  1, 8192,      1)
REG_VARIANT_NN(c16,  "nn_w16u1db_s32",         TT, 2, 16, 1, 1, 1, 2,  1, 8708,      1)
REG_VARIANT_NN(a1,   "nn_w24u2_a1",            TT, 2, 24, 2, 1, 1, 3,  1, 33562624,  1)
REG_VARIANT_NN(a2,   "nn_w24u1_a2",            TT, 2, 24, 1, 1, 1, 3,  1, 67117056,  1)
REG_VARIANT_NN(a3,   "nn_w24u2_s32_a1",        TT, 2, 24, 2, 1, 1, 3,  1, 33563140,  1)
REG_VARIANT_NN(a4,   "nn_w16u1db_s32_a1",      TT, 2, 16, 1, 1, 1, 3,  1, 167780868, 1)
REG_VARIANT_NN(a5,   "nn_w16u1db_s32_a2",      TT, 2, 16, 1, 1, 1, 3,  1, 201335300, 1)
REG_VARIANT_NN(a6,   "nn_w16u2_s32_a1",        TT, 2, 16, 2, 1, 1, 3,  1, 33563140,  1)
REG_VARIANT_NN(a7,   "nn_w16u1db_s64_a1",      TT, 2, 16, 1, 1, 1, 3,  1, 167780484, 1)
REG_VARIANT_NN(a8,   "nn_w16u1db_a1",          TT, 2, 16, 1, 1, 1, 3,  1, 167780352, 1)
REG_VARIANT_NN(a9,   "nn_w16u2_s32_a2",        TT, 2, 16, 2, 1, 1, 3,  1, 67117572,  1)
REG_VARIANT_NT(n0,   "nt16_g128",              TT, 1, 8,  4, 1, 1, 0,  2, 10244,     1)
REG_VARIANT_NT(n1,   "nt16_g128_a1",           TT, 1, 8,  4, 1, 1, 3,  2, 33564676,  1)
REG_VARIANT_NT(n2,   "nt16_g128_u2db_a1",      TT, 1, 8,  2, 1, 1, 3,  2, 167782404, 1)
// CONTIG 268435456: each warp walks a contiguous K range; PURE (1): the weight stream alone.
REG_VARIANT_NN(k1,   "nn_w24u2_contig",        TT, 2, 24, 2, 1, 1, 0,  1, 268443648, 1)
REG_VARIANT_NN(k2,   "nn_w16u1db_a1_contig",   TT, 2, 16, 1, 1, 1, 3,  1, 436215808, 1)
REG_VARIANT_NN(k3,   "pure_nn_w24u2",          TT, 2, 24, 2, 1, 1, 0,  1, 8193,      1)
REG_VARIANT_NN(k4,   "pure_nn_w24u2_contig",   TT, 2, 24, 2, 1, 1, 0,  1, 268443649, 1)
