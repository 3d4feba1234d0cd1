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

static int esz(Dt d) { return d == Dt::F32 ? 4 : 2; }
static int dtcode(Dt d) { return d == Dt::BF16 ? 0 : d == Dt::FP16 ? 1 : 2; }
static const char* dtname(Dt d) { return d == Dt::BF16 ? "bf16" : d == Dt::FP16 ? "fp16" : "tf32"; }
static const char* layname(Lay l) { return l == Lay::NN ? "NN" : l == Lay::TN ? "TN" : "NT"; }

struct Problem { Dt dt; Lay lay; int m, n, k; };

static void cublas_call(const Problem& pr, const void* A, const void* B, void* C, cudaStream_t s) {
  const int cdt = pr.dt == Dt::BF16 ? 14 : pr.dt == Dt::FP16 ? 2 : 0;
  const int comp = pr.dt == Dt::F32 ? 77 : 68;
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
      CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem));
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


int main(int argc, char** argv) {

  if (argc > 2 && !strcmp(argv[1], "one")) {
    // Three eager launches of the first variant whose name starts with argv[2], bf16 NN 8192^3 (for ncu).
    for (auto& v : registry()) {
      if (v.name.rfind(argv[2], 0) != 0) continue;
      Problem pr{v.dt, v.lay, 8192, 8192, 8192};
      const size_t e = v.dt == Dt::F32 ? 4 : 2;
      void *A, *B, *C;
      CK(cudaMalloc(&A, (size_t)8192 * 8192 * e)); CK(cudaMalloc(&B, (size_t)8192 * 8192 * e)); CK(cudaMalloc(&C, (size_t)8192 * 8192 * e));
      fill<<<1024, 256>>>(A, (size_t)8192 * 8192, dtcode(v.dt), 1); fill<<<1024, 256>>>(B, (size_t)8192 * 8192, dtcode(v.dt), 2);
      CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem));
      for (int i = 0; i < 3; ++i) launch_variant(v, pr, A, B, C, 0);
      CK(cudaDeviceSynchronize());
      printf("one %s done\n", v.name.c_str());
      return 0;
    }
    return 1;
  }
  const char* cands[] = {"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so", "libcublas.so.13", "libcublas.so"};
  void* lib = nullptr;
  for (const char* c : cands) { lib = dlopen(c, RTLD_NOW); if (lib) { printf("cuBLAS: %s\n", c); break; } }
  if (!lib) { printf("no cublas: %s\n", dlerror()); return 1; }
  g_lib = lib;
  g_gemmex = (gemmex_t)dlsym(lib, "cublasGemmEx");
  CK(cudaFree(0));
  int st = ((create_t)dlsym(lib, "cublasCreate_v2"))(&g_h);
  printf("cublasCreate status %d\n", st);
  CK(cudaMalloc(&g_ws, 32 << 20)); void* ws = g_ws;
  st = ((int (*)(void*, void*, size_t))dlsym(lib, "cublasSetWorkspace_v2"))(g_h, ws, 32 << 20);
  printf("cublasSetWorkspace status %d\n", st);
  const char* only = argc > 1 ? argv[1] : "";
  struct Shape { int m, n, k; };
  const Shape large[] = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  for (Dt dt : {Dt::BF16, Dt::FP16, Dt::F32})
    for (Lay lay : {Lay::NN, Lay::NT, Lay::TN}) {
      std::vector<int> c{-1};
      for (size_t i = 0; i < registry().size(); ++i)
        if (!registry()[i].decode && registry()[i].dt == dt && registry()[i].lay == lay) c.push_back((int)i);
      if (c.size() == 1) continue;
      if (!strcmp(only, "tails") || (*only && !strstr(dtname(dt), only) && strcmp(only, "large"))) continue;
      for (auto sh : large) bench(Problem{dt, lay, sh.m, sh.n, sh.k}, c, 2, sh.m == 8192 ? 4 : 16, 15);
    }
  if (!strcmp(only, "tails"))
    for (Dt dt : {Dt::BF16, Dt::FP16})
      for (Lay lay : {Lay::NN, Lay::NT, Lay::TN}) {
        std::vector<int> c{-1};
        for (size_t i = 0; i < registry().size(); ++i)
          if (!registry()[i].decode && registry()[i].dt == dt && registry()[i].lay == lay) c.push_back((int)i);
        const Shape tails[] = {{1000, 1000, 1000}, {4100, 3900, 1030}, {129, 257, 72}, {1, 256, 64}, {300, 520, 8}};
        for (auto sh : tails) bench(Problem{dt, lay, sh.m, sh.n, sh.k}, c, 1, 2, 3);
      }
  if (!strcmp(only, "decode"))
    for (Lay lay : {Lay::NT, Lay::NN}) {
      std::vector<int> c{-1};
      for (size_t i = 0; i < registry().size(); ++i)
        if (registry()[i].decode && registry()[i].lay == lay) c.push_back((int)i);
      if (c.size() == 1) continue;
      for (int nk : {4096, 8192})
        for (int m : {1, 8, 16}) bench(Problem{Dt::BF16, lay, m, nk, nk}, c, nk == 4096 ? 12 : 4, 24, 21);
    }
  return 0;
}
