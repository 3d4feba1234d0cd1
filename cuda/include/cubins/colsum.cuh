// Column sums over rows in a fixed order (the weight gradients of the normalizations'
// backward passes): each row group adds its rows' terms into fp32 accumulators in shared
// memory, a block writes the sum of its row groups to its rows of an fp32 workspace, and a
// second kernel sums the workspace's partial rows in a fixed order. No atomics: the same
// launch geometry gives the same bits.
//
// Workspace layout: [groups][kAccs][round_up(cols, 4)] fp32, 16-byte aligned: one partial
// row per row range (a block, or a cluster) and accumulated quantity (dw; dw and db).
#pragma once

#include <cstdint>

#include "cubins/dtype.cuh"

namespace cubins {

// The accumulator of one quantity for one row group: column c = 4 * (planes * m + q) + e
// of body chunk m lives in plane q (kVec / 4 planes of float4, so a warp's 16-byte
// accesses to one plane are lane-consecutive: no bank conflicts), the tail after them.
// Body chunks start at column 0 in every row, so each slot has one owner thread.
template <class T>
struct DwAcc {
  static constexpr int kVec = Storage<T>::kVec;
  static constexpr int kPlanes = kVec / 4;
  float4* body;  // [kPlanes][chunks]
  float* tail;   // [kVec]
  int chunks;

  __host__ __device__ static constexpr int floats(int cols) { return (cols / kVec + 1) * kVec; }
  __device__ __forceinline__ static DwAcc at(float* base, int cols) {
    DwAcc a;
    a.chunks = cols / kVec;
    a.body = reinterpret_cast<float4*>(base);
    a.tail = base + a.chunks * kVec;
    return a;
  }
  __device__ __forceinline__ float4& plane(int q, int m) const { return body[q * chunks + m]; }
  __device__ __forceinline__ float& at_col(int c) const {
    if (c >= chunks * kVec) return tail[c - chunks * kVec];
    return reinterpret_cast<float*>(&plane((c % kVec) / 4, c / kVec))[c % 4];
  }
};

// A row group's kAccs accumulators, side by side in shared memory.
template <class T, int kAccs>
struct ColSums {
  DwAcc<T> acc[kAccs];

