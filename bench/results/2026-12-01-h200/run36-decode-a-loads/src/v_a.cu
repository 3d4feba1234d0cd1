#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// What the second n8 tile's A loads cost (M > 8), on the crate's kernels as programmatic
// dependents (+8192): NT n16w8 with 128 stagger groups (2052), NN n32w16 double-buffered
// with 32 groups (516), NN n32w24 (M <= 8 kernel). A1SAME (+32768, not a GEMM): the second
// tile loads the first tile's rows again. A's load flavour: +65536 no L1 allocation, +131072
// L2 evict_last, +262144 plain ld.global. +524288: weights first, then A, in every step.
//             id   name                   T   NI  W  U  CL LD PIPE MB OPT     WC
REG_VARIANT_NT(t0,  "nt16",                TT, 1, 8, 4, 1, 1, 0,  2, 10244,  1)
REG_VARIANT_NT(t1,  "nt16_a1same",         TT, 1, 8, 4, 1, 1, 0,  2, 43012,  1)
REG_VARIANT_NT(t2,  "nt16_anol1",          TT, 1, 8, 4, 1, 1, 0,  2, 75780,  1)
REG_VARIANT_NT(t3,  "nt16_aevl",           TT, 1, 8, 4, 1, 1, 0,  2, 141316, 1)
REG_VARIANT_NT(t4,  "nt16_aplain",         TT, 1, 8, 4, 1, 1, 0,  2, 272388, 1)
REG_VARIANT_NT(t5,  "nt16_bfirst",         TT, 1, 8, 4, 1, 1, 0,  2, 534532, 1)
REG_VARIANT_NN(n0,  "nn16db",              TT, 2, 16, 1, 1, 1, 2,  1, 8708,   1)
REG_VARIANT_NN(n1,  "nn16db_a1same",       TT, 2, 16, 1, 1, 1, 2,  1, 41476,  1)
REG_VARIANT_NN(n2,  "nn16db_anol1",        TT, 2, 16, 1, 1, 1, 2,  1, 74244,  1)
REG_VARIANT_NN(n3,  "nn16db_aevl",         TT, 2, 16, 1, 1, 1, 2,  1, 139780, 1)
REG_VARIANT_NN(n4,  "nn16db_aplain",       TT, 2, 16, 1, 1, 1, 2,  1, 270852, 1)
REG_VARIANT_NN(n5,  "nn16db_bfirst",       TT, 2, 16, 1, 1, 1, 2,  1, 532996, 1)
REG_VARIANT_NN(m0,  "nn24",                TT, 2, 24, 2, 1, 1, 0,  1, 8192,   1)
REG_VARIANT_NN(m2,  "nn24_anol1",          TT, 2, 24, 2, 1, 1, 0,  1, 73728,  1)
REG_VARIANT_NN(m5,  "nn24_bfirst",         TT, 2, 24, 2, 1, 1, 0,  1, 532480, 1)
