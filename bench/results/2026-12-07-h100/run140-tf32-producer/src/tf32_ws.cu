// Explorer: TF32 GEMM on Hopper's warpgroup MMA (f32 in, f32 out, f32 accumulation), layout NT
// (A [M][K], B [N][K], both K-major: tf32 wgmma reads shared-memory operands K-major only),
// against cuBLAS TF32 (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32) in one process.
//
// The crate's TF32 tier rounds its operands to nearest (cvt.rna) before the tensor cores, where
// wgmma on raw f32 bits truncates them (run17: 2.65x cuBLAS TF32's rms error). So today the tier
// runs a memory-bound pass that rounds A and B into a workspace, then the cp.async wgmma kernel
// on it: 0.79-0.86x cuBLAS at 4096^3 and 8192^3 (run80, H200). The question: can rounding happen
// inside a warp-specialized kernel at cuBLAS speed? The configs:
//   tma_trunc   TMA loads of the raw operands: truncation, not the tier's numerics (the ceiling
//               of the kernel without rounding)
//   pass_tma    the rounding pass into a workspace, then the same kernel on it (the pass timed
//               with it): what the crate gets by moving TF32 onto its TMA kernel
//   nn_bB_dD    the same producer for NN (B stored [K][N]): B's 16-byte loads along N are
//               rounded and stored as words, transposed to the K-major tile (32 banks a store)
//   reg_bB_dD   a producer warpgroup that loads the operands itself: global -> registers
//               (16-byte loads, B chunks a batch, D batches in flight) -> cvt.rna -> the
//               128-byte swizzle in shared memory -> fence.proxy.async -> an mbarrier arrive
//               per thread. Shared-memory traffic a k tile: its 48 KB written once (as TMA
//               would) and read by the consumers' wgmma (80 KB); a rounding pass inside shared
//               memory would add 96 KB (run17: half the throughput).
// Every config: persistent CTAs (min(tiles, SMs)), 128 x 256 output tiles, k tiles of 32 (one
// 128-byte row), 4 stages, two consumer warpgroups of m64n256k8 (64 x 256 f32 accumulators
// each), raster grouped by 16 tile rows, the epilogue through shared memory and TMA stores
// (16 KB of staging per consumer: 4 parts of 64 columns a tile).
//
//   [TW_CONFIGS=a,b] tf32_ws NT|NN M N K [NT|NN M N K ...]   each config against cuBLAS
//
// Per shape and config: the output poisoned, then parity against cuBLAS (max |diff| / max |ref|)
// and against float64 on 256 sampled outputs, with the operands rounded as the config rounds them
// (to nearest, ties away, or truncated) and with them exact (the rms error of ours and of
// cuBLAS's: the rounding probe); then 15 rounds of paired windows (ours, cuBLAS; the order
// alternating per round), 8 launches per window rotating over operand sets past the 60 MB L2.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cubins/gemm/wgmma.cuh"

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_));                     \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

