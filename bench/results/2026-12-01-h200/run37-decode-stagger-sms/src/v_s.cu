#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// NT n16w8 (256 blocks, two per SM) as a programmatic dependent (+8192) with 64, 128 (the
// crate), 132 and 66 stagger groups; NN n32w16 (one block per SM) with 32 (the crate) and 132.
//             id   name                 T   NI  W  U  CL LD PIPE MB OPT      WC
REG_VARIANT_NT(g64,  "nt16_g64",         TT, 1, 8, 4, 1, 1, 0,  2, 8324,    1)
REG_VARIANT_NT(g128, "nt16_g128",        TT, 1, 8, 4, 1, 1, 0,  2, 10244,   1)
REG_VARIANT_NT(g132, "nt16_g132",        TT, 1, 8, 4, 1, 1, 0,  2, 1056772, 1)
REG_VARIANT_NT(g66,  "nt16_g66",         TT, 1, 8, 4, 1, 1, 0,  2, 2105348, 1)
REG_VARIANT_NN(h32,  "nn16db_g32",       TT, 2, 16, 1, 1, 1, 2,  1, 8708,    1)
REG_VARIANT_NN(h132, "nn16db_g132",      TT, 2, 16, 1, 1, 1, 2,  1, 1056772, 1)
