#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// NN decode, all programmatic dependents (OPT 8192). The crate's two kernels; the same with
// four neighbouring blocks per stagger shift (G4 8388608); split-K over CL = S CTAs per column
// block through a global workspace (SPLITK 4194304): BN = 16 NI WC columns, KW = W / WC warps
// per column group, so each CTA reads K / S of A and 2 BN-byte row pieces of the weights.
//             id     name                    T   NI  W  U  CL LD PIPE MB OPT      WC
REG_VARIANT_NN(c24,   "nn_w24u2",             TT, 2, 24, 2, 1, 1, 0,  1, 8192,    1)
REG_VARIANT_NN(c16,   "nn_w16u1db_s32",       TT, 2, 16, 1, 1, 1, 2,  1, 8708,    1)
REG_VARIANT_NN(g24,   "nn_w24u2_s32g4",       TT, 2, 24, 2, 1, 1, 0,  1, 8397316, 1)
REG_VARIANT_NN(g16,   "nn_w16u1db_s32g4",     TT, 2, 16, 1, 1, 1, 2,  1, 8397316, 1)
REG_VARIANT_NN(k1,    "sk4_wc2_w8u2",         TT, 4, 8,  2, 4, 1, 0,  1, 4202496, 2)
REG_VARIANT_NN(k2,    "sk4_wc2_w16u1",        TT, 4, 16, 1, 4, 1, 0,  1, 4202496, 2)
REG_VARIANT_NN(k3,    "sk4_wc2_w8u1db",       TT, 4, 8,  1, 4, 1, 2,  1, 4202496, 2)
REG_VARIANT_NN(k4,    "sk4_wc2_w8u4",         TT, 4, 8,  4, 4, 1, 0,  1, 4202496, 2)
REG_VARIANT_NN(k5,    "sk4_wc2_w8u2_s32",     TT, 4, 8,  2, 4, 1, 0,  1, 4203012, 2)
REG_VARIANT_NN(k6,    "sk8_wc4_w16u1",        TT, 4, 16, 1, 8, 1, 0,  1, 4202496, 4)
REG_VARIANT_NN(k7,    "sk8_wc4_w8u2",         TT, 4, 8,  2, 8, 1, 0,  1, 4202496, 4)
REG_VARIANT_NN(k8,    "sk2_wc1_w8u2",         TT, 4, 8,  2, 2, 1, 0,  1, 4202496, 1)
REG_VARIANT_NN(k9,    "sk2_wc1_w16u1",        TT, 4, 16, 1, 2, 1, 0,  1, 4202496, 1)
REG_VARIANT_NN(k10,   "sk4_ni2_wc4_w16u2",    TT, 2, 16, 2, 4, 1, 0,  1, 4202496, 4)
REG_VARIANT_NN(k11,   "sk2_ni2_wc2_w24u2",    TT, 2, 24, 2, 2, 1, 0,  1, 4202496, 2)
REG_VARIANT_NN(k12,   "sk8_wc2_w8u1_mb2",     TT, 4, 8,  1, 8, 1, 0,  2, 4202496, 2)
