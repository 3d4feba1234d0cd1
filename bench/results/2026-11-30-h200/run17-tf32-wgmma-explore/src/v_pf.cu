#include "v_staged_defs.h"
S_VARIANT(stp_nt_r, NT, 2, 256, 4, true, true)
S_VARIANT(stp_nn_r, NN, 2, 256, 4, true, true)
S_VARIANT(stp_tn_r, TN, 2, 256, 4, true, true)
S_VARIANT(stp_tn_t, TN, 2, 256, 4, false, true)
R_VARIANT(rbp_nt_r, NT, 2, 256, 4, true, true)
R_VARIANT(rbp_nn_r, NN, 2, 256, 4, true, true)
R_VARIANT(rbp_tn_r, TN, 2, 256, 4, true, true)
R_VARIANT(rb3p_tn_t, TN, 3, 128, 5, false, true)
