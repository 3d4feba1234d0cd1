// y = a * x + y over n floats: four elements per thread through 16-byte loads and stores,
// the tail (n not a multiple of 4) element by element.
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(256)
    axpy_f32(const float* __restrict__ x, float* __restrict__ y, float a, uint64_t n) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint64_t quads = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < quads; i += stride) {
    const float4 xv = x4[i];
    float4 yv = y4[i];
    yv.x = fmaf(a, xv.x, yv.x);
    yv.y = fmaf(a, xv.y, yv.y);
    yv.z = fmaf(a, xv.z, yv.z);
    yv.w = fmaf(a, xv.w, yv.w);
    y4[i] = yv;
  }
  const uint64_t tail = quads * 4 + static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < n) {
    y[tail] = fmaf(a, x[tail], y[tail]);
  }
}
