#pragma once
#include "common.h"
#include "cubins/gemm/mma_kernel.cuh"
#include "cubins/gemm/tiles.cuh"
using namespace cubins::gemm;

template <class T, Layout L, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks) k_mma(GemmArgs p) { gemm_mma<T, L, Tile>(p); }

template <class T, Layout L, class Tile>
void launch_mma(const GemmArgs& p, dim3 g, dim3 b, int smem, cudaStream_t s) { k_mma<T, L, Tile><<<g, b, smem, s>>>(p); }

template <class T> constexpr Dt dt_of();
template <> constexpr Dt dt_of<__nv_bfloat16>() { return Dt::BF16; }
template <> constexpr Dt dt_of<__half>() { return Dt::FP16; }
template <> constexpr Dt dt_of<float>() { return Dt::F32; }
constexpr Lay lay_of(Layout l) { return l == Layout::NN ? Lay::NN : l == Layout::TN ? Lay::TN : Lay::NT; }

#define MMA_VARIANT(ID, T, L, BM, BN, BK, WM, WN, ST, MB)                                                   \
  using Tile_##ID = MmaTile<BM, BN, BK, WM, WN, ST, MB>;                                                     \
  static Reg reg_##ID(Variant{#ID " " #T " " #L " " #BM "x" #BN "x" #BK " w" #WM "x" #WN " s" #ST " mb" #MB, \
                              dt_of<T>(), lay_of(Layout::L), false, BM, BN, Tile_##ID::kThreads,               \
                              MmaStage<T, Layout::L, Tile_##ID>::kSmemBytes, launch_mma<T, Layout::L, Tile_##ID>, \
                              (const void*)k_mma<T, Layout::L, Tile_##ID>});
#define MMA_VARIANT_FB(ID, T, L, BM, BN, BK, WM, WN, ST, MB, FB)                                            \
  using Tile_##ID = MmaTile<BM, BN, BK, WM, WN, ST, MB, FB>;                                                 \
  static Reg reg_##ID(Variant{#ID " " #BM "x" #BN "x" #BK " w" #WM "x" #WN " s" #ST " mb" #MB " fb" #FB,     \
                              dt_of<T>(), lay_of(Layout::L), false, BM, BN, Tile_##ID::kThreads,               \
                              MmaStage<T, Layout::L, Tile_##ID>::kSmemBytes, launch_mma<T, Layout::L, Tile_##ID>, \
                              (const void*)k_mma<T, Layout::L, Tile_##ID>});