namespace tw {
using namespace cubins::gemm;
constexpr int BM = 128, BN = 256, BK = 32, S = 4;
constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE = A_BYTES + B_BYTES;
constexpr int PANEL = 64 * 128;             // 64 K-major rows of one k tile
constexpr int STAGING = 64 * 64 * 4;        // per consumer: 64 rows x 64 f32 columns
constexpr int BOX = 64 * 128;               // a staging box: 64 rows x 32 f32 columns
constexpr int SMEM = S * STAGE + 2 * STAGING + 1024 + 2 * S * 8;
constexpr int CHUNKS_PER_THREAD = (BM + BN) * 8 / 128;  // 16-byte chunks of a stage per producer thread: 24
enum Mode { kTma = 0, kReg = 1, kRegNN = 2 };

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap* map, unsigned bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, unsigned src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ void consumer_sync(int cw) { asm volatile("bar.sync %0, 128;\n" ::"r"(cw + 1) : "memory"); }
// This thread's generic-proxy writes of shared memory, visible to the async proxy (wgmma, TMA).
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void st_shared_v2(unsigned addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ void st_shared_u32(unsigned addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void st_shared_v4(unsigned addr, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
// Volatile, so that a batch's loads issue in program order, all before the previous batch's
// stores: the compiler may not sink them toward their use.
__device__ __forceinline__ uint4 ldg_v4(const float* p) {
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}
__device__ __forceinline__ uint32_t ldg_u32(const float* p) {
  uint32_t r;
  asm volatile("ld.global.nc.u32 %0, [%1];\n" : "=r"(r) : "l"(p));
  return r;
}
__device__ __forceinline__ uint32_t rna(uint32_t bits) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(bits)));
  return r;
}

struct Coord {
  int m, n;
};
__device__ __forceinline__ Coord tile_of(int t, int tiles_m, int tiles_n, int group) {
  const int per_group = group * tiles_n;
  const int g = t / per_group, first = g * group;
  const int rows = min(tiles_m - first, group);
  const int r = t % per_group;
  return {first + r % rows, r / rows};
}

struct Args {
  const float* a;
  const float* b;
  int m, n, k, lda, ldb, group;
};

// Where producer thread t_wg's chunks of a stage come from and go: chunk c = i * 128 + t_wg
// (i < 24) is row c / 8 of the stage (A's 128 rows, then B's 256), 16-byte column q = c % 8;
// it lands at row * 128 + ((q ^ (row % 8)) << 4), the 128-byte swizzle TMA writes and the
// wgmma descriptors read. Since i * 128 / 8 is a multiple of 8, row % 8 = (t_wg / 8) % 8.
//
// NN's B is stored [K][N] (MN-major) and wgmma reads it K-major, so the producer transposes:
// its B chunk ib (< 16) is 4 consecutive columns n = 4c .. 4c + 3 of k row kk, with
// c = t_wg % 8 + 8 (ib / 2) and kk = 16 (ib % 2) + t_wg / 8 (a warp loads 4 k rows x 128
// bytes), and goes to shared memory as 4 words: column n's row at n * 128, chunk
// (kk / 4) ^ (n % 8), word kk % 4. Store s of a chunk writes its element (s + rot) % 4,
// rot = (t_wg / 2) % 4, so that a warp's 32 words land on 32 banks (8 values of n % 8 by
// 4 of kk % 4, the chunk's XOR constant over the warp).
struct Chunks {
  int row0, q;          // this thread's row within each group of 16 rows, its column chunk
  unsigned smem_off;    // its byte offset within each group of 16 rows
  int nn_c, nn_kk, rot;  // NN's B: this thread's n chunk (of each pair of chunk rows), k row, rotation
  __device__ explicit Chunks(int t_wg)
      : row0(t_wg >> 3),
        q(t_wg & 7),
        smem_off((t_wg >> 3) * 128 + (((t_wg & 7) ^ ((t_wg >> 3) & 7)) << 4)),
        nn_c(t_wg & 7),
        nn_kk(t_wg >> 3),
        rot((t_wg >> 1) & 3) {}
};

// The 16 bytes of k row `kk` (of K), columns n .. n + 3 (of N) of an MN-major operand; zeros
// outside.
__device__ __forceinline__ uint4 load_chunk_mn(const float* base, int64_t ld, int kk, int k, int n, int cols) {
  uint4 v = make_uint4(0, 0, 0, 0);
  if (kk < k) {
    const float* p = base + static_cast<int64_t>(kk) * ld + n;
    if (n + 4 <= cols) {
      v = ldg_v4(p);
    } else {
      if (n + 0 < cols) v.x = ldg_u32(p + 0);
      if (n + 1 < cols) v.y = ldg_u32(p + 1);
      if (n + 2 < cols) v.z = ldg_u32(p + 2);
    }
  }
  return v;
}

__device__ __forceinline__ uint32_t pick(uint4 v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

// The 16 bytes of row `grow` (of `rows`), columns kk..kk+3 (of K), rounded; zeros outside.
__device__ __forceinline__ uint4 load_chunk(const float* base, int64_t ld, int grow, int rows, int kk, int k) {
  uint4 v = make_uint4(0, 0, 0, 0);
  if (grow < rows) {
    const float* p = base + static_cast<int64_t>(grow) * ld + kk;
    if (kk + 4 <= k) {
      v = ldg_v4(p);
    } else {
      if (kk + 0 < k) v.x = ldg_u32(p + 0);
      if (kk + 1 < k) v.y = ldg_u32(p + 1);
      if (kk + 2 < k) v.z = ldg_u32(p + 2);
    }
  }
  return v;
}

// Batch `bi` (chunks bi * B .. bi * B + B - 1 of this thread) of the stage of tile (m0, n0), k0.
template <int B, bool kBMN>
__device__ __forceinline__ void load_batch(uint4 (&buf)[B], int bi, const Args& p, const Chunks& ch, int m0, int n0,
                                           int k0) {
#pragma unroll
  for (int j = 0; j < B; ++j) {
    const int i = bi * B + j;  // compile-time after unrolling
    const int row = i * 16 + ch.row0;
    const int kk = k0 + 4 * ch.q;
    if (i < 8) {
      buf[j] = load_chunk(p.a, p.lda, m0 + row, p.m, kk, p.k);
    } else if (!kBMN) {
      buf[j] = load_chunk(p.b, p.ldb, n0 + row - BM, p.n, kk, p.k);
    } else {
      const int ib = i - 8;
      buf[j] = load_chunk_mn(p.b, p.ldb, k0 + 16 * (ib % 2) + ch.nn_kk, p.k, n0 + 4 * (ch.nn_c + 8 * (ib / 2)), p.n);
    }
  }
}

template <int B, bool kBMN>
__device__ __forceinline__ void store_batch(const uint4 (&buf)[B], int bi, unsigned stage, const Chunks& ch) {
#pragma unroll
  for (int j = 0; j < B; ++j) {
    const int i = bi * B + j;
    const uint4 v = buf[j];
    if (i < 8 || !kBMN) {
      st_shared_v4(stage + i * 2048 + ch.smem_off, make_uint4(rna(v.x), rna(v.y), rna(v.z), rna(v.w)));
    } else {
      const int ib = i - 8, kk = 16 * (ib % 2) + ch.nn_kk, c = ch.nn_c + 8 * (ib / 2);
      const unsigned b_tile = stage + A_BYTES;
#pragma unroll
      for (int st = 0; st < 4; ++st) {
        const int e = (st + ch.rot) & 3, n = 4 * c + e;
        st_shared_u32(b_tile + n * 128 + (((kk >> 2) ^ (n & 7)) << 4) + 4 * (kk & 3), rna(pick(v, e)));
      }
    }
  }
}

// setmaxnreg moves registers within the CTA's pool, which is what its 384 threads were launched
// with (168 each: 64,512); an increase past it waits forever.
template <int MODE, int B, int D, int PR, int CR>
__global__ void __launch_bounds__(384, 1)
    tf32_gemm(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
              const __grid_constant__ CUtensorMap tma_c, Args p) {
#if CUBINS_HAS_WGMMA
  static_assert(128 * PR + 256 * CR <= 168 * 384, "producer and consumer registers within the CTA's pool");
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned ring = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned staging = ring + S * STAGE;
  const unsigned bars = staging + 2 * STAGING;  // full[S], then empty[S]
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (S + s); };
  const int wg = threadIdx.x / 128, t_wg = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full(s), MODE == kTma ? 1 : 128);
      mbar_init(empty(s), 2);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  const int tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN, tiles = tiles_m * tiles_n;
  const int ktiles = (p.k + BK - 1) / BK;
  const int my_tiles = blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PR));
    if (MODE == kTma) {
      if (t_wg == 0) {
        int it = 0;
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
          const Coord tc = tile_of(t, tiles_m, tiles_n, p.group);
          for (int kt = 0; kt < ktiles; ++kt, ++it) {
            const int s = it % S;
            mbar_wait(empty(s), ((it / S) & 1) ^ 1);
            const unsigned sa = ring + s * STAGE;
            mbar_expect_tx(full(s), STAGE);
            tma_load(sa, &tma_a, full(s), kt * BK, tc.m * BM);
            tma_load(sa + A_BYTES, &tma_b, full(s), kt * BK, tc.n * BN);
          }
        }
      }
    } else {
      // Every k tile of this CTA in order, `it` = tile index x ktiles + kt; batch bi + D of the
      // stream is loaded once batch bi is stored (its registers free), so D batches are in
      // flight across stage boundaries.
      constexpr int NB = CHUNKS_PER_THREAD / B;
      static_assert(CHUNKS_PER_THREAD % B == 0 && NB % D == 0, "whole batches, whole rounds of the pipeline");
      const Chunks ch(t_wg);
      const int total = my_tiles * ktiles;
      auto origin = [&](int it, int& m0, int& n0, int& k0) {
        const int ti = it / ktiles, kt = it - ti * ktiles;
        const Coord tc = tile_of(blockIdx.x + ti * gridDim.x, tiles_m, tiles_n, p.group);
        m0 = tc.m * BM;
        n0 = tc.n * BN;
        k0 = kt * BK;
      };
      uint4 buf[D][B];
      int m0 = 0, n0 = 0, k0 = 0;
      if (total > 0) {
        origin(0, m0, n0, k0);
#pragma unroll
        for (int d = 0; d < D; ++d) load_batch<B, MODE == kRegNN>(buf[d], d, p, ch, m0, n0, k0);
      }
      for (int it = 0; it < total; ++it) {
        const int s = it % S;
        int nm0 = 0, nn0 = 0, nk0 = 0;
        const bool more = it + 1 < total;
        if (more) origin(it + 1, nm0, nn0, nk0);
        mbar_wait(empty(s), ((it / S) & 1) ^ 1);
        const unsigned stage = ring + s * STAGE;
#pragma unroll
        for (int bi = 0; bi < NB; ++bi) {
          store_batch<B, MODE == kRegNN>(buf[bi % D], bi, stage, ch);
          if (bi + D < NB) {
            load_batch<B, MODE == kRegNN>(buf[bi % D], bi + D, p, ch, m0, n0, k0);
          } else if (more) {
            load_batch<B, MODE == kRegNN>(buf[bi % D], bi + D - NB, p, ch, nm0, nn0, nk0);
          }
        }
        fence_async_shared();
        mbar_arrive(full(s));
        m0 = nm0;
        n0 = nn0;
        k0 = nk0;
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CR));
    const int cw = wg - 1;
    const uint64_t da0 = smem_descriptor(ring + cw * PANEL, 16, 1024);
    const uint64_t db0 = smem_descriptor(ring + A_BYTES, 16, 1024);
    const int warp = t_wg / 32, lane = t_wg % 32;
    const unsigned my_staging = staging + cw * STAGING;
    auto release = [&](int s) {
      if (t_wg == 0) mbar_arrive(empty(s));
    };
    float d[128];
    int it = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      const Coord tc = tile_of(t, tiles_m, tiles_n, p.group);
