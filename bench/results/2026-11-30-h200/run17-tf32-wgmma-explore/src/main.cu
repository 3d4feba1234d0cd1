// Tile-configuration explorer: every registered variant against cuBLAS, same process,
// alternating rounds, medians. Output: one line per (shape, variant).
#include <dlfcn.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include "common.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>

std::vector<Variant>& registry() { static std::vector<Variant> v; return v; }

#define CK(x) do { cudaError_t ck_ = (x); if (ck_ != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(ck_)); exit(1);} } while (0)

typedef int (*create_t)(void**);
typedef int (*gemmex_t)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                        const void*, void*, int, int, int, int);
typedef int (*setstream_t)(void*, cudaStream_t);
static gemmex_t g_gemmex; static void* g_h; static void* g_lib; static void* g_ws;

__global__ void fill(void* p, size_t n, int dt, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 2654435761u ^ seed; x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
    float v = (x & 0xffffff) / 8388608.0f - 1.0f;
    if (dt == 0) ((__nv_bfloat16*)p)[i] = __float2bfloat16(v);
    else if (dt == 1) ((__half*)p)[i] = __float2half(v);
    else if (dt == 3) ((float*)p)[i] = (v + 1.0f) * 0.5f;
    else ((float*)p)[i] = v;
  }
}
__global__ void maxdiff(const void* a, const void* b, size_t n, int dt, float* out) {
  float md = 0, mr = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float x, y;
    if (dt == 0) { x = __bfloat162float(((const __nv_bfloat16*)a)[i]); y = __bfloat162float(((const __nv_bfloat16*)b)[i]); }
    else if (dt == 1) { x = __half2float(((const __half*)a)[i]); y = __half2float(((const __half*)b)[i]); }
    else { x = ((const float*)a)[i]; y = ((const float*)b)[i]; }
    float d = fabsf(x - y); if (!(d <= md)) md = (d != d) ? 1e30f : fmaxf(md, d); mr = fmaxf(mr, fabsf(y));
  }
  atomicMax((int*)&out[0], __float_as_int(md)); atomicMax((int*)&out[1], __float_as_int(mr));
}

// CARVEOUT=pct (percent of the maximum shared memory) for the variants whose name contains
// "pftrue": leaves L1 room for their prefetched tiles.
static void set_carveout(const Variant& v) {
  const char* c = getenv("CARVEOUT");
  if (c && strstr(v.name.c_str(), "pftrue")) CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributePreferredSharedMemoryCarveout, atoi(c)));
}
static int esz(Dt d) { return d == Dt::F32 ? 4 : 2; }
static int dtcode(Dt d) { return d == Dt::BF16 ? 0 : d == Dt::FP16 ? 1 : 2; }
static const char* dtname(Dt d) { return d == Dt::BF16 ? "bf16" : d == Dt::FP16 ? "fp16" : "tf32"; }
static const char* layname(Lay l) { return l == Lay::NN ? "NN" : l == Lay::TN ? "TN" : "NT"; }

struct Problem { Dt dt; Lay lay; int m, n, k; };

static int g_comp_override = -1;  // cuBLAS compute type for F32 (77 FAST_TF32 unless set, 68 = pure FP32)
static void cublas_call(const Problem& pr, const void* A, const void* B, void* C, cudaStream_t s) {
  const int cdt = pr.dt == Dt::BF16 ? 14 : pr.dt == Dt::FP16 ? 2 : 0;
  const int comp = pr.dt == Dt::F32 ? (g_comp_override >= 0 ? g_comp_override : 77) : 68;
  float one = 1, zero = 0;
  int opa, opb, lda, ldb;  // cuBLAS "A" = our B, "B" = our A
  if (pr.lay == Lay::NN) { opa = 0; opb = 0; lda = pr.n; ldb = pr.k; }
  else if (pr.lay == Lay::NT) { opa = 1; opb = 0; lda = pr.k; ldb = pr.k; }
  else { opa = 0; opb = 1; lda = pr.n; ldb = pr.m; }
  int st = g_gemmex(g_h, opa, opb, pr.n, pr.m, pr.k, &one, B, cdt, lda, A, cdt, ldb, &zero, C, cdt, pr.n, comp, -1);
  if (st) { printf("cublas status %d (dt %d lay %d %d %d %d)\n", st, (int)pr.dt, (int)pr.lay, pr.m, pr.n, pr.k); exit(1); }
}

