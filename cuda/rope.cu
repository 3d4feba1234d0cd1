// Rotary position embedding, in place on q [tokens, q_heads, head_dim] and
// k [tokens, k_heads, head_dim] (row-major, contiguous), with cos and sin tables
// [tokens, rotary_dim / 2] in the storage dtype. The first rotary_dim elements of each head
// rotate (partial rotary embedding when rotary_dim < head_dim; the rest are untouched). For
// pair p of a head (p < rotary_dim / 2):
//   a' = a * cos[t][p] - b * sin[t][p]
//   b' = b * cos[t][p] + a * sin[t][p]
// where (a, b) is (x[p], x[p + rotary_dim / 2]) for the NeoX pairing (rotate halves) and
// (x[2p], x[2p + 1]) for the GPT-J pairing (interleaved pairs).
// Storage bf16, fp16 or fp32; all arithmetic in fp32.
//
// A block per token and head group: threadIdx.x walks the head's pair chunks, threadIdx.y
// the heads (q heads first, then k heads) of its group, blockIdx.y the groups (so a few
// tokens still spread over the GPU); each thread loads its cos/sin chunk once per token and
// applies it to every head it visits. 16-byte accesses when the launch's vector flag says
// every row is aligned for them (the op checks: head_dim, rotary_dim and the base
// addresses); otherwise element accesses.
#include "cubins/common.cuh"
#include "cubins/dtype.cuh"

namespace {
using namespace cubins;

constexpr int kMaxThreads = 512;
// Heads per step of a thread's head loop: their loads are in flight together.
constexpr int kHeadUnroll = 2;

__device__ __forceinline__ float2 rotate(float a, float b, float c, float s) {
  return make_float2(a * c - b * s, b * c + a * s);
}

// Where head h of token t lives (q heads, then k heads).
template <class T>
__device__ __forceinline__ T* head_row(T* q, T* k, int64_t t, int h, int q_heads, int k_heads, int head_dim) {
  return h < q_heads ? q + (t * q_heads + h) * head_dim : k + (t * k_heads + (h - q_heads)) * head_dim;
}

// Half a chunk: kVec / 2 elements (8 bytes for 16-bit types and fp32 alike).
template <class T>
__device__ __forceinline__ Chunk load_half_chunk(const T* p) {
  const uint2 v = *reinterpret_cast<const uint2*>(p);
  return make_uint4(v.x, v.y, 0u, 0u);
}

// The heads of a token this thread visits: first, first + stride, ... (blockIdx.y's group).
struct HeadWalk {
  int first;
  int stride;
  __device__ __forceinline__ static HeadWalk current() {
    return {static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y), static_cast<int>(blockDim.y * gridDim.y)};
  }
};

template <class T, bool kNeox>
__device__ __forceinline__ void rope_vector(T* q, T* k, const T* __restrict__ cos_t, const T* __restrict__ sin_t,
                                            int64_t t, int q_heads, int k_heads, int head_dim, int rotary_dim) {
  constexpr int kVec = Storage<T>::kVec;
  const int half = rotary_dim / 2;
  const int heads = q_heads + k_heads;
  const HeadWalk walk = HeadWalk::current();
  // NeoX: chunk j covers pairs [j * kVec, (j + 1) * kVec): one chunk in each half.
  // GPT-J: chunk j covers elements [j * kVec, (j + 1) * kVec): kVec / 2 pairs.
  const int j = threadIdx.x;
  if (j >= (kNeox ? half : rotary_dim) / kVec) return;  // no barriers below
  const int pair0 = kNeox ? j * kVec : j * (kVec / 2);
  const T* ct = cos_t + t * half + pair0;
  const T* st = sin_t + t * half + pair0;
  const Chunk cc = kNeox ? load_chunk(ct) : load_half_chunk(ct);
  const Chunk sc = kNeox ? load_chunk(st) : load_half_chunk(st);

  for (int h0 = walk.first; h0 < heads; h0 += kHeadUnroll * walk.stride) {
    Chunk lo[kHeadUnroll], hi[kHeadUnroll];
    T* rows[kHeadUnroll];
#pragma unroll
    for (int u = 0; u < kHeadUnroll; ++u) {
      const int h = h0 + u * walk.stride;
      rows[u] = h < heads ? head_row(q, k, t, h, q_heads, k_heads, head_dim) : nullptr;
      if (rows[u] == nullptr) continue;
      if constexpr (kNeox) {
        lo[u] = load_chunk<T>(rows[u] + pair0);
        hi[u] = load_chunk<T>(rows[u] + half + pair0);
      } else {
        lo[u] = load_chunk<T>(rows[u] + j * kVec);
      }
    }
#pragma unroll
    for (int u = 0; u < kHeadUnroll; ++u) {
      if (rows[u] == nullptr) continue;
      float a[kVec], b[kVec];
      if constexpr (kNeox) {
#pragma unroll
        for (int i = 0; i < kVec; ++i) {
          const float2 r = rotate(element<T>(lo[u], i), element<T>(hi[u], i), element<T>(cc, i), element<T>(sc, i));
          a[i] = r.x;
          b[i] = r.y;
        }
        store_chunk(rows[u] + pair0, pack<T>(a));
        store_chunk(rows[u] + half + pair0, pack<T>(b));
      } else {
#pragma unroll
        for (int i = 0; i < kVec / 2; ++i) {
          const float2 r =
              rotate(element<T>(lo[u], 2 * i), element<T>(lo[u], 2 * i + 1), element<T>(cc, i), element<T>(sc, i));
          a[2 * i] = r.x;
          a[2 * i + 1] = r.y;
        }
        store_chunk(rows[u] + j * kVec, pack<T>(a));
      }
    }
  }
}

