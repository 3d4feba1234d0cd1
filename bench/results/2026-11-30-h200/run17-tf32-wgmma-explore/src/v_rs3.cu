#include "v_staged_defs.h"
R_VARIANT(rb3_nt_r, NT, 3, 128, 5, true)
R_VARIANT(rb3_nn_r, NN, 3, 128, 5, true)
R_VARIANT(rb3_tn_r, TN, 3, 128, 5, true)
R_VARIANT(rb3_tn_t, TN, 3, 128, 5, false)