  __device__ __forceinline__ static ColSums at(float* base, int cols) {
    ColSums s;
#pragma unroll
    for (int j = 0; j < kAccs; ++j) s.acc[j] = DwAcc<T>::at(base + j * DwAcc<T>::floats(cols), cols);
    return s;
  }
  // Adds term v[j][e] of each accumulator j to plane q of body chunk m (16 bytes each).
  __device__ __forceinline__ void add(int q, int m, const float (&v)[kAccs][4]) const {
#pragma unroll
    for (int j = 0; j < kAccs; ++j) {
      float4& slot = acc[j].plane(q, m);
      slot = make_float4(slot.x + v[j][0], slot.y + v[j][1], slot.z + v[j][2], slot.w + v[j][3]);
    }
  }
  // Adds term v[j] of each accumulator j to column c.
  __device__ __forceinline__ void add_col(int c, const float (&v)[kAccs]) const {
#pragma unroll
    for (int j = 0; j < kAccs; ++j) acc[j].at_col(c) += v[j];
  }
};

// The block's sum of its row groups' accumulators of quantity j at span column c, in
// row-group order. A row group's accumulators lie at acc_all + y * kAccs * acc_floats,
// quantity j at + j * acc_floats.
template <class T, int kAccs>
__device__ __forceinline__ float block_column_sum(const float* acc_all, int acc_floats, int span_cols, int j,
                                                  int c) {
  float v = 0.0f;
  for (int yy = 0; yy < static_cast<int>(blockDim.y); ++yy) {
    v += DwAcc<T>::at(const_cast<float*>(acc_all) + (yy * kAccs + j) * acc_floats, span_cols).at_col(c);
  }
  return v;
}

// Where a backward block's column sums go: its partial rows `group * kAccs + j` of the
// workspace, or, where the launch is one row range (partial == nullptr), the outputs
// themselves (as `sum_partial_rows` would write them from that one range's rows: the same
// bits, one launch fewer).
template <class T, int kAccs>
struct ColSumOut {
  float* partial;
  T* out[kAccs];
};

// The block's share of its column sums: columns [first_col, first_col + span_cols)
// (first_col a multiple of kVec). A thread takes a body chunk at a time: its accumulator
// planes (kVec columns) summed over the row groups, stored as one 16-byte chunk of the
// output where it is aligned (else element by element), or as kPlanes float4 of the
// partial row; then the tail columns (and a partial row's padding to a multiple of 4).
template <class T, int kAccs>
__device__ __forceinline__ void write_column_sums(const ColSumOut<T, kAccs>& to, int64_t group, int n, int first_col,
                                                  int span_cols, const float* acc_all, int acc_floats) {
  constexpr int kVec = Storage<T>::kVec;
  constexpr int kPlanes = DwAcc<T>::kPlanes;
  const int block_threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int chunks = span_cols / kVec;
  const int end = to.partial == nullptr ? span_cols : (span_cols + 3) / 4 * 4;
#pragma unroll
  for (int j = 0; j < kAccs; ++j) {
    float4* partial = nullptr;
    if (to.partial != nullptr) {
      partial = reinterpret_cast<float4*>(to.partial) + (group * kAccs + j) * ((n + 3) / 4) + first_col / 4;
    }
    T* out = to.out[j] + first_col;
    const bool out_vec = (reinterpret_cast<uintptr_t>(out) & 15u) == 0;
#pragma unroll 1
    for (int m = tid; m < chunks; m += block_threads) {
      float4 v[kPlanes];
#pragma unroll
      for (int q = 0; q < kPlanes; ++q) v[q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int yy = 0; yy < static_cast<int>(blockDim.y); ++yy) {
        const DwAcc<T> acc = DwAcc<T>::at(const_cast<float*>(acc_all) + (yy * kAccs + j) * acc_floats, span_cols);
#pragma unroll
        for (int q = 0; q < kPlanes; ++q) {
          const float4 a = acc.plane(q, m);
          v[q] = make_float4(v[q].x + a.x, v[q].y + a.y, v[q].z + a.z, v[q].w + a.w);
        }
      }
      if (partial != nullptr) {
#pragma unroll
        for (int q = 0; q < kPlanes; ++q) partial[m * kPlanes + q] = v[q];
        continue;
      }
      float f[kVec];
#pragma unroll
      for (int q = 0; q < kPlanes; ++q) {
        f[4 * q] = v[q].x;
        f[4 * q + 1] = v[q].y;
        f[4 * q + 2] = v[q].z;
        f[4 * q + 3] = v[q].w;
      }
      if (out_vec) {
        store_chunk(out + m * kVec, pack<T>(f));
      } else {
#pragma unroll
        for (int i = 0; i < kVec; ++i) out[m * kVec + i] = from_float<T>(f[i]);
      }
    }
#pragma unroll 1
    for (int c = chunks * kVec + tid; c < end; c += block_threads) {
      const float v = c < span_cols ? block_column_sum<T, kAccs>(acc_all, acc_floats, span_cols, j, c) : 0.0f;
      if (partial != nullptr) {
        reinterpret_cast<float*>(partial)[c] = v;
      } else {
        out[c] = from_float<T>(v);
      }
    }
  }
}

// out_j[c] = sum over b of partial row (b * kAccs + j)[c], j = blockIdx.y (out_0: out, out_1:
// out_second, kAccs <= 2): warp w adds groups
// w, w + kDwWarps, ... in ascending order, then warp 0 adds the warps' sums in warp order.
// Each lane owns 4 consecutive columns; 128 columns per block, kDwWarps * 32 threads.
constexpr int kDwWarps = 16;

template <class T, int kAccs>
__device__ __forceinline__ void sum_partial_rows(const float* __restrict__ partial, T* __restrict__ out,
                                                 T* __restrict__ out_second, uint32_t blocks, uint32_t cols) {
  static_assert(kAccs == 1 || kAccs == 2, "one or two quantities");
  __shared__ float4 sums[kDwWarps][32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int n = static_cast<int>(cols);
  const int quads = (n + 3) / 4;
  const int u = blockIdx.x * 32 + lane;
  const int stride = kAccs * quads;  // floats4 from one group's row to the next
  const float4* column = reinterpret_cast<const float4*>(partial) + u;
  if constexpr (kAccs > 1) column += static_cast<int64_t>(blockIdx.y) * quads;
  auto add = [](float4& s, const float4& v) {
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
  };
  float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (u < quads) {
    int b = warp;
    for (; b + 3 * kDwWarps < static_cast<int>(blocks); b += 4 * kDwWarps) {
      float4 v[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) v[r] = column[static_cast<int64_t>(b + r * kDwWarps) * stride];  // in flight together
#pragma unroll
      for (int r = 0; r < 4; ++r) add(s, v[r]);
    }
    for (; b < static_cast<int>(blocks); b += kDwWarps) add(s, column[static_cast<int64_t>(b) * stride]);
  }
  sums[warp][lane] = s;
  __syncthreads();
  if (warp == 0 && u < quads) {
    float4 t = sums[0][lane];
#pragma unroll
    for (int r = 1; r < kDwWarps; ++r) add(t, sums[r][lane]);
    const float v[4] = {t.x, t.y, t.z, t.w};
    // The output named by a branch: a pointer chosen by a select is held through the loop.
    auto write = [&](T* __restrict__ to) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (4 * u + e < n) to[4 * u + e] = from_float<T>(v[e]);
      }
    };
    if (kAccs == 1 || blockIdx.y == 0) {
      write(out);
    } else {
      write(out_second);
    }
  }
}

}  // namespace cubins