static cubins::gemm::GemmArgs args_of(const Problem& pr, const void* A, const void* B, void* C) {
  cubins::gemm::GemmArgs a{};
  a.a = A; a.b = B; a.c = C; a.bias = nullptr; a.m = pr.m; a.n = pr.n; a.k = pr.k;
  a.lda = pr.lay == Lay::TN ? pr.m : pr.k; a.ldb = pr.lay == Lay::NT ? pr.k : pr.n; a.ldc = pr.n;
  a.alpha = 1; a.beta = 0;
  const int e = esz(pr.dt);
  auto vec = [&](const void* ptr, int ld) { return ((uintptr_t)ptr % 16 == 0 && (ld * e) % 16 == 0); };
  a.flags = (vec(A, a.lda) ? CUBINS_GEMM_VEC_A : 0) | (vec(B, a.ldb) ? CUBINS_GEMM_VEC_B : 0) |
            (vec(C, a.ldc) ? CUBINS_GEMM_VEC_C : 0);
  return a;
}

static void launch_variant(const Variant& v, const Problem& pr, const void* A, const void* B, void* C, cudaStream_t s) {
  auto a = args_of(pr, A, B, C);
  dim3 grid = v.decode ? dim3((pr.n + 31) / 32) : dim3(((pr.m + v.bm - 1) / v.bm) * ((pr.n + v.bn - 1) / v.bn));
  v.launch(a, grid, dim3(v.threads), v.smem, s);
}

static double median(std::vector<double> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; }

// Time `cands` (index -1 = cuBLAS) with graphs of `per_graph` launches rotating over `nb` buffer sets.
static void bench(const Problem& pr, std::vector<int> cands, int nb, int per_graph, int rounds) {
  const size_t na = (size_t)pr.m * pr.k, nbe = (size_t)pr.k * pr.n, nc = (size_t)pr.m * pr.n;
  const int e = esz(pr.dt);
  std::vector<void*> As(nb), Bs(nb); void *C, *Cref;
  for (int i = 0; i < nb; ++i) {
    CK(cudaMalloc(&As[i], na * e)); CK(cudaMalloc(&Bs[i], nbe * e));
    fill<<<1024, 256>>>(As[i], na, dtcode(pr.dt), 17 + i); fill<<<1024, 256>>>(Bs[i], nbe, dtcode(pr.dt), 1001 + i);
  }
  CK(cudaMalloc(&C, nc * e)); CK(cudaMalloc(&Cref, nc * e));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  { int st = ((setstream_t)dlsym(g_lib, "cublasSetStream_v2"))(g_h, s); if (st) printf("setstream %d\n", st);
    st = ((int (*)(void*, void*, size_t))dlsym(g_lib, "cublasSetWorkspace_v2"))(g_h, g_ws, 32 << 20); if (st) printf("setws %d\n", st); }
  cublas_call(pr, As[0], Bs[0], Cref, s);
  float* dd; CK(cudaMalloc(&dd, 8));
  std::vector<cudaGraphExec_t> ge(cands.size());
  std::vector<bool> ok(cands.size(), true);
  std::vector<double> err(cands.size(), 0);
  for (size_t c = 0; c < cands.size(); ++c) {
    const int id = cands[c];
    if (id >= 0) {
      const Variant& v = registry()[id];
      CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem)); set_carveout(v);
      CK(cudaMemsetAsync(C, 0xff, nc * e, s));
      launch_variant(v, pr, As[0], Bs[0], C, s);
      CK(cudaMemsetAsync(dd, 0, 8, s));
      maxdiff<<<512, 256, 0, s>>>(C, Cref, nc, dtcode(pr.dt), dd);
      float h[2]; CK(cudaMemcpyAsync(h, dd, 8, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s));
      err[c] = h[0] / (h[1] > 0 ? h[1] : 1);
      if (!(err[c] < (pr.dt == Dt::F32 ? 2e-2 : 2e-2))) ok[c] = false;
    }
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < per_graph; ++i) {
      if (id < 0) cublas_call(pr, As[i % nb], Bs[i % nb], C, s);
      else launch_variant(registry()[id], pr, As[i % nb], Bs[i % nb], C, s);
    }
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge[c], g, 0));
    CK(cudaGraphLaunch(ge[c], s)); CK(cudaGraphLaunch(ge[c], s));  // warm-up
  }
  CK(cudaStreamSynchronize(s));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<std::vector<double>> t(cands.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t j = 0; j < cands.size(); ++j) {
      const size_t c = (r & 1) ? cands.size() - 1 - j : j;
      CK(cudaEventRecord(e0, s)); CK(cudaGraphLaunch(ge[c], s)); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t[c].push_back(ms * 1e3 / per_graph);
    }
  }
  const double base = median(t[0]);
  const double flop = 2.0 * pr.m * pr.n * pr.k;
  for (size_t c = 0; c < cands.size(); ++c) {
    std::vector<double> x = t[c]; std::sort(x.begin(), x.end());
    const double med = x[x.size() / 2], p95 = x[(size_t)(x.size() * 0.95 >= x.size() ? x.size() - 1 : x.size() * 0.95)];
    const double bytes = (double)(pr.m * (size_t)pr.k + (size_t)pr.k * pr.n + (size_t)pr.m * pr.n) * e;
    printf("RESULT %s %s %dx%dx%d %-48s med_us=%9.2f p95_us=%9.2f tflops=%7.1f GBps=%7.0f ratio_vs_cublas=%.3f err=%.2e %s\n",
           dtname(pr.dt), layname(pr.lay), pr.m, pr.n, pr.k,
           cands[c] < 0 ? "cuBLAS" : registry()[cands[c]].name.c_str(), med, p95, flop / med * 1e-6,
           bytes / med * 1e-3, base / med, err[c], ok[c] ? "" : "WRONG");
    fflush(stdout);
  }
  for (auto& g : ge) cudaGraphExecDestroy(g);
  for (int i = 0; i < nb; ++i) { cudaFree(As[i]); cudaFree(Bs[i]); }
  cudaFree(C); cudaFree(Cref); cudaFree(dd); cudaStreamDestroy(s);
}


