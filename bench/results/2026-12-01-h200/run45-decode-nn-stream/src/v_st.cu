#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// Weight streams only (PURE, OPT 1: no A, no mma; not a GEMM), all programmatic dependents:
// the crate's NT and NN patterns against NN split-K patterns (wider row pieces per CTA, K / S
// each) without their cross-CTA sum (NOTAIL 16777216) and, for one, with it. What run39's
// split-K designs would cost without the tail, and what the tail costs.
//             id    name                      T   NI  W  U  CL LD PIPE MB OPT       WC
REG_VARIANT_NT(q0,   "pure_nt16_g128",         TT, 1, 8,  4, 1, 1, 0,  2, 10245,    1)
REG_VARIANT_NN(q1,   "pure_nn_w24u2",          TT, 2, 24, 2, 1, 1, 0,  1, 8193,     1)
REG_VARIANT_NN(q2,   "pure_nn_w16u1db_s32",    TT, 2, 16, 1, 1, 1, 2,  1, 8709,     1)
REG_VARIANT_NN(q3,   "pure_sk2_ni2_wc2_w24u2", TT, 2, 24, 2, 2, 1, 0,  1, 20979713, 2)
REG_VARIANT_NN(q4,   "puretail_sk2_ni2_wc2_w24u2", TT, 2, 24, 2, 2, 1, 0, 1, 4202497, 2)
REG_VARIANT_NN(q5,   "pure_sk2_wc1_w16u1",     TT, 4, 16, 1, 2, 1, 0,  1, 20979713, 1)
REG_VARIANT_NN(q6,   "pure_sk4_wc2_w16u1",     TT, 4, 16, 1, 4, 1, 0,  1, 20979713, 2)
REG_VARIANT_NN(q7,   "pure_sk4_ni2_wc4_w16u2", TT, 2, 16, 2, 4, 1, 0,  1, 20979713, 4)
REG_VARIANT_NN(q8,   "pure_sk8_wc4_w16u1",     TT, 4, 16, 1, 8, 1, 0,  1, 20979713, 4)
REG_VARIANT_NN(q9,   "pure_sk4_wc2_w8u4",      TT, 4, 8,  4, 4, 1, 0,  1, 20979713, 2)
