// The crate's mma.sync GEMM kernel (cubins/gemm/mma_kernel.cuh) as explorer variants: a
// launcher at any MmaTile and MMA_VARIANT(id, name, BM, BN, BK, WM, WN, ST, MB), which registers
// NN and NT instances of element type TT (set by the including file from DT).
#pragma once
#include "common.h"
#include "cubins/gemm/mma_kernel.cuh"
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
