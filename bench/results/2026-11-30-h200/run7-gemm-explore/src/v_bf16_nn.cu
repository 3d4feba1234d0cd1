#include "variants.h"
MMA_VARIANT(nn_b, __nv_bfloat16, NN, 128, 256, 64, 2, 4, 3, 1)
MMA_VARIANT(nn_i, __nv_bfloat16, NN, 128, 256, 64, 4, 4, 3, 1)
MMA_VARIANT(nn_j, __nv_bfloat16, NN, 128, 128, 64, 4, 2, 3, 2)
MMA_VARIANT(nn_k, __nv_bfloat16, NN, 256, 128, 64, 4, 4, 3, 1)
MMA_VARIANT(nn_l, __nv_bfloat16, NN, 128, 256, 32, 4, 4, 4, 1)
MMA_VARIANT(nn_m, __nv_bfloat16, NN, 128, 128, 32, 2, 4, 4, 2)