#pragma unroll
      for (int i = 0; i < 128; ++i) d[i] = 0.0f;
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        const int s = it % S;
        mbar_wait(full(s), (it / S) & 1);
        const uint64_t off = static_cast<uint64_t>(s * STAGE) >> 4;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
          wgmma_m64n256<0, 0>(d, da0 + off + ((ks * 32) >> 4), db0 + off + ((ks * 32) >> 4), float{});
        }
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > 0) release((it - 1) % S);
      }
      wgmma_wait<0>();
      if (ktiles > 0) release((it - 1) % S);
#pragma unroll
      for (int i = 0; i < 128; ++i) pin_register(d[i]);
      // Accumulator 4j + 2h + r of lane l: row 16 warp + l / 4 + 8h, column 8j + 2 (l % 4) + r.
      // Staging boxes: 64 rows x 32 f32 columns (128 bytes a row) in the 128-byte swizzle, the
      // 16-byte chunk q of row r at q ^ (r % 8); a part is 64 columns, two boxes.
      constexpr int kParts = 4, kJ = BN / 8 / kParts, kBoxes = 2;
#pragma unroll
      for (int part = 0; part < kParts; ++part) {
        if (t_wg == 0) bulk_wait_read();
        consumer_sync(cw);
#pragma unroll
        for (int jj = 0; jj < kJ; ++jj) {
          const int j = part * kJ + jj, box = jj / 4;
          const int chunk = 2 * (jj % 4) + (lane % 4) / 2, within = 8 * (lane % 2);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = warp * 16 + lane / 4 + 8 * h;
            const unsigned addr = my_staging + box * BOX + r * 128 + ((chunk ^ (r & 7)) << 4) + within;
            st_shared_v2(addr, d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
          }
        }
        fence_async_shared();
        consumer_sync(cw);
        if (t_wg == 0) {
#pragma unroll
          for (int b = 0; b < kBoxes; ++b) {
            tma_store(&tma_c, my_staging + b * BOX, tc.n * BN + (part * kBoxes + b) * 32, tc.m * BM + cw * 64);
          }
          bulk_commit();
        }
      }
    }
    if (t_wg == 0) bulk_wait_all();
  }
