#include "tvariants.h"
T_VARIANT(tn_rs_t, TN, 2, 256, 4, false, false, RG, TR)
T_VARIANT(tn_rs_r, TN, 2, 256, 4, true, false, RG, TR)
