// Ceilings: the mma.sync bf16 rate with register operands only, and the time to stream-read
// a buffer (the floor under a decode GEMM of that many weight bytes).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include "cubins/gemm/ptx.cuh"

template <int CHAINS>
__global__ void mma_peak(float* out, int iters) {
  uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u};
  uint32_t b[2] = {threadIdx.x * 11u, threadIdx.x * 13u};
  float acc[CHAINS][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) cubins::gemm::mma_16816(acc[c], a, b, __nv_bfloat16{});
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (s == 12345.0f) out[0] = s;
}

__global__ void read_floor(const uint4* __restrict__ p, size_t n16, float* out) {
  uint32_t x = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n16; i += stride) { uint4 v = __ldcs(p + i); x ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (x == 0x12345678u) out[0] = (float)x;
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

void run_micro() {
  float* out; cudaMalloc(&out, 4);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int iters = 20000;
  auto peak = [&](auto kern, int chains, int warps_per_sm) {
    const int threads = 256, blocks = sms * warps_per_sm / 8;
    kern<<<blocks, threads>>>(out, 100);
    std::vector<double> t;
    for (int r = 0; r < 5; ++r) {
      cudaEventRecord(e0); kern<<<blocks, threads>>>(out, iters); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms);
    }
    const double flop = 2.0 * 16 * 8 * 16 * chains * (double)iters * blocks * threads / 32;
    printf("MICRO mma_peak chains=%d warps_per_sm=%d tflops=%.1f\n", chains, warps_per_sm, flop / med(t) * 1e-9);
  };
  peak(mma_peak<8>, 8, 8);
  peak(mma_peak<16>, 16, 8);
  peak(mma_peak<8>, 8, 16);
  peak(mma_peak<16>, 16, 16);
  peak(mma_peak<4>, 4, 32);
  // Read floor: graph of 24 reads rotating over 12 buffers of each size.
  for (size_t mb : {32, 128}) {
    const size_t bytes = mb << 20, n16 = bytes / 16;
    std::vector<uint4*> bufs(12);
    for (auto& b : bufs) { cudaMalloc(&b, bytes); cudaMemset(b, 1, bytes); }
    cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (int bpsm : {1, 2, 4, 8}) {
      cudaGraph_t g; cudaGraphExec_t ge;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      for (int i = 0; i < 24; ++i) read_floor<<<sms * bpsm, 2048 / bpsm > 1024 ? 1024 : 2048 / bpsm, 0, s>>>(bufs[i % 12], n16, out);
      cudaStreamEndCapture(s, &g); cudaGraphInstantiate(&ge, g, 0);
      cudaGraphLaunch(ge, s);
      std::vector<double> t;
      for (int r = 0; r < 15; ++r) {
        cudaEventRecord(e0, s); cudaGraphLaunch(ge, s); cudaEventRecord(e1, s); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1e3 / 24);
      }
      printf("MICRO read_floor MiB=%zu blocks_per_sm=%d us=%.2f GBps=%.0f\n", mb, bpsm, med(t), bytes / med(t) * 1e-3);
      cudaGraphExecDestroy(ge);
    }
    for (auto& b : bufs) cudaFree(b);
  }
  printf("MICRO err=%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