#else
  __trap();
#endif
}

// The rounding pass: y = rna(x), 16 bytes a thread a step.
__global__ void round_pass(const uint4* __restrict__ x, uint4* __restrict__ y, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = x[i];
    y[i] = make_uint4(rna(v.x), rna(v.y), rna(v.z), rna(v.w));
  }
}
}  // namespace tw

// ---- host

static PFN_cuTensorMapEncodeTiled_v12000 g_encode;

// A 2-D f32 tensor map: `inner` contiguous elements per row, `outer` rows `ld` apart, boxes of
// box_inner x box_outer, 128-byte swizzle, zero fill out of bounds.
static CUtensorMap tensor_map(const void* base, int inner, int outer, int ld, int box_inner, int box_outer) {
  CUtensorMap map;
  cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 4};
  cuuint32_t box[2] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(box_outer)};
  cuuint32_t estr[2] = {1, 1};
  CUresult r = g_encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<void*>(base), dims, strides, box, estr,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    printf("cuTensorMapEncodeTiled: %d (inner %d outer %d ld %d box %d x %d)\n", (int)r, inner, outer, ld, box_inner,
           box_outer);
    exit(1);
  }
  return map;
}

// NT: A [M][K], B [N][K]; NN: A [M][K], B [K][N] (only the kRegNN producer takes it).
struct Problem {
  bool nn;
  int m, n, k;
  int ldb() const { return nn ? n : k; }
};

