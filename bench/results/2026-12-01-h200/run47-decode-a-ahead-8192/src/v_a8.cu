#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// run46's A-ahead decode (PIPE 3; DA 33554432 one round, 67108864 two; WDB 134217728 two
// weight sets) on the crate's kernels at N = K = 4096 and 8192, the crate's 8192 kernel
// (32 columns, 8 warps, 3 steps, .cs loads, 2 blocks per SM) among them; and weight streams
// alone (PURE, OPT 1: not a GEMM). All programmatic dependents (OPT 8192).
//             id    name                      T   NI  W  U  CL LD PIPE MB OPT        WC
REG_VARIANT_NT(t0,   "nt32_w8u3",              TT, 2, 8,  3, 1, 0, 0,  2, 8192,      1)
REG_VARIANT_NT(t1,   "nt32_w8u3_a1",           TT, 2, 8,  3, 1, 0, 3,  2, 33562624,  1)
REG_VARIANT_NT(t2,   "nt16_g128",              TT, 1, 8,  4, 1, 1, 0,  2, 10244,     1)
REG_VARIANT_NT(t3,   "nt16_g128_a1",           TT, 1, 8,  4, 1, 1, 3,  2, 33564676,  1)
REG_VARIANT_NT(t4,   "nt16_g128_u3_a1",        TT, 1, 8,  3, 1, 1, 3,  2, 33564676,  1)
REG_VARIANT_NT(t5,   "nt16_g128_u2_a2",        TT, 1, 8,  2, 1, 1, 3,  2, 67119108,  1)
REG_VARIANT_NT(t6,   "nt16_g128_a1_ld0",       TT, 1, 8,  4, 1, 0, 3,  2, 33564676,  1)
REG_VARIANT_NT(t7,   "nt16_g64_a1",            TT, 1, 8,  4, 1, 1, 3,  2, 33562756,  1)
REG_VARIANT_NN(n0,   "nn32_w8u3",              TT, 2, 8,  3, 1, 0, 0,  2, 8192,      1)
REG_VARIANT_NN(n1,   "nn32_w8u3_a1",           TT, 2, 8,  3, 1, 0, 3,  2, 33562624,  1)
REG_VARIANT_NN(n2,   "nn32_w8u2_a2",           TT, 2, 8,  2, 1, 0, 3,  2, 67117056,  1)
REG_VARIANT_NN(n3,   "nn_w24u2",               TT, 2, 24, 2, 1, 1, 0,  1, 8192,      1)
REG_VARIANT_NN(n4,   "nn_w16u1db_s32",         TT, 2, 16, 1, 1, 1, 2,  1, 8708,      1)
REG_VARIANT_NN(n5,   "nn_w24u1_a1",            TT, 2, 24, 1, 1, 1, 3,  1, 33562624,  1)
REG_VARIANT_NN(n6,   "nn_w24u1_a2",            TT, 2, 24, 1, 1, 1, 3,  1, 67117056,  1)
REG_VARIANT_NN(n7,   "nn_w16u1_a2",            TT, 2, 16, 1, 1, 1, 3,  1, 67117056,  1)
REG_VARIANT_NN(n8,   "nn_w24u1_a2_ld0",        TT, 2, 24, 1, 1, 0, 3,  1, 67117056,  1)
REG_VARIANT_NN(p0,   "pure_nn_w24u2",          TT, 2, 24, 2, 1, 1, 0,  1, 8193,      1)
REG_VARIANT_NN(p1,   "pure_nn_w24u1",          TT, 2, 24, 1, 1, 1, 0,  1, 8193,      1)
REG_VARIANT_NN(p2,   "pure_nn_w32u1",          TT, 2, 32, 1, 1, 1, 0,  1, 8193,      1)
REG_VARIANT_NN(p3,   "pure_nn32_w8u3",         TT, 2, 8,  3, 1, 0, 0,  2, 8193,      1)
REG_VARIANT_NN(p4,   "pure_nn_w24u2_ld0",      TT, 2, 24, 2, 1, 0, 0,  1, 8193,      1)
REG_VARIANT_NT(p5,   "pure_nt16_g128",         TT, 1, 8,  4, 1, 1, 0,  2, 10245,     1)
