// Copy staged through shared memory with cp.async (LDGSTS), double-buffered: the
// starter kernel that proves the cp.async path reaches SASS.
#include "cubins/common.cuh"

namespace {
constexpr int kThreads = 256;
constexpr int kStages = 2;
}  // namespace

// Each block walks tiles of kThreads x 16 bytes in a grid-stride order; tile t+1 is in
// flight while tile t is written out.
extern "C" __global__ void __launch_bounds__(kThreads) copy_cp_async(const uint4* __restrict__ src,
                                                                     uint4* __restrict__ dst, uint64_t n_vec) {
  __shared__ uint4 stage[kStages][kThreads];
  const uint64_t tiles = (n_vec + kThreads - 1) / kThreads;
  const int t = threadIdx.x;

  auto issue = [&](uint64_t tile, int buf) {
    const uint64_t i = tile * kThreads + t;
    if (tile < tiles && i < n_vec) cubins::cp_async_16(&stage[buf][t], &src[i]);
    cubins::cp_async_commit();  // an empty group keeps the wait count uniform
  };

  uint64_t tile = blockIdx.x;
  int buf = 0;
  issue(tile, buf);
  for (; tile < tiles; tile += gridDim.x) {
    issue(tile + gridDim.x, buf ^ 1);
    cubins::cp_async_wait<1>();
    // Each thread reads back only the slot it filled, so no block barrier is needed here.
    const uint64_t i = tile * kThreads + t;
    if (i < n_vec) dst[i] = stage[buf][t];
    buf ^= 1;
  }
  cubins::cp_async_wait<0>();
}