enum Rounding { kNearest, kTruncate };
struct Config {
  const char* name;
  int mode;  // tw::Mode
  bool pass;
  int batch, depth, prod_regs, cons_regs;
  Rounding rounding;
};

static int g_sms;
static float* g_workspace;  // the pass's rounded A, then B

template <int MODE, int B, int D, int PR, int CR>
static void launch_kernel(const Problem& p, const CUtensorMap& ma, const CUtensorMap& mb, const CUtensorMap& mc,
                          const float* a, const float* b, cudaStream_t s) {
  static bool ready = false;
  if (!ready) {
    CK(cudaFuncSetAttribute(tw::tf32_gemm<MODE, B, D, PR, CR>, cudaFuncAttributeMaxDynamicSharedMemorySize, tw::SMEM));
    ready = true;
  }
  const int tiles = ((p.m + tw::BM - 1) / tw::BM) * ((p.n + tw::BN - 1) / tw::BN);
  const tw::Args args{a, b, p.m, p.n, p.k, p.k, p.ldb(), 16};
  tw::tf32_gemm<MODE, B, D, PR, CR><<<std::min(tiles, g_sms), 384, tw::SMEM, s>>>(ma, mb, mc, args);
  CK(cudaGetLastError());
}

// The instantiations the configs name.
static void launch(const Problem& p, const Config& cfg, const float* a, const float* b, float* c, cudaStream_t s) {
  if (cfg.pass) {
    const size_t na4 = static_cast<size_t>(p.m) * p.k / 4, nb4 = static_cast<size_t>(p.n) * p.k / 4;
    tw::round_pass<<<4 * g_sms, 256, 0, s>>>(reinterpret_cast<const uint4*>(a), reinterpret_cast<uint4*>(g_workspace),
                                             na4);
    tw::round_pass<<<4 * g_sms, 256, 0, s>>>(reinterpret_cast<const uint4*>(b),
                                             reinterpret_cast<uint4*>(g_workspace) + na4, nb4);
    a = g_workspace;
    b = g_workspace + na4 * 4;
  }
  // The operands' maps only where TMA reads them (NT); the register producers read pointers.
  CUtensorMap ma, mb;
  memset(&ma, 0, sizeof ma);
  memset(&mb, 0, sizeof mb);
  if (cfg.mode == tw::kTma) {
    ma = tensor_map(a, p.k, p.m, p.k, 32, tw::BM);
    mb = tensor_map(b, p.k, p.n, p.k, 32, tw::BN);
  }
  const CUtensorMap mc = tensor_map(c, p.n, p.m, p.n, 32, 64);
  const int key = cfg.mode * 1000000 + cfg.batch * 10000 + cfg.depth * 1000 + cfg.prod_regs;
  switch (key) {
    case 0 * 1000000 + 0 * 10000 + 0 * 1000 + 40: launch_kernel<tw::kTma, 1, 1, 40, 232>(p, ma, mb, mc, a, b, s); break;
    case 1 * 1000000 + 6 * 10000 + 2 * 1000 + 96: launch_kernel<tw::kReg, 6, 2, 96, 200>(p, ma, mb, mc, a, b, s); break;
    case 1 * 1000000 + 4 * 10000 + 3 * 1000 + 96: launch_kernel<tw::kReg, 4, 3, 96, 200>(p, ma, mb, mc, a, b, s); break;
    case 1 * 1000000 + 6 * 10000 + 4 * 1000 + 128: launch_kernel<tw::kReg, 6, 4, 128, 184>(p, ma, mb, mc, a, b, s); break;
    case 1 * 1000000 + 12 * 10000 + 2 * 1000 + 136: launch_kernel<tw::kReg, 12, 2, 136, 184>(p, ma, mb, mc, a, b, s); break;
    case 2 * 1000000 + 12 * 10000 + 2 * 1000 + 136: launch_kernel<tw::kRegNN, 12, 2, 136, 184>(p, ma, mb, mc, a, b, s); break;
    case 2 * 1000000 + 6 * 10000 + 4 * 1000 + 128: launch_kernel<tw::kRegNN, 6, 4, 128, 184>(p, ma, mb, mc, a, b, s); break;
    default: printf("no kernel for %s\n", cfg.name); exit(1);
  }
}

