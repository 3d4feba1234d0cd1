#include "dec_wg.cuh"
#include "dec_wgx.cuh"
#include "dec_wgr.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
// Names: r<16 NI>[x<WC>]_w<warps>u<unroll>[_cl<cluster>]_<rnd|roll|db>[_ld256][_stag][_pdl].
// Block = 16 NI WC columns. PIPE: 0 rnd, 1 roll, 2 db. LD: 0 ld.global.cs (crate), 1 .nc
// L1::no_allocate L2::256B. OPT: 1 pure, 2 pdl, 4 stag. MB: min blocks per SM (launch bounds).
// wgmma decode (NT): 64 columns per CTA, STAGES x 10 KB ring, split-K over CL CTAs.
// OPT: 1 stagger, 2 L2::256B prefetch on the weight copies.
//         id       name                     T   STAGES CL OPT
WG_VARIANT(s12c2,   "wg64_s12_cl2",          TT, 12, 2, 0)
WG_VARIANT(s16,     "wg64_s16",              TT, 16, 1, 0)
// Activations as the m64 operand (rows M..63 zero), weights as the n operand: BN columns per
// CTA, no split-K. MB: CTAs per SM the launch bounds promise.
//          id      name               T   BN  STAGES MB
WGX_VARIANT(n16s6,  "wgx_n16_s6",      TT, 16, 6,  2)
WGX_VARIANT(n16s8,  "wgx_n16_s8",      TT, 16, 8,  2)
WGX_VARIANT(n16s10, "wgx_n16_s10",     TT, 16, 10, 2)
WGX_VARIANT(n32s8,  "wgx_n32_s8",      TT, 32, 8,  2)
WGX_VARIANT(n32s12, "wgx_n32_s12",     TT, 32, 12, 1)
// X from registers (warp 0; zeros elsewhere), W from shared memory: BN columns per CTA.
//          id      name               T   BN  STAGES MB
WGR_VARIANT(n16s16, "wgr_n16_s16",     TT, 16, 16, 3)
WGR_VARIANT(n16s24, "wgr_n16_s24",     TT, 16, 24, 2)
WGR_VARIANT(n16s28, "wgr_n16_s28",     TT, 16, 28, 2)
WGR_VARIANT(n32s16, "wgr_n32_s16",     TT, 32, 16, 2)
WGR_VARIANT(n32s24, "wgr_n32_s24",     TT, 32, 24, 1)
