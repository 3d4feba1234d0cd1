// The tile configurations the GEMM tiers are instantiated with. src/ops/gemm.rs holds the
// same table (the selector) and tests/gemm_host.rs checks the two agree.
#pragma once

#include "cubins/gemm/decode_kernel.cuh"
#include "cubins/gemm/fingerprints.cuh"
#include "cubins/gemm/mma_kernel.cuh"
#include "cubins/gemm/pedantic_kernel.cuh"

namespace cubins {
namespace gemm {

//                       BM   BN  BK  warps  stages  min blocks/SM
using TileLarge = MmaTile<128, 256, 64, 2, 4, 3, 1>;   // 16-bit NN, TN: 8 warps of 64 x 64
using TileLargeNt = MmaTile<128, 256, 32, 2, 4, 4, 1>; // 16-bit NT (BK 64 spills there)
using TileMedium = MmaTile<128, 128, 32, 2, 2, 4, 2>;  // 16-bit: 4 warps of 64 x 64
using TileSmall = MmaTile<64, 64, 64, 2, 2, 3, 3>;     // 16-bit: 4 warps of 32 x 32
// 16-bit skinny tiles (M x N too small for a wave of the tiles above): k tiles of 128 in a
// deep ring, so each SM keeps enough weight bytes in flight (bench run41).
using TileSkinny64x64 = MmaTile<64, 64, 128, 2, 2, 3, 2>;  // 4 warps of 32 x 32
using TileSkinny64x32 = MmaTile<64, 32, 128, 2, 2, 4, 2>;  // 4 warps of 32 x 16
using TileSkinny32x32 = MmaTile<32, 32, 128, 2, 2, 4, 3>;  // 4 warps of 16 x 16
using TileTf32Wide = MmaTile<128, 256, 32, 2, 4, 3, 1>;   // f32: 8 warps of 64 x 64 (NN, TN)
using TileTf32Large = MmaTile<128, 128, 32, 2, 4, 4, 1>;  // f32: 8 warps of 64 x 32
using TileTf32Small = MmaTile<64, 64, 32, 2, 2, 4, 2>;    // f32: 4 warps of 32 x 32

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

