// Storage types and 16-byte chunks: row kernels load and store their storage dtype
// (bf16, fp16, fp32) 16 bytes at a time and compute in fp32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace cubins {

// A chunk is 16 bytes of one row: 8 bf16/fp16 or 4 fp32 elements. It is kept in
// registers in its storage form (4 registers whatever the dtype) between the load and
// the use, so a resident row costs half the registers of its fp32 values for 16-bit types.
using Chunk = uint4;

template <class T>
struct Storage {
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));
};

template <class T>
__device__ __forceinline__ constexpr int kVecOf() {
  return Storage<T>::kVec;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

// Round-trips a value through the storage type (what a store followed by a load yields).
template <class T>
__device__ __forceinline__ float round_to(float v) {
  return to_float(from_float<T>(v));
}

// Chunk <-> fp32 values. Pairs of 16-bit values convert through the packed x2 types.
template <class T>
__device__ __forceinline__ void unpack(const Chunk& c, float (&f)[Storage<T>::kVec]) {
  if constexpr (sizeof(T) == 4) {
    f[0] = __uint_as_float(c.x);
    f[1] = __uint_as_float(c.y);
    f[2] = __uint_as_float(c.z);
    f[3] = __uint_as_float(c.w);
  } else {
    const uint32_t w[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        // bf16 is the top half of an fp32: two 32-bit integer ops, no 16-bit registers.
        f[2 * i] = __uint_as_float(w[i] << 16);
        f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
      } else {
        const float2 p = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
        f[2 * i] = p.x;
        f[2 * i + 1] = p.y;
      }
    }
  }
}

// Element i of a chunk in fp32 (i a compile-time index after unrolling). Converting one
// element at a time where it is used keeps a kernel's live registers to the packed chunks.
template <class T>
__device__ __forceinline__ float element(const Chunk& c, int i) {
  const uint32_t w = i / (kVecOf<T>() / 4) == 0 ? c.x : i / (kVecOf<T>() / 4) == 1 ? c.y : i / (kVecOf<T>() / 4) == 2 ? c.z : c.w;
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(w);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __uint_as_float((i & 1) ? (w & 0xffff0000u) : (w << 16));
  } else {
    return __half2float(__ushort_as_half(static_cast<unsigned short>((i & 1) ? (w >> 16) : (w & 0xffffu))));
  }
}

template <class T>
__device__ __forceinline__ Chunk pack(const float (&f)[Storage<T>::kVec]) {
  Chunk c;
  if constexpr (sizeof(T) == 4) {
    c.x = __float_as_uint(f[0]);
    c.y = __float_as_uint(f[1]);
    c.z = __float_as_uint(f[2]);
    c.w = __float_as_uint(f[3]);
  } else {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 p = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
        w[i] = *reinterpret_cast<const uint32_t*>(&p);
      } else {
        const __half2 p = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
        w[i] = *reinterpret_cast<const uint32_t*>(&p);
      }
    }
    c = make_uint4(w[0], w[1], w[2], w[3]);
  }
  return c;
}

// A chunk at p: one 16-byte access (p must be 16-byte aligned).
template <class T>
__device__ __forceinline__ Chunk load_chunk(const T* p) {
  return *reinterpret_cast<const Chunk*>(p);
}

template <class T>
__device__ __forceinline__ void store_chunk(T* p, const Chunk& v) {
  *reinterpret_cast<Chunk*>(p) = v;
}

}  // namespace cubins
