#pragma once
#include "variants.h"
#include "tf32_wgmma_kernel.cuh"

template <Layout L, class Tile, bool SW, Tf32Src SA, Tf32Src SB>
__global__ void __launch_bounds__(Tile::kThreads, 1) k_t(GemmArgs p) { gemm_wgmma_tf32<L, Tile, SW, SA, SB>(p); }
template <Layout L, class Tile, bool SW, Tf32Src SA, Tf32Src SB>
void launch_t(const GemmArgs& p, dim3 g, dim3 b, int smem, cudaStream_t s) { k_t<L, Tile, SW, SA, SB><<<g, b, smem, s>>>(p); }

#define KM Tf32Src::KMajor
#define TR Tf32Src::Transposed
#define RG Tf32Src::Registers
// ID, layout, warpgroups, wgmma N, stages, round, swap, source of wgmma A, of wgmma B
#define T_VARIANT(ID, L, WGS, WN, ST, RND, SW, SA, SB)                                                          \
  using TT_##ID = WgmmaTf32Tile<WGS, WN, ST, RND>;                                                             \
  using TP_##ID = WgmmaTf32Plan<Layout::L, SW, SA, SB, TT_##ID>;                                               \
  static Reg treg_##ID(Variant{#ID " wg" #WGS " n" #WN " s" #ST " rnd" #RND " sw" #SW " " #SA "/" #SB,         \
                               Dt::F32, lay_of(Layout::L), false, TP_##ID::kRowsC, TP_##ID::kColsC,             \
                               TT_##ID::kThreads, TP_##ID::kSmemBytes, launch_t<Layout::L, TT_##ID, SW, SA, SB>, \
                               (const void*)k_t<Layout::L, TT_##ID, SW, SA, SB>});
