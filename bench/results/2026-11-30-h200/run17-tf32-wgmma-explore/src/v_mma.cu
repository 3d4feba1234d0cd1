#include "variants.h"
// The existing TF32 tier (mma.sync m16n8k8, cvt.rna operands) for reference.
MMA_VARIANT(mma_nn, float, NN, 128, 256, 32, 2, 4, 3, 1)
MMA_VARIANT(mma_tn, float, TN, 128, 256, 32, 2, 4, 3, 1)
MMA_VARIANT(mma_nt, float, NT, 128, 128, 32, 2, 4, 4, 1)
