// Shared pieces of the decode variants: cache-hinted loads, fragment builders, the
// deterministic (warp order, then cluster rank order) reduction and the epilogue.
#pragma once
#include <cstdint>
#include <cooperative_groups.h>
#include "common.h"
#include "cubins/gemm/decode_kernel.cuh"

namespace dec {
using namespace cubins::gemm;
namespace cg = cooperative_groups;

// Weight-load flavours. 0: ld.global.cs (the crate's __ldcs). 1: .nc, L1 no-allocate, L2 256-byte
// prefetch. 2: .nc, L1 no-allocate, L2 evict-first policy. 3: 1 + 2.
__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
// Predicated loads: the destination is zeroed and the load issued under `ok`, in one asm
// (no select temporaries). LD: 0 ld.global.cs, 1 .nc L1::no_allocate L2::256B, 2 .nc
// L1::no_allocate + L2 evict-first policy, 3 = 1 + 2, 9 = ld.global.nc (plain __ldg, for A).
#define DEC_LD_QUAL_0 "ld.global.cs"
#define DEC_LD_QUAL_1 "ld.global.nc.L1::no_allocate.L2::256B"
#define DEC_LD_QUAL_2 "ld.global.nc.L1::no_allocate.L2::cache_hint"
#define DEC_LD_QUAL_3 "ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B"
#define DEC_LD_QUAL_9 "ld.global.nc"
#define DEC_LD16(Q, POL_OPERAND)                                                                           \
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n" \
               " mov.b32 %3, 0;\n @p " Q ".v4.u32 {%0,%1,%2,%3}, [%4]" POL_OPERAND ";\n}\n"                  \
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)                                                 \
               : "l"(p), "r"((int)ok), "l"(pol))
#define DEC_LD8(Q, POL_OPERAND)                                                                           \
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n"               \
               " @p " Q ".v2.u32 {%0,%1}, [%2]" POL_OPERAND ";\n}\n"                                        \
               : "=r"(v.x), "=r"(v.y)                                                                       \
               : "l"(p), "r"((int)ok), "l"(pol))
template <int LD>
__device__ __forceinline__ uint4 ldw16(const void* p, bool ok, uint64_t pol) {
  uint4 v;
  if constexpr (LD == 0) DEC_LD16(DEC_LD_QUAL_0, "");
  else if constexpr (LD == 1) DEC_LD16(DEC_LD_QUAL_1, "");
  else if constexpr (LD == 2) DEC_LD16(DEC_LD_QUAL_2, ", %6");
  else if constexpr (LD == 3) DEC_LD16(DEC_LD_QUAL_3, ", %6");
  else DEC_LD16(DEC_LD_QUAL_9, "");
  return v;
}
template <int LD>
__device__ __forceinline__ uint2 ldw8(const void* p, bool ok, uint64_t pol) {
  uint2 v;
  if constexpr (LD == 0) DEC_LD8(DEC_LD_QUAL_0, "");
  else if constexpr (LD == 1) DEC_LD8(DEC_LD_QUAL_1, "");
  else if constexpr (LD == 2) DEC_LD8(DEC_LD_QUAL_2, ", %4");
  else if constexpr (LD == 3) DEC_LD8(DEC_LD_QUAL_3, ", %4");
  else DEC_LD8(DEC_LD_QUAL_9, "");
  return v;
}

// Accumulator v = (i * MT + mt) * 4 + r of lane ln -> (row m of C, column offset in the block).
// mma row of the accumulator: g + 8 (r / 2); n8 column 2t + r % 2 is the row m of C.
// NAT (natural): column 16 i + row (NT, and NN read through ldmatrix.trans). Else (NN with
// byte-permuted register loads): lane group g holds columns CPL g .. CPL g + CPL - 1
// (CPL = 2 NI); tile i takes columns CPL (row % 8) + 2 i + row / 8.
template <bool NAT, int NI>
__device__ __forceinline__ int acc_column(int i, int mma_row) {
  return NAT ? 16 * i + mma_row : 2 * NI * (mma_row & 7) + 2 * i + (mma_row >> 3);
}

