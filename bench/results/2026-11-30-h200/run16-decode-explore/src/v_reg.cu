#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// Names: r<16 NI>[x<WC>]_w<warps>u<unroll>[_cl<cluster>]_<rnd|roll|db>[_ld256][_stag][_pdl].
// Block = 16 NI WC columns. PIPE: 0 rnd, 1 roll, 2 db. LD: 0 ld.global.cs (crate), 1 .nc
// L1::no_allocate L2::256B. OPT: 1 pure, 2 pdl, 4 stag. MB: min blocks per SM (launch bounds).
//             id   name                              T   NI  W  U  CL LD PIPE MB OPT WC
REG_VARIANT(   r2,  "r32_w16u3_rnd_ld256",            TT, 2, 16, 3, 1, 1, 0,  1, 0,  1)
REG_VARIANT(   r4,  "r32_w16u4_rnd_ld256",            TT, 2, 16, 4, 1, 1, 0,  1, 0,  1)
REG_VARIANT(   r5,  "r32_w24u2_rnd_ld256",            TT, 2, 24, 2, 1, 1, 0,  1, 0,  1)
REG_VARIANT(   r6,  "r32_w8u3_cl2_rnd_ld256",         TT, 2, 8, 3, 2, 1, 0,  2, 0,  1)
REG_VARIANT(   r7,  "r32_w16u1_db_ld256",             TT, 2, 16, 1, 1, 1, 2,  1, 0,  1)
REG_VARIANT(   r11, "r32_w16u3_pdl_ld256",            TT, 2, 16, 3, 1, 1, 0,  1, 2,  1)
REG_VARIANT_NT(r7s, "r32_w16u1_db_ld256_stag",        TT, 2, 16, 1, 1, 1, 2,  1, 4,  1)
REG_VARIANT_NN(r15, "r32_w12u4_rnd_ld256",            TT, 2, 12, 4, 1, 1, 0,  1, 0,  1)
REG_VARIANT_NN(r16, "r32_w12u2_db_ld256",             TT, 2, 12, 2, 1, 1, 2,  1, 0,  1)
REG_VARIANT_NT(r6s, "r32_w8u3_cl2_rnd_ld256_stag",    TT, 2, 8, 3, 2, 1, 0,  2, 4,  1)
REG_VARIANT_NT(r12, "r16_w8u4_rnd_ld256",             TT, 1, 8, 4, 1, 1, 0,  2, 0,  1)
REG_VARIANT_NT(r14, "r16_w8u4_rnd_ld256_stag",        TT, 1, 8, 4, 1, 1, 0,  2, 4,  1)
REG_VARIANT_NT(x3,  "r16x2_w16u4_rnd_ld256_stag",     TT, 1, 16, 4, 1, 1, 0,  1, 4,  2)
REG_VARIANT_NT(r13, "r16_w8u2_db_ld256_stag",         TT, 1, 8, 2, 1, 1, 2,  2, 4,  1)
REG_VARIANT_NT(r17, "r16_w8u3_db_ld256_stag",         TT, 1, 8, 3, 1, 1, 2,  2, 4,  1)
#if DT == 0
REG_VARIANT(   p1,  "pure32_w16u3_rnd_ld256",         TT, 2, 16, 3, 1, 1, 0,  1, 1,  1)
REG_VARIANT_NT(p2,  "pure32_w16u3_rnd_ld256_stag",    TT, 2, 16, 3, 1, 1, 0,  1, 5,  1)
#endif
