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
REG_VARIANT_NT(r7s, "r32_w16u1_db_ld256_stag",        TT, 2, 16, 1, 1, 1, 2,  1, 4,  1)
REG_VARIANT_NT(r14, "r16_w8u4_rnd_ld256_stag",        TT, 1, 8, 4, 1, 1, 0,  2, 4,  1)
