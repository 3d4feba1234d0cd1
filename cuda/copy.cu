// Bandwidth probe: 16-byte vectorized grid-stride copy. Its throughput is the copy
// ceiling every memory-bound kernel of this crate is judged against.
#include "cubins/common.cuh"

namespace {
// Independent 16-byte loads each thread keeps in flight before its first store: with a
// full wave of 256-thread blocks this is 128 KB in flight per SM, past HBM3e's
// bandwidth-delay product.
constexpr int kUnroll = 4;
}  // namespace

extern "C" __global__ void __launch_bounds__(256) copy_vec16(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                             uint64_t n_vec) {
  const uint64_t stride = cubins::grid_threads();
  uint64_t i = cubins::global_thread_index();
  for (; i + (kUnroll - 1) * stride < n_vec; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n_vec; i += stride) dst[i] = src[i];
}
