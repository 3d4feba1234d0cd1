// The crate's mma.sync GEMM kernel (cubins/gemm/mma_kernel.cuh) at tiles for skinny problems
// (M = 32 .. 128, N = K = 4096 / 8192): the crate's 64 x 64 x 64 three-stage tile against
// narrower N tiles (more blocks, so every SM streams weights) and deeper rings (more bytes
// in flight per SM).
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
MMA_VARIANT(t0,  "crate_64x64x64s3",   64,  64, 64, 2, 2, 3, 3)
MMA_VARIANT(t1,  "m64x64x64s6",        64,  64, 64, 2, 2, 6, 2)
MMA_VARIANT(t2,  "m64x32x64s8",        64,  32, 64, 2, 2, 8, 2)
MMA_VARIANT(t3,  "m64x32x64s8w41",     64,  32, 64, 4, 1, 8, 2)
MMA_VARIANT(t4,  "m64x32x128s4",       64,  32, 128, 2, 2, 4, 2)
MMA_VARIANT(t5,  "m64x16x64s8w41",     64,  16, 64, 4, 1, 8, 2)
MMA_VARIANT(t6,  "m128x32x64s6w41",    128, 32, 64, 4, 1, 6, 1)
MMA_VARIANT(t7,  "m32x64x64s8",        32,  64, 64, 2, 2, 8, 2)
MMA_VARIANT(t8,  "m64x32x64s12",       64,  32, 64, 2, 2, 12, 1)
