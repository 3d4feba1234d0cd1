// Bandwidth probe: 16-byte vectorized grid-stride copy. Its throughput is the copy
// ceiling every memory-bound kernel of this crate is judged against.
#include "cubins/common.cuh"

extern "C" __global__ void __launch_bounds__(256) copy_vec16(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                             uint64_t n_vec) {
  const uint64_t stride = cubins::grid_threads();
  uint64_t i = cubins::global_thread_index();
  // Two independent 16-byte loads in flight per thread before the first store.
  for (; i + stride < n_vec; i += 2 * stride) {
    const uint4 a = src[i];
    const uint4 b = src[i + stride];
    dst[i] = a;
    dst[i + stride] = b;
  }
  if (i < n_vec) dst[i] = src[i];
}
