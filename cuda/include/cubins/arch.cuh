// What an SM of the arch being compiled holds, for kernels whose register budgets and
// shared-memory rings are sized by it. The host keeps the same facts: the GEMM planner's
// SmemClass (src/ops/gemm/plan.rs) and the occupancy model (inspect/src/occupancy.rs).
//
//   arch                      threads per SM   shared memory per SM
//   sm_80                     2048             164 KB
//   sm_90, sm_100             2048             228 KB
//   sm_86, sm_89, sm_120      1536             100 KB
//
// Any other target (none is built) takes the smallest figures, which fit every GPU.
#pragma once

namespace cubins {

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000)
constexpr int kSmThreads = 2048;
#else
constexpr int kSmThreads = 1536;
#endif

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000)
constexpr int kSmSharedKb = 228;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 800
constexpr int kSmSharedKb = 164;
#else
constexpr int kSmSharedKb = 100;
#endif

// Blocks of `threads` an SM holds by its thread count alone: the `__launch_bounds__`
// minimum that budgets registers for full residency.
constexpr int blocks_by_threads(int threads) { return kSmThreads / threads; }

// True when compiling for Blackwell (sm_100, sm_120): CUDA 13.0's compiler there needs
// more registers for the same source than for sm_80 / sm_90, so some kernels keep fewer
// loads in flight per thread there (each use says by how much and what ptxas reported).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define CUBINS_BLACKWELL 1
#else
#define CUBINS_BLACKWELL 0
#endif
constexpr bool kBlackwell = CUBINS_BLACKWELL;

}  // namespace cubins
