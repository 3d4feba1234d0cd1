#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// Third round at N = K = 8192: 32-column, 8-warp kernels (the crate's large-N shape, two
// blocks per SM) without A ahead, by weight-load flavour (LD 0 .cs, 1 L2::256B), steps per
// round and stagger (4 + 2048: 128 groups, 4 + 128: 64), and one round structure with two
// register sets (PIPE 2); against the crate's (`nt32_w8u3`, `nn32_w8u3`) and run48's best
// (`nn_w16u1`, `nt32_w8u2_g128_a1`, `nn32_w8u2_a2_ld1`). All programmatic dependents (8192).
//             id    name                      T   NI  W  U  CL LD PIPE MB OPT        WC
REG_VARIANT_NT(t0,   "nt32_w8u3",              TT, 2, 8,  3, 1, 0, 0,  2, 8192,      1)
REG_VARIANT_NT(t1,   "nt32_w8u2_g128_a1",      TT, 2, 8,  2, 1, 1, 3,  2, 33564676,  1)
REG_VARIANT_NT(t2,   "nt32_w8u2_ld1",          TT, 2, 8,  2, 1, 1, 0,  2, 8192,      1)
REG_VARIANT_NT(t3,   "nt32_w8u2_g128_ld1",     TT, 2, 8,  2, 1, 1, 0,  2, 10244,     1)
REG_VARIANT_NT(t4,   "nt32_w8u1_g128_ld1",     TT, 2, 8,  1, 1, 1, 0,  2, 10244,     1)
REG_VARIANT_NT(t5,   "nt32_w8u3_g128_ld1",     TT, 2, 8,  3, 1, 1, 0,  2, 10244,     1)
REG_VARIANT_NT(t6,   "nt32_w8u2_g64_ld1",      TT, 2, 8,  2, 1, 1, 0,  2, 8324,      1)
REG_VARIANT_NT(t7,   "nt32_w8u1db_g128_ld1",   TT, 2, 8,  1, 1, 1, 2,  2, 10244,     1)
REG_VARIANT_NT(t8,   "nt32_w8u2_g128_ld0",     TT, 2, 8,  2, 1, 0, 0,  2, 10244,     1)
REG_VARIANT_NN(n0,   "nn32_w8u3",              TT, 2, 8,  3, 1, 0, 0,  2, 8192,      1)
REG_VARIANT_NN(n1,   "nn_w16u1",               TT, 2, 16, 1, 1, 1, 0,  1, 8192,      1)
REG_VARIANT_NN(n2,   "nn32_w8u2_a2_ld1",       TT, 2, 8,  2, 1, 1, 3,  2, 67117056,  1)
REG_VARIANT_NN(n3,   "nn32_w8u2_ld1",          TT, 2, 8,  2, 1, 1, 0,  2, 8192,      1)
REG_VARIANT_NN(n4,   "nn32_w8u1_ld1",          TT, 2, 8,  1, 1, 1, 0,  2, 8192,      1)
REG_VARIANT_NN(n5,   "nn32_w8u3_ld1",          TT, 2, 8,  3, 1, 1, 0,  2, 8192,      1)
REG_VARIANT_NN(n6,   "nn32_w8u2_g128_ld1",     TT, 2, 8,  2, 1, 1, 0,  2, 10244,     1)
REG_VARIANT_NN(n7,   "nn32_w8u1db_ld1",        TT, 2, 8,  1, 1, 1, 2,  2, 8192,      1)
REG_VARIANT_NN(n8,   "nn32_w8u2_g64_ld1",      TT, 2, 8,  2, 1, 1, 0,  2, 8324,      1)
