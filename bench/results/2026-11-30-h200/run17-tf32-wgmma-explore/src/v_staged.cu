#include "v_staged_defs.h"
S_VARIANT(st_nt_r, NT, 2, 256, 4, true)
S_VARIANT(st_nt_t, NT, 2, 256, 4, false)
S_VARIANT(st_nn_r, NN, 2, 256, 4, true)
S_VARIANT(st_nn_t, NN, 2, 256, 4, false)
S_VARIANT(st_tn_r, TN, 2, 256, 4, true)
S_VARIANT(st_tn_t, TN, 2, 256, 4, false)