template <class T, bool kNeox>
__device__ __forceinline__ void rope_elementwise(T* q, T* k, const T* __restrict__ cos_t, const T* __restrict__ sin_t,
                                                 int64_t t, int q_heads, int k_heads, int head_dim, int rotary_dim) {
  const int half = rotary_dim / 2;
  const int heads = q_heads + k_heads;
  const HeadWalk walk = HeadWalk::current();
  for (int h = walk.first; h < heads; h += walk.stride) {
    T* row = head_row(q, k, t, h, q_heads, k_heads, head_dim);
    for (int p = threadIdx.x; p < half; p += blockDim.x) {
      const int ia = kNeox ? p : 2 * p;
      const int ib = kNeox ? p + half : 2 * p + 1;
      const float2 r = rotate(to_float(row[ia]), to_float(row[ib]), to_float(cos_t[t * half + p]),
                              to_float(sin_t[t * half + p]));
      row[ia] = from_float<T>(r.x);
      row[ib] = from_float<T>(r.y);
    }
  }
}

// One block per token and head group (grid-stride over tokens past the grid).
template <class T, bool kNeox>
__device__ __forceinline__ void rope(T* q, T* k, const T* __restrict__ cos_t, const T* __restrict__ sin_t,
                                     uint32_t tokens, uint32_t q_heads, uint32_t k_heads, uint32_t head_dim,
                                     uint32_t rotary_dim, uint32_t vector) {
  for (int64_t t = blockIdx.x; t < tokens; t += gridDim.x) {
    if (vector) {
      rope_vector<T, kNeox>(q, k, cos_t, sin_t, t, q_heads, k_heads, head_dim, rotary_dim);
    } else {
      rope_elementwise<T, kNeox>(q, k, cos_t, sin_t, t, q_heads, k_heads, head_dim, rotary_dim);
    }
  }
}

}  // namespace

// `vector`: 1 when 16-byte accesses are valid for every row (head_dim and, NeoX,
// rotary_dim / 2 or, GPT-J, rotary_dim a multiple of the chunk width; q, k, cos and sin
// 16-byte aligned), else 0.
#define CUBINS_ROPE_ENTRY_POINTS(T, SUFFIX)                                                                        \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                        \
      rope_neox_##SUFFIX(T* q, T* k, const T* __restrict__ cos_t, const T* __restrict__ sin_t, uint32_t tokens,    \
                         uint32_t q_heads, uint32_t k_heads, uint32_t head_dim, uint32_t rotary_dim,               \
                         uint32_t vector) {                                                                        \
    cubins::wait_for_previous_grid();                                                                              \
    rope<T, true>(q, k, cos_t, sin_t, tokens, q_heads, k_heads, head_dim, rotary_dim, vector);                     \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMaxThreads)                                                        \
      rope_gptj_##SUFFIX(T* q, T* k, const T* __restrict__ cos_t, const T* __restrict__ sin_t, uint32_t tokens,    \
                         uint32_t q_heads, uint32_t k_heads, uint32_t head_dim, uint32_t rotary_dim,               \
                         uint32_t vector) {                                                                        \
    cubins::wait_for_previous_grid();                                                                              \
    rope<T, false>(q, k, cos_t, sin_t, tokens, q_heads, k_heads, head_dim, rotary_dim, vector);                    \
  }

CUBINS_ROPE_ENTRY_POINTS(__nv_bfloat16, bf16)
CUBINS_ROPE_ENTRY_POINTS(__half, f16)
CUBINS_ROPE_ENTRY_POINTS(float, f32)
