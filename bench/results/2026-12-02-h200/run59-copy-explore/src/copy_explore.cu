// Copy variants against the driver's device-to-device copy (cudaMemcpyAsync), timed in one
// process: for each size, every arm in alternating windows, CUDA events, buffers rotated
// so each window's copies stream past the 60 MB L2; random data; every arm's output
// checked against its source after the timing. Prints one line per (size, arm): median
// and p95 of per-copy time over windows, GB/s (read + written), ratio to the driver copy.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

// The crate's copy_vec16 as it is (cuda/copy.cu): grid-stride, two loads in flight.
__global__ void __launch_bounds__(256) v0_stride2(const uint4* __restrict__ src, uint4* __restrict__ dst, uint64_t n) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + stride < n; i += 2 * stride) {
    const uint4 a = src[i];
    const uint4 b = src[i + stride];
    dst[i] = a;
    dst[i + stride] = b;
  }
  if (i < n) dst[i] = src[i];
}

// U loads in flight, grid-stride (a thread's U vectors lie a grid apart).
template <int U>
__global__ void __launch_bounds__(256) v_stride(const uint4* __restrict__ src, uint4* __restrict__ dst, uint64_t n) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = src[i + k * stride];
#pragma unroll
    for (int k = 0; k < U; ++k) dst[i + k * stride] = v[k];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ void st_stream(uint4* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// U loads in flight per thread, a block's tile contiguous (blockDim * U vectors), tiles
// grid-stride. HINT: streaming load / store flavours.
template <int U, bool HINT>
__global__ void __launch_bounds__(256) v_tile(const uint4* __restrict__ src, uint4* __restrict__ dst, uint64_t n) {
  const uint64_t tile = uint64_t(blockDim.x) * U;
  const uint64_t tiles = n / tile;
  for (uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const uint64_t base = t * tile + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = HINT ? ld_stream(src + base + k * blockDim.x) : src[base + k * blockDim.x];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (HINT) st_stream(dst + base + k * blockDim.x, v[k]); else dst[base + k * blockDim.x] = v[k];
    }
  }
  // The tail: fewer than a tile of vectors, by the first block.
  if (blockIdx.x == 0)
    for (uint64_t i = tiles * tile + threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

typedef void (*Kern)(const uint4*, uint4*, uint64_t);

struct Arm {
  const char* name;
  Kern k;       // null: cudaMemcpyAsync
  int blocks_per_sm;  // 0: one block per tile (no grid-stride reuse)
  int per_block;      // vectors a block moves per tile, for the 0 case
};

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0, rt = 0;
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  std::printf("device %s sms=%d l2=%d driver=%d runtime=%d\n", prop.name, sms, prop.l2CacheSize, drv, rt);
  const Arm arms[] = {
      {"memcpy", nullptr, 0, 0},
      {"v0_stride2_8", v0_stride2, 8, 0},
      {"stride4_8", v_stride<4>, 8, 0},
      {"stride8_8", v_stride<8>, 8, 0},
      {"tile4_8", v_tile<4, false>, 8, 0},
      {"tile8_8", v_tile<8, false>, 8, 0},
      {"tile4_8_hint", v_tile<4, true>, 8, 0},
      {"tile8_8_hint", v_tile<8, true>, 8, 0},
      {"tile4_full", v_tile<4, false>, 0, 256 * 4},
      {"tile8_full", v_tile<8, false>, 0, 256 * 8},
      {"tile4_full_hint", v_tile<4, true>, 0, 256 * 4},
      {"tile2_full", v_tile<2, false>, 0, 256 * 2},
      {"v0_stride2_16", v0_stride2, 16, 0},
      {"tile4_4", v_tile<4, false>, 4, 0},
  };
  const int n_arms = sizeof(arms) / sizeof(arms[0]);
  const uint64_t sizes[] = {64ull << 20, 256ull << 20, 1ull << 30};
  const int windows = argc > 1 ? std::atoi(argv[1]) : 15;
  for (uint64_t bytes : sizes) {
    // Enough buffer pairs that one window's copies touch >= 4x the L2.
    const int pairs = int(std::max<uint64_t>(2, (uint64_t(prop.l2CacheSize) * 4 + bytes - 1) / bytes));
    const int per_window = std::max(4, pairs);
    std::vector<uint4*> src(pairs), dst(pairs);
    std::vector<uint32_t> host(bytes / 4);
    uint64_t s = 0x9E3779B97F4A7C15ull ^ bytes;
    for (auto& w : host) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; w = uint32_t(s); }
    for (int p = 0; p < pairs; ++p) {
      CK(cudaMalloc(&src[p], bytes));
      CK(cudaMalloc(&dst[p], bytes));
      CK(cudaMemcpy(src[p], host.data(), bytes, cudaMemcpyHostToDevice));
    }
    const uint64_t n = bytes / 16;
    auto launch = [&](const Arm& a, int p) {
      if (!a.k) { CK(cudaMemcpyAsync(dst[p], src[p], bytes, cudaMemcpyDeviceToDevice, 0)); return; }
      uint64_t blocks = a.blocks_per_sm ? uint64_t(a.blocks_per_sm) * sms : (n + a.per_block - 1) / a.per_block;
      a.k<<<unsigned(blocks), 256>>>(src[p], dst[p], n);
    };
    std::vector<std::vector<float>> t(n_arms);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int a = 0; a < n_arms; ++a) for (int w = 0; w < 3; ++w) launch(arms[a], w % pairs);  // warm-up
    CK(cudaDeviceSynchronize());
    for (int w = 0; w < windows; ++w) {
      for (int a0 = 0; a0 < n_arms; ++a0) {
        const int a = (w % 2) ? n_arms - 1 - a0 : a0;  // alternate the order each window
        CK(cudaEventRecord(e0));
        for (int c = 0; c < per_window; ++c) launch(arms[a], c % pairs);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t[a].push_back(ms * 1000.0f / per_window);
      }
    }
    CK(cudaGetLastError());
    std::vector<float> med(n_arms);
    for (int a = 0; a < n_arms; ++a) {
      std::vector<float> v = t[a];
      std::sort(v.begin(), v.end());
      med[a] = v[v.size() / 2];
    }
    for (int a = 0; a < n_arms; ++a) {
      // Parity: this arm's copy of pair 0 equals the source.
      CK(cudaMemset(dst[0], 0xA5, bytes));
      launch(arms[a], 0);
      CK(cudaDeviceSynchronize());
      std::vector<uint32_t> back(bytes / 4);
      CK(cudaMemcpy(back.data(), dst[0], bytes, cudaMemcpyDeviceToHost));
      const bool ok = std::memcmp(back.data(), host.data(), bytes) == 0;
      std::vector<float> v = t[a];
      std::sort(v.begin(), v.end());
      const float p95 = v[std::min(v.size() - 1, size_t(v.size() * 0.95))];
      std::printf("size=%lluMiB arm=%-16s median_us=%9.2f p95_us=%9.2f GBps=%7.1f ratio_to_memcpy=%.4f parity=%s samples=",
                  (unsigned long long)(bytes >> 20), arms[a].name, med[a], p95, 2.0 * bytes / (med[a] * 1e3),
                  med[0] / med[a], ok ? "ok" : "FAIL");
      for (float x : t[a]) std::printf("%.2f,", x);
      std::printf("\n");
    }
    for (int p = 0; p < pairs; ++p) { CK(cudaFree(src[p])); CK(cudaFree(dst[p])); }
  }
  return 0;
}