// Block-level reduction and epilogue. `red` holds WARPS x NACC x 32 floats (the warps'
// accumulators, red[w][v][lane]); warp w = kw * WC + wc works on column group wc (16 NI
// columns each) and k slot kw. For each column group the KW = WARPS / WC k slots are summed
// in order 0..KW-1, then (clusters) CTAs in rank order 0..CL-1. Deterministic.
template <class T, bool NAT, int NI, int MT, int WARPS, int CL, int WC = 1>
__device__ __forceinline__ void reduce_store(const GemmArgs& p, float* red, int tid, int nthreads, int n_block) {
  constexpr int NACC = NI * MT * 4;
  constexpr int E = NACC * 32, ET = WC * E, KW = WARPS / WC;
  const EpilogueArgs e = EpilogueArgs::from(p);
  const bool out_f32 = (p.flags & CUBINS_GEMM_OUT_F32) != 0;
  auto store = [&](int idx, float sum) {
    const int wc = idx / E, v = (idx % E) >> 5, ln = idx & 31;
    const int i = v / (MT * 4), mt = (v / 4) % MT, r = v & 3;
    const int mma_row = (ln >> 2) + 8 * (r >> 1);
    const int m = 8 * mt + 2 * (ln & 3) + (r & 1);
    const int n = n_block + 16 * NI * wc + acc_column<NAT, NI>(i, mma_row);
    if (out_f32) store_one(e, reinterpret_cast<float*>(p.c), m, n, sum);
    else store_one(e, reinterpret_cast<T*>(p.c), m, n, sum);
  };
  auto row_of = [&](int idx) {
    const int v = (idx % E) >> 5, ln = idx & 31;
    return 8 * ((v / 4) % MT) + 2 * (ln & 3) + (v & 1);
  };
  auto local_sum = [&](int idx) {
    const int wc = idx / E, ev = idx % E;
    float sum = red[wc * E + ev];
#pragma unroll
    for (int kw = 1; kw < KW; ++kw) sum = __fadd_rn(sum, red[(kw * WC + wc) * E + ev]);
    return sum;
  };
  if constexpr (CL == 1) {
    for (int idx = tid; idx < ET; idx += nthreads) {
      if (row_of(idx) >= p.m) continue;
      store(idx, local_sum(idx));
    }
  } else {
    for (int idx = tid; idx < ET; idx += nthreads) {
      if (row_of(idx) >= p.m) continue;
      red[idx] = local_sum(idx);  // slot (kw 0, wc): only this thread touches entry idx
    }
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const int rank = static_cast<int>(cluster.block_rank());
    constexpr int PER = (ET + CL - 1) / CL;
    for (int idx = rank * PER + tid; idx < (rank + 1) * PER && idx < ET; idx += nthreads) {
      if (row_of(idx) >= p.m) continue;
      float sum = cluster.map_shared_rank(red, 0)[idx];
#pragma unroll
      for (int q = 1; q < CL; ++q) sum = __fadd_rn(sum, cluster.map_shared_rank(red, q)[idx]);
      store(idx, sum);
    }
    cluster.sync();  // the other CTAs' shared memory must outlive the reads
  }
}

// mma of one 32-k step: half h feeds k-slots from physical 8t + 4h + {0..3} (see decode_kernel.cuh).
template <class T, int NI, int MT>
__device__ __forceinline__ void step_mma(float (&acc)[NI][MT][4], const uint32_t (&aop)[2][NI][4], const uint4 (&a)[MT]) {
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const uint32_t b_ops[2] = {word(a[mt], 2 * h), word(a[mt], 2 * h + 1)};
#pragma unroll
      for (int i = 0; i < NI; ++i) MmaTraits<T>::mma(acc[i][mt], aop[h][i], b_ops);
    }
}

}  // namespace dec
