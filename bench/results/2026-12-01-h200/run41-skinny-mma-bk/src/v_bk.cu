// The crate's mma.sync GEMM kernel (cubins/gemm/mma_kernel.cuh) at tiles for skinny problems
// (M = 32 .. 128, N = K = 4096 / 8192), second round: k tiles of 128 (run40's best) at
// more ring depths, tile widths and blocks per SM.
#include "common.h"
#include "cubins/gemm/mma_kernel.cuh"
#if DT == 0
#define TT __nv_bfloat16
#else
#define TT __half
#endif

namespace skinny {
using namespace cubins::gemm;

template <class T, Layout L, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks) k_mma(GemmArgs p) {
  gemm_mma<T, L, Tile>(p);
}

template <class T, Layout L, class Tile>
void launch(const GemmArgs& p, dim3, dim3, cudaStream_t s) {
  constexpr int smem = MmaStage<T, L, Tile>::kSmemBytes;
  static bool init = false;
  if (!init) {
    cudaFuncSetAttribute(k_mma<T, L, Tile>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    init = true;
  }
  const int grid = ((p.m + Tile::kBM - 1) / Tile::kBM) * ((p.n + Tile::kBN - 1) / Tile::kBN);
  k_mma<T, L, Tile><<<grid, Tile::kThreads, smem, s>>>(p);
}
}  // namespace skinny

#define MMA_ONE(ID, NAME, L, BM, BN, BK, WM, WN, ST, MB)                                                    \
  using tile_##ID = cubins::gemm::MmaTile<BM, BN, BK, WM, WN, ST, MB>;                                     \
  static Reg reg_##ID(Variant{NAME, dt_of<TT>(), cubins::gemm::Layout::L == cubins::gemm::Layout::NT ? Lay::NT : Lay::NN, \
                              BN, 1, WM * WN * 32, skinny::launch<TT, cubins::gemm::Layout::L, tile_##ID>, nullptr, true});
#define MMA_VARIANT(ID, NAME, BM, BN, BK, WM, WN, ST, MB) \
  MMA_ONE(ID##_nn, NAME, NN, BM, BN, BK, WM, WN, ST, MB)  \
  MMA_ONE(ID##_nt, NAME, NT, BM, BN, BK, WM, WN, ST, MB)

//          id    name                 BM   BN  BK  WM WN ST MB
MMA_VARIANT(r0,  "m64x32x128s4",       64,  32, 128, 2, 2, 4, 2)
MMA_VARIANT(r1,  "m64x32x128s5",       64,  32, 128, 2, 2, 5, 1)
MMA_VARIANT(r2,  "m64x64x128s3",       64,  64, 128, 2, 2, 3, 2)
MMA_VARIANT(r3,  "m64x32x256s3",       64,  32, 256, 2, 2, 3, 1)
MMA_VARIANT(r4,  "m32x64x128s4",       32,  64, 128, 2, 2, 4, 2)
MMA_VARIANT(r5,  "m64x32x128s3",       64,  32, 128, 2, 2, 3, 3)
MMA_VARIANT(r6,  "m64x64x64s6",        64,  64, 64, 2, 2, 6, 2)
MMA_VARIANT(r7,  "m32x32x128s4",       32,  32, 128, 2, 2, 4, 3)
MMA_VARIANT(r8,  "crate_64x64x64s3",   64,  64, 64, 2, 2, 3, 3)
