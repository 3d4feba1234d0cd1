// Bandwidth probe: a 16-byte vector copy. Its throughput is the copy ceiling every
// memory-bound kernel of this crate is judged against.
//
// One vector per thread, launched with a block per 256 vectors (src/ops/copy.rs): on the
// H200 that matches the driver's device-to-device copy (1.006-1.011x of cudaMemcpyAsync at
// 64 MiB-1 GiB), where a one-wave grid striding two vectors a thread reached 0.93x and
// more vectors per thread, larger blocks or streaming load/store hints were slower
// (bench/results/2026-12-02-h200/run59-copy-explore, run60-copy-explore-blocks). Any grid is
// correct: threads stride over what the grid does not cover.
#include "cubins/common.cuh"

extern "C" __global__ void __launch_bounds__(256) copy_vec16(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                             uint64_t n_vec) {
  const uint64_t stride = cubins::grid_threads();
  for (uint64_t i = cubins::global_thread_index(); i < n_vec; i += stride) dst[i] = src[i];
}
