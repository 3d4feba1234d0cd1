#include "tvariants.h"
T_VARIANT(nt_t, NT, 2, 256, 4, false, false, KM, KM)
T_VARIANT(nt_r, NT, 2, 256, 4, true, false, KM, KM)
T_VARIANT(nt_t192, NT, 2, 192, 5, false, false, KM, KM)
