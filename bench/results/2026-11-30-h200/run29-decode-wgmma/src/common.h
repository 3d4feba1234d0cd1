#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <string>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "cubins/gemm/args.cuh"

enum class Dt { BF16, FP16, F32 };
enum class Lay { NN, TN, NT };
// A decode variant: grid = ceil(N / bn) * cl blocks of `threads` threads (cl = cluster size,
// compile-time in the kernel). `launch` picks the kernel instance (e.g. by M) and sets its
// shared-memory attribute itself. `supports` (may be null) rejects shapes it cannot take.
// `check` false: a reference kernel whose output is not a GEMM (e.g. the pure weight read).
struct Variant {
  std::string name;
  Dt dt;
  Lay lay;
  int bn, cl, threads;
  void (*launch)(const cubins::gemm::GemmArgs&, dim3, dim3, cudaStream_t);
  bool (*supports)(int m, int n, int k);
  bool check;
};
std::vector<Variant>& registry();
struct Reg { Reg(Variant v) { registry().push_back(v); } };

template <class T> constexpr Dt dt_of();
template <> constexpr Dt dt_of<__nv_bfloat16>() { return Dt::BF16; }
template <> constexpr Dt dt_of<__half>() { return Dt::FP16; }