// ---------------------------------------------------------------------------------------
// Precision: every candidate vs an f64 reference of the same inputs.
static __device__ float elem_a(const float* A, Lay lay, int m, int k, int M, int K, int i, int kk) {
  return lay == Lay::TN ? A[(size_t)kk * M + i] : A[(size_t)i * K + kk];
}
static __device__ float elem_b(const float* B, Lay lay, int n, int k, int N, int K, int kk, int j) {
  return lay == Lay::NT ? B[(size_t)j * K + kk] : B[(size_t)kk * N + j];
}
__global__ void ref64(const float* A, const float* B, double* C, Lay lay, int M, int N, int K) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= N) return;
  double acc = 0;
  for (int kk = 0; kk < K; ++kk) acc += (double)elem_a(A, lay, M, K, M, K, i, kk) * (double)elem_b(B, lay, N, K, N, K, kk, j);
  C[(size_t)i * N + j] = acc;
}
// out: [0] sum err^2, [1] sum ref^2, [2] sum (c - ref), [3] max |err| (as float bits), [4] max |ref|
__global__ void errstats(const float* C, const double* R, size_t n, double* out) {
  double se = 0, sr = 0, sb = 0; float me = 0, mr = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const double d = (double)C[i] - R[i];
    se += d * d; sr += R[i] * R[i]; sb += d;
    const float ad = (float)fabs(d); me = (ad != ad) ? 1e30f : fmaxf(me, ad); mr = fmaxf(mr, (float)fabs(R[i]));
  }
  atomicAdd(&out[0], se); atomicAdd(&out[1], sr); atomicAdd(&out[2], sb);
  atomicMax((int*)&out[3], __float_as_int(me)); atomicMax((int*)&out[4], __float_as_int(mr));
}

