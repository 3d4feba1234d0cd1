#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// run47's question at N = K = 8192, second round: run46's A-ahead decode (PIPE 3; DA 33554432
// one round, 67108864 two) at 16 / 32 / 64 columns per block (NI 1 / 2 / 4) and 8-24 warps,
// against the crate's 8192 kernels (`nt32_w8u3`, `nn32_w8u3`); all programmatic dependents
// (OPT 8192); 4 + 2048: 128 stagger groups.
//             id    name                      T   NI  W  U  CL LD PIPE MB OPT        WC
REG_VARIANT_NT(t0,   "nt32_w8u3",              TT, 2, 8,  3, 1, 0, 0,  2, 8192,      1)
REG_VARIANT_NT(t1,   "nt16_g128",              TT, 1, 8,  4, 1, 1, 0,  2, 10244,     1)
REG_VARIANT_NT(t2,   "nt16_g128_a1",           TT, 1, 8,  4, 1, 1, 3,  2, 33564676,  1)
REG_VARIANT_NT(t3,   "nt32_w16u1_g128_a1",     TT, 2, 16, 1, 1, 1, 3,  1, 33564676,  1)
REG_VARIANT_NT(t4,   "nt32_w16u2_g128_a1",     TT, 2, 16, 2, 1, 1, 3,  1, 33564676,  1)
REG_VARIANT_NT(t5,   "nt64_w16u1_g128_a1",     TT, 4, 16, 1, 1, 1, 3,  1, 33564676,  1)
REG_VARIANT_NT(t6,   "nt32_w8u2_g128_a1",      TT, 2, 8,  2, 1, 1, 3,  2, 33564676,  1)
REG_VARIANT_NT(t7,   "nt16_g128_u2_a1",        TT, 1, 8,  2, 1, 1, 3,  2, 33564676,  1)
REG_VARIANT_NN(n0,   "nn32_w8u3",              TT, 2, 8,  3, 1, 0, 0,  2, 8192,      1)
REG_VARIANT_NN(n1,   "nn_w16u1_a2",            TT, 2, 16, 1, 1, 1, 3,  1, 67117056,  1)
REG_VARIANT_NN(n2,   "nn32_w8u2_a2",           TT, 2, 8,  2, 1, 0, 3,  2, 67117056,  1)
REG_VARIANT_NN(n3,   "nn_w16u1_a1",            TT, 2, 16, 1, 1, 1, 3,  1, 33562624,  1)
REG_VARIANT_NN(n4,   "nn_w16u1",               TT, 2, 16, 1, 1, 1, 0,  1, 8192,      1)
REG_VARIANT_NN(n5,   "nn64_w16u1_a1",          TT, 4, 16, 1, 1, 1, 3,  1, 33562624,  1)
REG_VARIANT_NN(n6,   "nn64_w16u1_a2",          TT, 4, 16, 1, 1, 1, 3,  1, 67117056,  1)
REG_VARIANT_NN(n7,   "nn64_w8u2_a2_mb1",       TT, 4, 8,  2, 1, 1, 3,  1, 67117056,  1)
REG_VARIANT_NN(n8,   "nn_w24u1_a1",            TT, 2, 24, 1, 1, 1, 3,  1, 33562624,  1)
REG_VARIANT_NN(n9,   "nn32_w8u2_a2_ld1",       TT, 2, 8,  2, 1, 1, 3,  2, 67117056,  1)
REG_VARIANT_NN(n10,  "nn_w12u1_a2",            TT, 2, 12, 1, 1, 1, 3,  1, 67117056,  1)
REG_VARIANT_NN(p0,   "pure_nn64_w16u1",        TT, 4, 16, 1, 1, 1, 0,  1, 8193,      1)
REG_VARIANT_NN(p1,   "pure_nn_w16u1",          TT, 2, 16, 1, 1, 1, 0,  1, 8193,      1)