typedef int (*gemmex_t)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                        const void*, void*, int, int, int, int);
static gemmex_t g_gemmex;
static void* g_handle;

// Row-major C = A op(B) is, column-major, C^T = op(B)^T A^T: cuBLAS's A is our B, its B our A
// (not transposed). NT: op(A) = T (1); NN: N (0), B [K][N] read as N x K column-major with
// leading dimension N. CUDA_R_32F = 0, CUBLAS_COMPUTE_32F_FAST_TF32 = 77.
static void cublas(const Problem& p, const float* a, const float* b, float* c) {
  const float one = 1, zero = 0;
  const int st = g_gemmex(g_handle, p.nn ? 0 : 1, 0, p.n, p.m, p.k, &one, b, 0, p.ldb(), a, 0, p.k, &zero, c, 0, p.n,
                          77, -1);
  if (st) {
    printf("cublasGemmEx status %d\n", st);
    exit(1);
  }
}

__global__ void fill(float* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 2654435761u ^ seed;
    x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
    p[i] = (x & 0xffffff) / 8388608.0f - 1.0f;  // [-1, 1), every mantissa bit random
  }
}
__global__ void poison(float* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    reinterpret_cast<uint32_t*>(p)[i] = 0x7FA5A5A5u;
}
__global__ void maxdiff(const float* a, const float* b, size_t n, float* out) {
  float md = 0, mr = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float dd = fabsf(a[i] - b[i]);
    md = (dd != dd) ? 1e30f : fmaxf(md, dd);
    mr = fmaxf(mr, fabsf(b[i]));
  }
  atomicMax(reinterpret_cast<int*>(&out[0]), __float_as_int(md));
  atomicMax(reinterpret_cast<int*>(&out[1]), __float_as_int(mr));
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}
// tf32 as cvt.rna (to nearest, ties away from zero) or as wgmma reads raw bits (truncated).
static double tf32(float x, Rounding r) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u = r == kNearest ? (u + 0x1000u) & 0xFFFFE000u : u & 0xFFFFE000u;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int g_fail = 0;

