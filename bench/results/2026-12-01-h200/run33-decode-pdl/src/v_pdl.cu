#include "dec_reg.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// The crate's three decode kernels at N = K = 4096 (run30's dec_reg.cuh; NT 128 stagger groups
// = OPT 2052, NN M > 8 32 groups = OPT 516), each plain, as a programmatic dependent launch
// waiting before any access (+8192 PDLW), and with the next launch allowed after the main
// loop (+16384 TRIG).
//             id   name                        T   NI  W  U  CL LD PIPE MB OPT     WC
REG_VARIANT_NT(a0,  "nt_n16w8_s128",            TT, 1, 8, 4, 1, 1, 0,  2, 2052,   1)
REG_VARIANT_NT(a1,  "nt_n16w8_s128_pdl",        TT, 1, 8, 4, 1, 1, 0,  2, 10244,  1)
REG_VARIANT_NT(a2,  "nt_n16w8_s128_pdl_trig",   TT, 1, 8, 4, 1, 1, 0,  2, 26628,  1)
REG_VARIANT_NN(b0,  "nn_n32w24",                TT, 2, 24, 2, 1, 1, 0,  1, 0,     1)
REG_VARIANT_NN(b1,  "nn_n32w24_pdl",            TT, 2, 24, 2, 1, 1, 0,  1, 8192,  1)
REG_VARIANT_NN(b2,  "nn_n32w24_pdl_trig",       TT, 2, 24, 2, 1, 1, 0,  1, 24576, 1)
REG_VARIANT_NN(c0,  "nn_n32w16db_s32",          TT, 2, 16, 1, 1, 1, 2,  1, 516,   1)
REG_VARIANT_NN(c1,  "nn_n32w16db_s32_pdl",      TT, 2, 16, 1, 1, 1, 2,  1, 8708,  1)
REG_VARIANT_NN(c2,  "nn_n32w16db_s32_pdl_trig", TT, 2, 16, 1, 1, 1, 2,  1, 25092, 1)
