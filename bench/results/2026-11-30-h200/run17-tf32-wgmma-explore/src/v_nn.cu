#include "tvariants.h"
T_VARIANT(nn_rs_t, NN, 2, 256, 4, false, true, RG, KM)
T_VARIANT(nn_rs_r, NN, 2, 256, 4, true, true, RG, KM)
T_VARIANT(nn_tr_t, NN, 2, 256, 4, false, false, KM, TR)
T_VARIANT(nn_tr_r, NN, 2, 256, 4, true, false, KM, TR)