static void precision(Lay lay, int m, int n, int k, int dist) {
  Problem pr{Dt::F32, lay, m, n, k};
  float *A, *B, *C; double *R, *st;
  CK(cudaMalloc(&A, (size_t)m * k * 4)); CK(cudaMalloc(&B, (size_t)k * n * 4)); CK(cudaMalloc(&C, (size_t)m * n * 4));
  CK(cudaMalloc(&R, (size_t)m * n * 8)); CK(cudaMalloc(&st, 64));
  fill<<<1024, 256>>>(A, (size_t)m * k, dist, 5); fill<<<1024, 256>>>(B, (size_t)k * n, dist, 77);
  ref64<<<dim3((n + 127) / 128, m), 128>>>(A, B, R, lay, m, n, k);
  CK(cudaDeviceSynchronize());
  std::vector<int> cands{-2, -1};  // -2: cuBLAS pure FP32, -1: cuBLAS FAST_TF32
  for (size_t i = 0; i < registry().size(); ++i)
    if (registry()[i].dt == Dt::F32 && registry()[i].lay == lay) cands.push_back((int)i);
  for (int id : cands) {
    CK(cudaMemset(C, 0xff, (size_t)m * n * 4));
    if (id < 0) { g_comp_override = id == -2 ? 68 : 77; cublas_call(pr, A, B, C, 0); g_comp_override = -1; }
    else {
      const Variant& v = registry()[id];
      CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem)); set_carveout(v);
      launch_variant(v, pr, A, B, C, 0);
    }
    CK(cudaMemset(st, 0, 64));
    errstats<<<512, 256>>>(C, R, (size_t)m * n, st);
    double h[5]; CK(cudaMemcpy(h, st, 40, cudaMemcpyDeviceToHost));
    float me, mr; memcpy(&me, &h[3], 4); memcpy(&mr, &h[4], 4);
    printf("PREC %s %dx%dx%d %-9s %-52s rms_rel=%.3e max_rel=%.3e bias_rel=%+.3e\n", layname(lay), m, n, k,
           dist == 3 ? "pos[0,1)" : "sym[-1,1)", id == -2 ? "cuBLAS FP32" : id == -1 ? "cuBLAS TF32" : registry()[id].name.c_str(),
           sqrt(h[0] / h[1]), me / mr, (h[2] / ((double)m * n)) / sqrt(h[1] / ((double)m * n)));
    fflush(stdout);
  }
  cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(R); cudaFree(st);
}

// Rounding probe: A rows 0-3 and B columns 4-7 hold 1 + x (x = 3/4 ulp, 1/2 ulp, 1 + 1/2 ulp,
// 1/8 ulp of tf32 at 1, ulp = 2^-10), every other element 1. Printed: C / K - 1 in ulps.
// Truncation: 0 0 1 0; round to nearest even: 1 0 2 0; nearest, ties away (cvt.rna): 1 1 2 0.
__global__ void probe_fill(float* A, float* B, Lay lay, int M, int N, int K) {
  const float vals[4] = {__uint_as_float(0x3F801800u), __uint_as_float(0x3F801000u), __uint_as_float(0x3F803000u),
                         __uint_as_float(0x3F800400u)};
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < M * K; idx += gridDim.x * blockDim.x) {
    const int i = idx / K, kk = idx % K;
    const float v = i < 4 ? vals[i] : 1.0f;
    if (lay == Lay::TN) A[(size_t)kk * M + i] = v; else A[(size_t)i * K + kk] = v;
  }
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < N * K; idx += gridDim.x * blockDim.x) {
    const int j = idx / K, kk = idx % K;
    const float v = (j >= 4 && j < 8) ? vals[j - 4] : 1.0f;
    if (lay == Lay::NT) B[(size_t)j * K + kk] = v; else B[(size_t)kk * N + j] = v;
  }
}
static void probe(Lay lay) {
  const int m = 128, n = 256, k = 64;
  Problem pr{Dt::F32, lay, m, n, k};
  float *A, *B, *C;
  CK(cudaMalloc(&A, m * k * 4)); CK(cudaMalloc(&B, k * n * 4)); CK(cudaMalloc(&C, m * n * 4));
  probe_fill<<<64, 256>>>(A, B, lay, m, n, k);
  std::vector<int> cands{-1};
  for (size_t i = 0; i < registry().size(); ++i)
    if (registry()[i].dt == Dt::F32 && registry()[i].lay == lay) cands.push_back((int)i);
  for (int id : cands) {
    CK(cudaMemset(C, 0, m * n * 4));
    if (id < 0) cublas_call(pr, A, B, C, 0);
    else {
      const Variant& v = registry()[id];
      CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem)); set_carveout(v);
      launch_variant(v, pr, A, B, C, 0);
    }
    std::vector<float> h(m * n); CK(cudaMemcpy(h.data(), C, m * n * 4, cudaMemcpyDeviceToHost));
    auto u = [&](int i, int j) { return (h[i * n + j] / k - 1.0) * 1024.0; };
    printf("PROBE %s %-52s A(3/4,1/2,3/2,1/8 ulp): %.2f %.2f %.2f %.2f  B: %.2f %.2f %.2f %.2f\n", layname(lay),
           id < 0 ? "cuBLAS TF32" : registry()[id].name.c_str(), u(0, 10), u(1, 10), u(2, 10), u(3, 10), u(10, 4),
           u(10, 5), u(10, 6), u(10, 7));
  }
  cudaFree(A); cudaFree(B); cudaFree(C);
}

