// Deterministic reductions over the threads of a row (see rows.cuh for the geometry).
// Every thread of a row takes part in its row's reduction, including threads of rows
// past the end. A row that spans warps spans the whole block (row_reduce: its barriers are
// reached by every thread of the block), or is one of a block's row groups, each behind a
// named barrier of its own (row_group_reduce).
#pragma once

#include <cstdint>

namespace cubins {

struct Sum {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
  __device__ __forceinline__ float2 operator()(float2 a, float2 b) const { return make_float2(a.x + b.x, a.y + b.y); }
  __device__ __forceinline__ float3 operator()(float3 a, float3 b) const {
    return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);
  }
};

struct Max {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ __forceinline__ float shfl_xor(unsigned mask, float v, int offset) {
  return __shfl_xor_sync(mask, v, offset);
}
__device__ __forceinline__ float2 shfl_xor(unsigned mask, float2 v, int offset) {
  return make_float2(__shfl_xor_sync(mask, v.x, offset), __shfl_xor_sync(mask, v.y, offset));
}
__device__ __forceinline__ float3 shfl_xor(unsigned mask, float3 v, int offset) {
  return make_float3(__shfl_xor_sync(mask, v.x, offset), __shfl_xor_sync(mask, v.y, offset),
                     __shfl_xor_sync(mask, v.z, offset));
}

// The lanes of this thread's group of `width` consecutive lanes (a power of two <= 32).
// Shuffles name only the group, so groups of one warp (rows) may take different
// branches around a reduction.
__device__ __forceinline__ unsigned group_mask(int width) {
  if (width >= 32) return 0xffffffffu;
  const unsigned lane = (threadIdx.y * blockDim.x + threadIdx.x) & 31u;
  return ((1u << width) - 1u) << (lane & ~static_cast<unsigned>(width - 1));
}

// Butterfly over the group. Each step combines a lane with its xor partner; with a
// commutative op both partners compute the same value, so every lane of the group ends
// with the same bits, in an order fixed by the geometry.
template <class V, class Op>
__device__ __forceinline__ V warp_reduce(V v, Op op, int width) {
  const unsigned mask = group_mask(width);
  for (int offset = width >> 1; offset > 0; offset >>= 1) v = op(v, shfl_xor(mask, v, offset));
  return v;
}

// Reduces v over the row's warps through `scratch` (this row group's slots), with
// `sync()` as the barrier of the row's threads.
template <class V, class Op, class Sync>
__device__ __forceinline__ V warps_reduce(V v, Op op, V identity, V* scratch, Sync&& sync) {
  const int threads = blockDim.x;
  v = warp_reduce(v, op, 32);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) scratch[warp] = v;
  sync();
  v = lane < (threads >> 5) ? scratch[lane] : identity;
  v = warp_reduce(v, op, 32);
  sync();  // scratch may be reused by the next reduction
  return v;
}

// Reduces v over the threads of a row; every thread of the row gets the result. When the
// row spans warps, the call must be block-uniform (it holds barriers).
// `scratch` is shared memory for 32 values; it is free again when this returns.
template <class V, class Op>
__device__ __forceinline__ V row_reduce(V v, Op op, V identity, V* scratch) {
  const int threads = blockDim.x;
  if (threads <= 32) return warp_reduce(v, op, threads);
  return warps_reduce(v, op, identity, scratch, [] { __syncthreads(); });
}

// Named barriers a block's row groups may take, one each: 1 .. 15 (0 is __syncthreads').
// The id is a register (a chain of immediates spills the sm_120 LayerNorm backward f32 at
// its 168 registers), so a kernel counts all 16 barriers, which costs occupancy from sm_90
// on: two a block slot, 4 blocks an SM on sm_90 and sm_100. sm_120 has one a slot, where 16
// would leave one block an SM, so its build keeps the block's barriers (the host's
// `named_barriers`).
constexpr int kNamedRowGroups = 15;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 1200
constexpr bool kNamedBarriers = false;
#else
constexpr bool kNamedBarriers = true;
#endif

// Whether the row groups of this block span warps and each reduces behind its own named
// barrier (row_group_reduce), so one group's loads overlap another's reduction as separate
// blocks' would. A block of more groups steps them together through the block's barrier.
__device__ __forceinline__ bool row_groups_step_apart() {
  return kNamedBarriers && blockDim.x > 32 && blockDim.y > 1 && blockDim.y <= kNamedRowGroups;
}

// row_reduce for the backward norms' packed row groups (several to a block, blockDim.y):
// a row that spans warps waits only for its own threads where row_groups_step_apart().
// Each group's call must be uniform over the group. `scratch`: row_group_scratch's slots.
template <class V, class Op>
__device__ __forceinline__ V row_group_reduce(V v, Op op, V identity, V* scratch) {
  const int threads = blockDim.x;
  if (threads <= 32) return warp_reduce(v, op, threads);
  if (!row_groups_step_apart()) return warps_reduce(v, op, identity, scratch, [] { __syncthreads(); });
  const unsigned barrier = 1u + threadIdx.y;
  return warps_reduce(v, op, identity, scratch,
                      [&] { asm volatile("bar.sync %0, %1;" ::"r"(barrier), "r"(threads) : "memory"); });
}

// A row group's share of a block's 32-slot reduction scratch: its warps' slots, where a
// block holds several row groups that span warps (the backward norms' packed row groups; a
// block has at most 32 warps). row_reduce indexes the slots it is given by warp of the row.
template <class V>
__device__ __forceinline__ V* row_group_scratch(V* scratch) {
  return scratch + threadIdx.y * (blockDim.x >> 5);
}

}  // namespace cubins
