#include "variants.h"
MMA_VARIANT(mma_bnn, __nv_bfloat16, NN, 128, 256, 64, 2, 4, 3, 1)
MMA_VARIANT(mma_btn, __nv_bfloat16, TN, 128, 256, 64, 2, 4, 3, 1)
MMA_VARIANT(mma_bnt, __nv_bfloat16, NT, 128, 256, 32, 2, 4, 4, 1)
