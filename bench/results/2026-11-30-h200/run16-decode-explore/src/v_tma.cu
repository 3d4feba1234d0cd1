#include "dec_tma.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif
#define NT_ cubins::gemm::Layout::NT
#define NN_ cubins::gemm::Layout::NN
//          id   name                         T   L    NI CW ST KS   CL EF
TMA_VARIANT(t1, "t32_s4k256_c4",              TT, NT_, 2, 4, 4, 256, 1, false)
TMA_VARIANT(t2, "t32_s6k256_c4",              TT, NT_, 2, 4, 6, 256, 1, false)
TMA_VARIANT(t3, "t32_s4k256_c4_cl2",          TT, NT_, 2, 4, 4, 256, 2, false)
TMA_VARIANT(t4, "t32_s4k256_c4_cl2_ef",       TT, NT_, 2, 4, 4, 256, 2, true)
TMA_VARIANT(t5, "t32_s3k128_c4_cl4",          TT, NT_, 2, 4, 3, 128, 4, false)
TMA_VARIANT(t6, "t64_s4k128_c4_cl4",          TT, NT_, 4, 4, 4, 128, 4, false)
TMA_VARIANT(t7, "t64_s4k128_c4_cl2",          TT, NN_, 4, 4, 4, 128, 2, false)
TMA_VARIANT(t8, "t64_s4k128_c4_cl4",          TT, NN_, 4, 4, 4, 128, 4, false)
TMA_VARIANT(t9, "t64_s6k128_c4_cl2",          TT, NN_, 4, 4, 6, 128, 2, false)
TMA_VARIANT(t10, "t64_s3k128_c4_cl4_ef",      TT, NN_, 4, 4, 3, 128, 4, true)