static void run(const Problem& p, const std::vector<Config>& cfgs) {
  const size_t na = (size_t)p.m * p.k, nb = (size_t)p.n * p.k, nc = (size_t)p.m * p.n;
  const size_t set_bytes = (na + nb) * 4;
  const int sets = std::max<int>(2, std::min<int>(8, (int)((300u << 20) / set_bytes) + 1));
  std::vector<float*> A(sets), B(sets);
  for (int i = 0; i < sets; ++i) {
    CK(cudaMalloc(&A[i], na * 4)); CK(cudaMalloc(&B[i], nb * 4));
    fill<<<1024, 256>>>(A[i], na, 17 + i); fill<<<1024, 256>>>(B[i], nb, 1001 + i);
  }
  CK(cudaMalloc(&g_workspace, (na + nb) * 4));
  float *C, *Cref;
  CK(cudaMalloc(&C, nc * 4)); CK(cudaMalloc(&Cref, nc * 4));
  float* dd; CK(cudaMalloc(&dd, 8));
  cudaStream_t s = 0;
  CK(cudaDeviceSynchronize());
  cublas(p, A[0], B[0], Cref);
  std::vector<float> ha(na), hb(nb), hr(nc);
  CK(cudaMemcpy(ha.data(), A[0], na * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), B[0], nb * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hr.data(), Cref, nc * 4, cudaMemcpyDeviceToHost));
  // float64 references on 256 sampled outputs: operands exact, rounded to nearest, truncated.
  struct Sample { int i, j; double exact, nearest, truncated, mag; };
  std::vector<Sample> samples;
  uint64_t x = 12345;
  for (int q = 0; q < 256; ++q) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    Sample sm{(int)((x >> 33) % p.m), (int)((x >> 13) % p.n), 0, 0, 0, 0};
    for (int kk = 0; kk < p.k; ++kk) {
      const float av = ha[(size_t)sm.i * p.k + kk];
      const float bv = p.nn ? hb[(size_t)kk * p.n + sm.j] : hb[(size_t)sm.j * p.k + kk];
      sm.exact += (double)av * bv;
      sm.nearest += tf32(av, kNearest) * tf32(bv, kNearest);
      sm.truncated += tf32(av, kTruncate) * tf32(bv, kTruncate);
      sm.mag += fabs((double)av * bv);
    }
    samples.push_back(sm);
  }
  double cublas_rms = 0;
  for (const Sample& sm : samples) {
    const double e = hr[(size_t)sm.i * p.n + sm.j] - sm.exact;
    cublas_rms += e * e;
  }
  cublas_rms = sqrt(cublas_rms / samples.size());
  const double flop = 2.0 * p.m * p.n * p.k;
  for (const Config& cfg : cfgs) {
    poison<<<1024, 256>>>(C, nc);
    launch(p, cfg, A[0], B[0], C, s);
    CK(cudaDeviceSynchronize());
    CK(cudaMemset(dd, 0, 8));
    maxdiff<<<1024, 256>>>(C, Cref, nc, dd);
    float h[2]; CK(cudaMemcpy(h, dd, 8, cudaMemcpyDeviceToHost));
    std::vector<float> hc(nc);
    CK(cudaMemcpy(hc.data(), C, nc * 4, cudaMemcpyDeviceToHost));
    // |ours - f64| in units of 2^-20 of the products' magnitudes, against the operands rounded
    // to nearest and truncated (products of tf32 values are exact in f32: only the f32
    // accumulation differs from the config's own reference). The gate allows 2^-16 against the
    // config's rounding (a misplaced operand is off by the magnitude itself); the rounding shows
    // in which reference is nearer and in the rms error against cuBLAS's.
    double near = 0, trunc = 0, rms = 0;
    for (const Sample& sm : samples) {
      const double got = hc[(size_t)sm.i * p.n + sm.j];
      const double unit = sm.mag * 0x1p-20 + 1e-30;
      near = std::max(near, std::isfinite(got) ? fabs(got - sm.nearest) / unit : 1e30);
      trunc = std::max(trunc, std::isfinite(got) ? fabs(got - sm.truncated) / unit : 1e30);
      rms += (got - sm.exact) * (got - sm.exact);
    }
    rms = sqrt(rms / samples.size());
    const double worst = cfg.rounding == kNearest ? near : trunc;
    const double rel = h[0] / std::max(h[1], 1e-30f);
    const bool ok = rel < 1e-2 && worst <= 16.0;
    if (!ok) g_fail++;
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const int reps = 8, rounds = 15;
    for (int w = 0; w < 2; ++w) { launch(p, cfg, A[w % sets], B[w % sets], C, s); cublas(p, A[w % sets], B[w % sets], C); }
    std::vector<double> tw_, tc, ratio;
    int rot = 0;
    for (int r = 0; r < rounds; ++r) {
      double t2[2];
      for (int o = 0; o < 2; ++o) {
        const int who = (r & 1) ? 1 - o : o;  // 0: ours, 1: cuBLAS
        CK(cudaEventRecord(e0, s));
        for (int i = 0; i < reps; ++i, ++rot) {
          if (who == 0) launch(p, cfg, A[rot % sets], B[rot % sets], C, s);
          else cublas(p, A[rot % sets], B[rot % sets], C);
        }
        CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        t2[who] = ms * 1e3 / reps;
      }
      tw_.push_back(t2[0]); tc.push_back(t2[1]); ratio.push_back(t2[1] / t2[0]);
    }
    printf("ROW %s m=%d n=%d k=%d cfg=%s sets=%d ours_us=%.1f cublas_us=%.1f ours_tflops=%.0f cublas_tflops=%.0f "
           "ratio_median=%.3f ratio_p05=%.3f ratio_p95=%.3f rel_vs_cublas=%.2e f64_nearest=%.2f f64_truncated=%.2f "
           "rms_vs_cublas=%.2f %s\n",
           p.nn ? "NN" : "NT", p.m, p.n, p.k, cfg.name, sets, median(tw_), median(tc), flop / median(tw_) * 1e-6,
           flop / median(tc) * 1e-6, median(ratio), pct(ratio, 0.05), pct(ratio, 0.95), rel, near, trunc,
           rms / std::max(cublas_rms, 1e-300), ok ? "OK" : "WRONG");
    printf("RAW %s m=%d n=%d k=%d cfg=%s ours_us=", p.nn ? "NN" : "NT", p.m, p.n, p.k, cfg.name);
    for (double v : tw_) printf("%.2f,", v);
    printf(" cublas_us=");
    for (double v : tc) printf("%.2f,", v);
    printf("\n");
    fflush(stdout);
    cudaEventDestroy(e0); cudaEventDestroy(e1);
  }
  for (int i = 0; i < sets; ++i) { cudaFree(A[i]); cudaFree(B[i]); }
  cudaFree(C); cudaFree(Cref); cudaFree(dd); cudaFree(g_workspace);
}

