#include "variants.h"
MMA_VARIANT(t_nn_a, float, NN, 128, 128, 32, 2, 4, 4, 1)
MMA_VARIANT(t_nn_b3, float, NN, 128, 256, 32, 2, 4, 3, 1)
MMA_VARIANT(t_nn_b4, float, NN, 128, 256, 32, 2, 4, 4, 1)
MMA_VARIANT(t_nt_b3, float, NT, 128, 256, 32, 2, 4, 3, 1)
MMA_VARIANT(t_tn_b3, float, TN, 128, 256, 32, 2, 4, 3, 1)
MMA_VARIANT(t_tn_a, float, TN, 128, 128, 32, 2, 4, 4, 1)