// filter: comma-separated name prefixes (empty or absent: every variant).
static bool name_matches(const std::string& name, const char* filter) {
  if (!filter || !*filter) return true;
  std::string f(filter);
  size_t at = 0;
  while (at <= f.size()) {
    size_t end = f.find(',', at);
    if (end == std::string::npos) end = f.size();
    const std::string pre = f.substr(at, end - at);
    if (!pre.empty() && name.compare(0, pre.size(), pre) == 0) return true;
    at = end + 1;
  }
  return false;
}
static std::vector<int> cands_for(Dt dt, Lay lay, const char* filter) {
  std::vector<int> c{-1};
  for (size_t i = 0; i < registry().size(); ++i)
    if (!registry()[i].decode && registry()[i].dt == dt && registry()[i].lay == lay &&
        name_matches(registry()[i].name, filter))
      c.push_back((int)i);
  return c;
}

int main(int argc, char** argv) {
  const char* cands[] = {"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so", "libcublas.so.13", "libcublas.so"};
  void* lib = nullptr;
  for (const char* c : cands) { lib = dlopen(c, RTLD_NOW); if (lib) { printf("cuBLAS: %s\n", c); break; } }
  if (!lib) { printf("no cublas: %s\n", dlerror()); return 1; }
  g_lib = lib;
  g_gemmex = (gemmex_t)dlsym(lib, "cublasGemmEx");
  CK(cudaFree(0));
  int st = ((create_t)dlsym(lib, "cublasCreate_v2"))(&g_h);
  printf("cublasCreate status %d\n", st);
  CK(cudaMalloc(&g_ws, 32 << 20));
  st = ((int (*)(void*, void*, size_t))dlsym(lib, "cublasSetWorkspace_v2"))(g_h, g_ws, 32 << 20);
  printf("cublasSetWorkspace status %d\n", st);
  const char* mode = argc > 1 ? argv[1] : "tf32";
  const char* filter = argc > 2 ? argv[2] : nullptr;     // variant name prefixes, comma-separated
  const char* lays = argc > 3 ? argv[3] : "NT,NN,TN";    // layouts
  for (auto& v : registry()) printf("VARIANT %-60s tile %dx%d smem %d\n", v.name.c_str(), v.bm, v.bn, v.smem);
  struct Shape { int m, n, k; };
  const Lay all[] = {Lay::NT, Lay::NN, Lay::TN};
  if (!strcmp(mode, "tf32") || !strcmp(mode, "quick")) {
    const Shape big[] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {2048, 2048, 2048}, {4096, 14336, 4096}, {4096, 4096, 14336}};
    const int nshapes = !strcmp(mode, "quick") ? 2 : 5;
    for (Lay lay : all) {
      if (!strstr(lays, layname(lay))) continue;
      auto c = cands_for(Dt::F32, lay, filter);
      if (c.size() == 1) continue;
      for (int s = 0; s < nshapes; ++s) {
        const Shape sh = big[s];
        const double gf = 2.0 * sh.m * sh.n * sh.k * 1e-9;
        const int per = std::max(2, std::min(32, (int)(4400.0 / gf)));  // ~10 ms per graph at 400 TFLOPS
        bench(Problem{Dt::F32, lay, sh.m, sh.n, sh.k}, c, 2, per, !strcmp(mode, "quick") ? 7 : 11);
      }
    }
  }
  if (!strcmp(mode, "tails")) {
    const Shape tails[] = {{1000, 1000, 1000}, {4100, 3900, 1030}, {129, 257, 72}, {1, 256, 64}, {300, 520, 8}, {257, 129, 33}, {64, 64, 5}};
    for (Lay lay : all) {
      if (!strstr(lays, layname(lay))) continue;
      auto c = cands_for(Dt::F32, lay, filter);
      if (c.size() == 1) continue;
      for (auto sh : tails) bench(Problem{Dt::F32, lay, sh.m, sh.n, sh.k}, c, 1, 2, 3);
    }
  }
  if (!strcmp(mode, "unaligned")) {
    // Leading dimensions that are not multiples of 4 floats: odd K and N (element-wise copies).
    const Shape odd[] = {{513, 515, 517}, {1024, 1023, 1025}};
    for (Lay lay : all) {
      if (!strstr(lays, layname(lay))) continue;
      auto c = cands_for(Dt::F32, lay, filter);
      if (c.size() == 1) continue;
      for (auto sh : odd) bench(Problem{Dt::F32, lay, sh.m, sh.n, sh.k}, c, 1, 2, 3);
    }
  }
  if (!strcmp(mode, "diff") && argc > 6) {
    // diff FILTER LAYOUT M N K: where a variant disagrees with cuBLAS TF32 (twice, to see races).
    Lay lay = !strcmp(argv[3], "NN") ? Lay::NN : !strcmp(argv[3], "TN") ? Lay::TN : Lay::NT;
    Problem pr{Dt::F32, lay, atoi(argv[4]), atoi(argv[5]), atoi(argv[6])};
    const int m = pr.m, n = pr.n, k = pr.k;
    float *A, *B, *C, *R;
    CK(cudaMalloc(&A, (size_t)m * k * 4)); CK(cudaMalloc(&B, (size_t)k * n * 4));
    CK(cudaMalloc(&C, (size_t)m * n * 4)); CK(cudaMalloc(&R, (size_t)m * n * 4));
    fill<<<1024, 256>>>(A, (size_t)m * k, 2, 17); fill<<<1024, 256>>>(B, (size_t)k * n, 2, 1001);
    cublas_call(pr, A, B, R, 0);
    std::vector<float> hr((size_t)m * n), hc((size_t)m * n);
    CK(cudaMemcpy(hr.data(), R, hr.size() * 4, cudaMemcpyDeviceToHost));
    for (auto& v : registry()) {
      if (v.dt != Dt::F32 || v.lay != lay || !name_matches(v.name, filter)) continue;
      CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem)); set_carveout(v);
      for (int rep = 0; rep < 2; ++rep) {
        CK(cudaMemset(C, 0xff, (size_t)m * n * 4));
        launch_variant(v, pr, A, B, C, 0);
        CK(cudaMemcpy(hc.data(), C, hc.size() * 4, cudaMemcpyDeviceToHost));
        int bad = 0;
        std::vector<int> rows(m, 0), cols(n, 0);
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            const float a = hc[(size_t)i * n + j], b = hr[(size_t)i * n + j];
            if (!(fabsf(a - b) <= 1e-2f * (1 + fabsf(b)))) {
              if (bad < 8) printf("  (%d,%d) got %g want %g\n", i, j, a, b);
              ++bad; ++rows[i]; ++cols[j];
            }
          }
        printf("DIFF %s rep %d: %d bad of %d; bad rows:", v.name.c_str(), rep, bad, m * n);
        int shown = 0;
        for (int i = 0; i < m && shown < 24; ++i) if (rows[i]) { printf(" %d(%d)", i, rows[i]); ++shown; }
        printf("; bad cols:"); shown = 0;
        for (int j = 0; j < n && shown < 24; ++j) if (cols[j]) { printf(" %d(%d)", j, cols[j]); ++shown; }
        printf("\n");
      }
    }
  }
  if (!strcmp(mode, "prec")) {
    for (Lay lay : all) {
      if (!strstr(lays, layname(lay))) continue;
      probe(lay);
      for (int dist : {2, 3}) precision(lay, 1024, 1024, 4096, dist);
    }
  }
  return 0;
}