int main(int argc, char** argv) {
  const char* libs[] = {"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so", "libcublas.so.13",
                        "libcublas.so"};
  void* lib = nullptr;
  for (const char* l : libs) if ((lib = dlopen(l, RTLD_NOW))) { printf("cuBLAS: %s\n", l); break; }
  if (!lib) { printf("no cuBLAS: %s\n", dlerror()); return 1; }
  g_gemmex = (gemmex_t)dlsym(lib, "cublasGemmEx");
  if (((int (*)(void**))dlsym(lib, "cublasCreate_v2"))(&g_handle)) { printf("cublasCreate failed\n"); return 1; }
  void* wsp; CK(cudaMalloc(&wsp, 32 << 20));
  ((int (*)(void*, void*, size_t))dlsym(lib, "cublasSetWorkspace_v2"))(g_handle, wsp, 32 << 20);
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&g_encode), 12000,
                                      cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !g_encode) { printf("no cuTensorMapEncodeTiled\n"); return 1; }
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  printf("device: %s, %d SMs\n", prop.name, g_sms);
  const std::vector<Config> all = {
      {"tma_trunc", tw::kTma, false, 0, 0, 40, 232, kTruncate},
      {"pass_tma", tw::kTma, true, 0, 0, 40, 232, kNearest},
      {"reg_b6_d2", tw::kReg, false, 6, 2, 96, 200, kNearest},
      {"reg_b4_d3", tw::kReg, false, 4, 3, 96, 200, kNearest},
      {"reg_b6_d4", tw::kReg, false, 6, 4, 128, 184, kNearest},
      {"reg_b12_d2", tw::kReg, false, 12, 2, 136, 184, kNearest},
      {"nn_b12_d2", tw::kRegNN, false, 12, 2, 136, 184, kNearest},
      {"nn_b6_d4", tw::kRegNN, false, 6, 4, 128, 184, kNearest},
  };
  // TW_CONFIGS=name,name: only those (a hang in one then ends only its own process).
  std::vector<Config> chosen;
  const char* only = getenv("TW_CONFIGS");
  for (const Config& c : all) {
    bool take = !only;
    for (const char* t = only; t && *t; t += strcspn(t, ",") + (t[strcspn(t, ",")] ? 1 : 0)) {
      take |= strncmp(t, c.name, strcspn(t, ",")) == 0 && strlen(c.name) == strcspn(t, ",");
    }
    if (take) chosen.push_back(c);
  }
  for (int i = 1; i + 3 < argc; i += 4) {
    const Problem p{!strcmp(argv[i], "NN"), atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3])};
    if (p.k % 4 != 0 || p.ldb() % 4 != 0) {
      printf("K (and N for NN) must be a multiple of 4 (16-byte rows for the maps and loads): %d %d\n", p.k, p.n);
      return 1;
    }
    // NT takes every config but the NN producers; NN only those.
    std::vector<Config> fit;
    for (const Config& c : chosen) {
      if ((c.mode == tw::kRegNN) == p.nn) fit.push_back(c);
    }
    if (!fit.empty()) run(p, fit);
  }
  printf("wrong: %d\n", g_fail);
  return g_fail ? 2 : 0;
}
