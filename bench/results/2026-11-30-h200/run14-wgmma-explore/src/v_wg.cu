#include "variants.h"
#include "cubins/gemm/wgmma_kernel.cuh"

#ifndef WGV
#define WGV 0
#endif

template <class T, Layout L, class Tile, int V>
__global__ void __launch_bounds__(Tile::kThreads, 1) k_wg(GemmArgs p) { gemm_wgmma<T, L, Tile>(p); }
template <class T, Layout L, class Tile, int V>
void launch_wg(const GemmArgs& p, dim3 g, dim3 b, int smem, cudaStream_t s) { k_wg<T, L, Tile, V><<<g, b, smem, s>>>(p); }

#define WG_VARIANT(ID, T, L, WGS, BN, ST)                                                                      \
  using WTile_##ID = WgmmaTile<WGS, BN, ST>;                                                                  \
  static Reg wreg_##ID(Variant{#ID " wgmma " #T " " #L " wg" #WGS " bn" #BN " s" #ST " v" WGV_NAME,            \
                               dt_of<T>(), lay_of(Layout::L), false, 64 * WGS, BN, WTile_##ID::kThreads,        \
                               WgmmaStage<T, Layout::L, WTile_##ID>::kSmemBytes, launch_wg<T, Layout::L, WTile_##ID, WGV>, \
                               (const void*)k_wg<T, Layout::L, WTile_##ID, WGV>});
#define STR2(x) #x
#define STR(x) STR2(x)
#define WGV_NAME STR(WGV)

#define ALL(P, ST)                                   \
  WG_VARIANT(P##bnn##ST, __nv_bfloat16, NN, 2, 256, ST) \
  WG_VARIANT(P##btn##ST, __nv_bfloat16, TN, 2, 256, ST) \
  WG_VARIANT(P##bnt##ST, __nv_bfloat16, NT, 2, 256, ST) \
  WG_VARIANT(P##hnn##ST, __half, NN, 2, 256, ST)        \
  WG_VARIANT(P##htn##ST, __half, TN, 2, 256, ST)        \
  WG_VARIANT(P##hnt##ST, __half, NT, 2, 256, ST)

#if WGV == 0
ALL(v0, 4)
ALL(v0, 3)
#else
ALL(v1, 4)
#endif
