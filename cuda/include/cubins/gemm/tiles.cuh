// The tile configurations the GEMM tiers are instantiated with. src/ops/gemm/plan.rs holds
// the same table (the selector) and tests/gemm_host.rs checks the two agree.
#pragma once

#include "cubins/arch.cuh"
#include "cubins/gemm/decode_kernel.cuh"
#include "cubins/gemm/fingerprints.cuh"
#include "cubins/gemm/mma_kernel.cuh"
#include "cubins/gemm/pedantic_kernel.cuh"

namespace cubins {
namespace gemm {

// Tensor-core tiles per shared-memory class (kSmSharedKb, cubins/arch.cuh): the rings are
// sized so each tile keeps its residency on the arch (src/ops/gemm/plan.rs `SmemClass`
// holds the same table).
//                              BM   BN  BK  warps  stages  min blocks/SM
template <int kSharedKb>
struct MmaTiles;

// sm_90, sm_100: 228 KB per SM.
template <>
struct MmaTiles<228> {
  using Large = MmaTile<128, 256, 64, 2, 4, 3, 1>;    // 16-bit NN, TN: 8 warps of 64 x 64
  using LargeNt = MmaTile<128, 256, 32, 2, 4, 4, 1>;  // 16-bit NT (BK 64 spills there)
  using Medium = MmaTile<128, 128, 32, 2, 2, 4, 2>;   // 16-bit: 4 warps of 64 x 64
  using Small = MmaTile<64, 64, 64, 2, 2, 3, 3>;      // 16-bit: 4 warps of 32 x 32
  // 16-bit skinny tiles (M x N too small for a wave of the tiles above): k tiles of 128 in
  // a deep ring, so each SM keeps enough weight bytes in flight (bench run41); 96 / 96 /
  // 64 KB, 2 / 2 / 3 blocks per SM.
  using Skinny64x64 = MmaTile<64, 64, 128, 2, 2, 3, 2>;  // 4 warps of 32 x 32
  using Skinny64x32 = MmaTile<64, 32, 128, 2, 2, 4, 2>;  // 4 warps of 32 x 16
  using Skinny32x32 = MmaTile<32, 32, 128, 2, 2, 4, 3>;  // 4 warps of 16 x 16
  using Tf32Wide = MmaTile<128, 256, 32, 2, 4, 3, 1>;    // f32: 8 warps of 64 x 64 (NN, TN)
  using Tf32Large = MmaTile<128, 128, 32, 2, 4, 4, 1>;   // f32: 8 warps of 64 x 32
  using Tf32Small = MmaTile<64, 64, 32, 2, 2, 4, 2>;     // f32: 4 warps of 32 x 32
};

// sm_80: 164 KB per SM. The skinny rings of 96 KB would hold one block per SM; k tiles of
// 64 (48 / 48 / 32 KB) keep 3 / 3 / 4 blocks and as many bytes in flight per SM.
template <>
struct MmaTiles<164> : MmaTiles<228> {
  using Skinny64x64 = MmaTile<64, 64, 64, 2, 2, 3, 2>;
  using Skinny64x32 = MmaTile<64, 32, 64, 2, 2, 4, 2>;
  using Skinny32x32 = MmaTile<32, 32, 64, 2, 2, 4, 3>;
};

// sm_86, sm_89, sm_120: 100 KB per SM (99 KB per block). The 128 x 256 tiles take k tiles
// of 32 (96 KB, one block per SM, as their registers allow anyway); the 128 x 128 ring drops
// to 3 stages (48 KB, 2 blocks); the skinny rings as on sm_80 (2 / 2 / 3 blocks); the f32
// tiles take k tiles of 16 in 3-4 stages (75 / 68 / 35 KB: 1 / 1 / 2 blocks).
template <>
struct MmaTiles<100> : MmaTiles<164> {
  using Large = MmaTile<128, 256, 32, 2, 4, 4, 1>;
  using Medium = MmaTile<128, 128, 32, 2, 2, 3, 2>;
  using Tf32Wide = MmaTile<128, 256, 16, 2, 4, 3, 1>;
  using Tf32Large = MmaTile<128, 128, 16, 2, 4, 4, 1>;
  using Tf32Small = MmaTile<64, 64, 16, 2, 2, 4, 2>;
};

// The tiles of the arch being compiled.
using Tiles = MmaTiles<kSmSharedKb>;
using TileLarge = Tiles::Large;
using TileLargeNt = Tiles::LargeNt;
using TileMedium = Tiles::Medium;
using TileSmall = Tiles::Small;
using TileSkinny64x64 = Tiles::Skinny64x64;
using TileSkinny64x32 = Tiles::Skinny64x32;
using TileSkinny32x32 = Tiles::Skinny32x32;
using TileTf32Wide = Tiles::Tf32Wide;
using TileTf32Large = Tiles::Tf32Large;
using TileTf32Small = Tiles::Tf32Small;

//                              BM   BN  BK  TM TN  min blocks/SM
using TileFmaLarge = FmaTile<128, 128, 8, 8, 8, 2>;
using TileFmaSmall = FmaTile<64, 64, 16, 4, 4, 4>;

// Decode (M <= 16). Load: 0 ld.global.cs, 1 ld.global.nc.L1::no_allocate.L2::256B.
//                               cols warps unroll load stagger-groups double-buffer min blocks/SM
using DecodeNtN32W8 = DecodeTile<32, 8, 2, 1, 128, 0, 2>;   // NT: N / 32 > #SMs
using DecodeNnN32W8 = DecodeTile<32, 8, 2, 1, 0, 0, 2>;     // NN: N / 32 > #SMs
using DecodeNtN16W8 = DecodeTile<16, 8, 4, 1, 128, 0, 2>;   // NT
using DecodeNnN32W24 = DecodeTile<32, 24, 2, 1, 0, 0, 1>;   // NN, M <= 8
using DecodeNnN32W16 = DecodeTile<32, 16, 1, 1, 32, 1, 1>;  // NN, M > 8

}  // namespace gemm
}  // namespace cubins

