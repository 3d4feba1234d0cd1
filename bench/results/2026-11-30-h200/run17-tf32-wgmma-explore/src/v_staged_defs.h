#pragma once
#include "variants.h"
#include "tf32_wgmma_staged.cuh"

template <Layout L, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1) k_s(GemmArgs p) { gemm_wgmma_tf32_staged<L, Tile>(p); }
template <Layout L, class Tile>
void launch_s(const GemmArgs& p, dim3 g, dim3 b, int smem, cudaStream_t s) { k_s<L, Tile><<<g, b, smem, s>>>(p); }

// ID, layout, warpgroups, wgmma N, stages, round
#define S_VARIANT(ID, L, WGS, WN, ST, RND, ...)                                                               \
  using ST_##ID = WgmmaTf32StagedTile<WGS, WN, ST, RND, ##__VA_ARGS__>;                                      \
  static Reg sreg_##ID(Variant{#ID " staged wg" #WGS " n" #WN " s" #ST " rnd" #RND " pf" #__VA_ARGS__, Dt::F32, lay_of(Layout::L), \
                               false, ST_##ID::kBM, ST_##ID::kBN, ST_##ID::kThreads,                          \
                               WgmmaTf32StagedStage<Layout::L, ST_##ID>::kSmemBytes, launch_s<Layout::L, ST_##ID>, \
                               (const void*)k_s<Layout::L, ST_##ID>});

template <Layout L, class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1) k_r(GemmArgs p) { gemm_wgmma_tf32_rs<L, Tile>(p); }
template <Layout L, class Tile>
void launch_r(const GemmArgs& p, dim3 g, dim3 b, int smem, cudaStream_t s) { k_r<L, Tile><<<g, b, smem, s>>>(p); }
#define R_VARIANT(ID, L, WGS, WN, ST, RND, ...)                                                               \
  using RT_##ID = WgmmaTf32StagedTile<WGS, WN, ST, RND, ##__VA_ARGS__>;                                      \
  static Reg rreg_##ID(Variant{#ID " rs+regB wg" #WGS " n" #WN " s" #ST " rnd" #RND " pf" #__VA_ARGS__, Dt::F32, lay_of(Layout::L), \
                               false, RT_##ID::kBM, RT_##ID::kBN, RT_##ID::kThreads,                          \
                               WgmmaTf32RsStage<Layout::L, RT_##ID>::kSmemBytes, launch_r<Layout::L, RT_##ID>, \
                               (const void*)k_r<Layout::L, RT_##ID>});

