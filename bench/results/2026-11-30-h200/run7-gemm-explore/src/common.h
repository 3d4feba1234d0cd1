#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <string>
#include "cubins/gemm/args.cuh"

enum class Dt { BF16, FP16, F32 };
enum class Lay { NN, TN, NT };
struct Variant {
  std::string name;
  Dt dt;
  Lay lay;
  bool decode;
  int bm, bn, threads, smem;
  void (*launch)(const cubins::gemm::GemmArgs&, dim3, dim3, int, cudaStream_t);
  const void* fn;
};
std::vector<Variant>& registry();
struct Reg { Reg(Variant v) { registry().push_back(v); } };
