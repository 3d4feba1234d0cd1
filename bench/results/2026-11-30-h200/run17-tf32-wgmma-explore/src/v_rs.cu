#include "v_staged_defs.h"
R_VARIANT(rb_nt_r, NT, 2, 256, 4, true)
R_VARIANT(rb_nn_r, NN, 2, 256, 4, true)
R_VARIANT(rb_tn_r, TN, 2, 256, 4, true)
R_VARIANT(rb_tn_t, TN, 2, 256, 4, false)
