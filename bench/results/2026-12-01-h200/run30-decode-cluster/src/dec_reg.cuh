// Register-streaming decode variants ("r" family): like the crate kernel (weights straight
// from global memory into mma fragment registers, warps split K in 32-wide steps), plus
//  - NI 16-column mma tiles per block (BN = 16 NI: 16, 32 or 64 columns);
//  - MT = 1 row tile of A for M <= 8 (the launcher dispatches on M), 2 for M <= 16;
//  - PIPE 0 (rnd): round structure like the crate kernel (U steps loaded, then consumed);
//    1 (roll): slot u refilled right after its mma (ptxas sinks the refills below the round's
//    mma, so in SASS it is nearly a round too); 2 (db): two register sets, the loads of round
//    j + 1 issued before the mma of round j (the mma overlap the next round's latency);
//  - CL: split-K over a thread-block cluster of CL CTAs (the cluster acts as one block of
//    CL * WARPS warps; partial sums exchanged through distributed shared memory, summed in
//    rank order -> deterministic, no workspace, no atomics);
//  - WC: column groups per block -- warp w works on columns 16 NI (w % WC) .. of the block
//    and k slot w / WC, so WC warps read the same A chunk at about the same time (L1 hits:
//    L2 traffic for A divided by WC); BN = 16 NI WC;
//  - LD: cache hint of the weight loads (dec_common.cuh);
//  - OPT bits: 1 PURE (weight read only, no A, no mma: not a GEMM), 2 PDL (programmatic
//    dependent launch: first round of weights before griddepcontrol.wait -- assumes the
//    previous kernel does not write B), 4 STAG (column block c starts its K walk at step
//    (c % 16) * steps / 16 and wraps: concurrent blocks at different K offsets), 8 ASMEM (A
//    staged once per block in shared memory with cp.async -- K <= kAsmemMaxK -- and read
//    with 16-byte shared loads instead of a global load per step; the fill overlaps the
//    first round of weight loads).
// NN with NI = 4: lane (g, t) loads 16 bytes (columns 8g .. 8g + 7) of each of its 8 k rows;
// N % 4 == 0 (not 8): the last group may be half in, loaded with an 8-byte load.
#pragma once
#include "dec_common.cuh"
#include "cubins/common.cuh"

namespace dec {

constexpr int kAsmemMaxK = 4096;
constexpr int kDecodeMaxM = 16;

template <class T, Layout L, int NI, int MT, int WARPS, int U, int CL, int LD, int PIPE, int OPT, int WC>
__device__ __forceinline__ void dec_reg(const GemmArgs& p) {
  constexpr bool PURE = OPT & 1, PDL = OPT & 2, STAG = OPT & 4, ASMEM = OPT & 8;
  constexpr bool NOA1 = OPT & 16, NOMMA1 = OPT & 32;  // diagnostics (not a GEMM)
  // 64 ATMA: A through a two-slot shared-memory ring filled by bulk copies (TMA), one round
  // (U x WARPS steps) per slot; the weights stay on the register path.
  constexpr bool ATMA = OPT & 64;
  static_assert(!ATMA || (PIPE == 0 && CL == 1 && WC == 1 && !ASMEM), "ATMA: round structure, one CTA");
  constexpr int NB = PIPE == 2 ? 2 : 1;  // register sets
  extern __shared__ float red[];  // WARPS x NACC x 32
  static_assert(WARPS % WC == 0, "column groups divide the warps");
  constexpr int BN = 16 * NI * WC, NACC = NI * MT * 4, KW = WARPS / WC, WS = KW * CL;
  constexpr bool NT = L == Layout::NT;
  static_assert(NT || NI == 2 || NI == 4, "NN: 4 or 8 columns per lane");
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int rank = CL > 1 ? static_cast<int>(blockIdx.x) % CL : 0;
  const int cblock = static_cast<int>(blockIdx.x) / CL;
  const int n_block = cblock * BN;
  const int wc = warp % WC, kw = warp / WC;  // column group, k slot
  const int n_warp = n_block + 16 * NI * wc;
  const T* A = reinterpret_cast<const T*>(p.a);
  const T* B = reinterpret_cast<const T*>(p.b);
  const int steps = ceil_div(p.k, 32);
  const int wslot = rank * KW + kw;
  // Stagger groups: 16 (the crate), or 32 / 64 / 256 with OPT bits 512 / 128 / 256.
  constexpr int SG = (OPT & 512) ? 32 : (OPT & 128) ? 64 : (OPT & 256) ? 256 : (OPT & 2048) ? 128 : (OPT & 4096) ? 48 : 16;
  const int shift = STAG ? (cblock % SG) * steps / SG : 0;
  uint64_t pol = 0;
  if constexpr (LD >= 2) pol = policy_evict_first();

  float acc[NI][MT][4];
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][mt][r] = 0.0f;

  uint4 a[NB][U][MT];
  uint4 bnt[NB][NT ? U : 1][NI][2];
  uint32_t bnn[NB][NT ? 1 : U][8][NI];

  // Lane-invariant bases: the step only adds s * 32 (NT, A) or s * 32 * ldb (NN).
  const T* a_base[MT];
  bool a_ok[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int m = g + 8 * mt;
    a_ok[mt] = m < p.m && !PURE;
    a_base[mt] = A + static_cast<int64_t>(a_ok[mt] ? m : 0) * p.lda + 8 * t;
  }
  // ASMEM: rows of A in shared memory after the reduction buffer, a_pitch bytes apart (one
  // extra 16-byte chunk per row keeps lanes (g, t) on distinct bank groups).
  const int a_pitch = (ceil_div(p.k, 8) + 1) * 16;
  char* a_smem = reinterpret_cast<char*>(red) + WARPS * NACC * 32 * 4;
  if constexpr (ASMEM) {
    const int chunks = ceil_div(p.k, 8);
    for (int c = tid; c < p.m * chunks; c += WARPS * 32) {
      const int m = c / chunks, q = c % chunks;
      char* dst = a_smem + m * a_pitch + q * 16;
      if (8 * q + 8 <= p.k) cubins::cp_async_16(dst, A + static_cast<int64_t>(m) * p.lda + 8 * q);
      else *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);  // K % 8 != 0 is not a decode shape
    }
    cubins::cp_async_commit();
  }
  constexpr int RSTEPS = U * WARPS;               // steps per round = per ring slot
  constexpr int RPITCH = RSTEPS * 64 + 64;        // bytes per A row in a slot (+64: bank shift)
  constexpr int RROWS = 8 * MT;
  uint64_t* bars = reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(red) + WARPS * NACC * 32 * 4);
  char* ring = reinterpret_cast<char*>(bars + 2);
  const uint32_t ring_s = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  const uint32_t bars_s = static_cast<uint32_t>(__cvta_generic_to_shared(bars));
  // Round j's A (rows < M) into slot j % 2: walk positions j R .. j R + R - 1 are physical steps
  // (pos + shift) % steps, contiguous except for one wrap.
  auto issue_a = [&](int j) {
    const int first = j * RSTEPS;
    if (first >= steps) return;
    const int n = min(RSTEPS, steps - first);
    int p0 = first + shift;
    if (p0 >= steps) p0 -= steps;
    const int c1 = min(n, steps - p0);
    const int b1 = (min((p0 + c1) * 32, p.k) - p0 * 32) * 2;
    const int b2 = c1 < n ? min((n - c1) * 32, p.k) * 2 : 0;
    const int rows = min(p.m, RROWS);
    const uint32_t bar = bars_s + 8 * (j & 1);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(rows * (b1 + b2)) : "memory");
    const uint32_t slot = ring_s + (j & 1) * RROWS * RPITCH;
    for (int m = 0; m < rows; ++m) {
      const T* src = A + static_cast<int64_t>(m) * p.lda;
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       slot + m * RPITCH),
                   "l"(src + p0 * 32), "r"(b1), "r"(bar)
                   : "memory");
      if (b2)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                         slot + m * RPITCH + c1 * 64),
                     "l"(src), "r"(b2), "r"(bar)
                     : "memory");
    }
  };
  auto wait_a = [&](int j) {
    const uint32_t bar = bars_s + 8 * (j & 1), parity = (j >> 1) & 1;
    asm volatile(
        "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
  };
  if constexpr (ATMA) {
    if (tid == 0) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bars_s) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bars_s + 8) : "memory");
    }
    // Never-written ring bytes (rows >= M, the K tail) must read as zeros, not as NaN.
    for (int i = tid; i < 2 * RROWS * RPITCH / 16; i += WARPS * 32)
      reinterpret_cast<uint4*>(ring)[i] = make_uint4(0, 0, 0, 0);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    __syncthreads();
    if (tid == 0) issue_a(0);
  }
  const T* b_base[NT ? NI : 1][NT ? 2 : 1];
  bool b_ok[NT ? NI : 1][NT ? 2 : 1];
  bool b_full = true;  // NN NI = 4: all 8 columns in (else only 4)
  if constexpr (NT) {
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
      for (int h2 = 0; h2 < 2; ++h2) {
        const int n = n_warp + 16 * i + 8 * h2 + g;
        b_ok[i][h2] = n < p.n;
        b_base[i][h2] = B + static_cast<int64_t>(b_ok[i][h2] ? n : 0) * p.ldb + 8 * t;
      }
  } else {
    const int n = n_warp + 2 * NI * g;
    b_ok[0][0] = n < p.n;
    b_full = n + 2 * NI <= p.n;
    b_base[0][0] = B + static_cast<int64_t>(8 * t) * p.ldb + (b_ok[0][0] ? n : 0);
  }
  const int64_t ldb = p.ldb;

  // part: 0 = A and B, 1 = B only, 2 = A only. bf: register set.
  auto load = [&](int bf, int u, int s, int part) {
    int sr = s + shift;
    if (STAG && sr >= steps) sr -= steps;
    const int kk = sr * 32;
    const bool k_in = s < steps && kk + 8 * t < p.k;
    if (part != 1) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if (NOA1 && mt > 0) {
          a[bf][u][mt] = a[bf][u][0];
        } else if constexpr (ATMA) {
          const bool ok = k_in && a_ok[mt];
          const uint32_t at = ring_s + ((s / RSTEPS) & 1) * RROWS * RPITCH + (g + 8 * mt) * RPITCH +
                              (s % RSTEPS) * 64 + 16 * t;
          uint4 v = make_uint4(0, 0, 0, 0);
          if (ok)
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                         : "r"(at));
          a[bf][u][mt] = v;
        } else if constexpr (ASMEM) {
          const bool ok = k_in && a_ok[mt];
          a[bf][u][mt] = ok ? *reinterpret_cast<const uint4*>(a_smem + (g + 8 * mt) * a_pitch + (kk + 8 * t) * 2)
                            : make_uint4(0, 0, 0, 0);
        } else {
          a[bf][u][mt] = ldw16<9>(a_base[mt] + kk, k_in && a_ok[mt], pol);
        }
      }
    }
    if (part == 2) return;
    if constexpr (NT) {
#pragma unroll
      for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h2 = 0; h2 < 2; ++h2) bnt[bf][u][i][h2] = ldw16<LD>(b_base[i][h2] + kk, k_in && b_ok[i][h2], pol);
    } else {
      const T* src0 = b_base[0][0] + kk * ldb;
      const bool ok = k_in && b_ok[0][0];
#pragma unroll
      for (int r = 0; r < 8; ++r) {
        const T* src = src0 + r * ldb;
        if constexpr (NI == 2) {
          const uint2 v = ldw8<LD>(src, ok, pol);
          bnn[bf][u][r][0] = v.x;
          bnn[bf][u][r][1] = v.y;
        } else {
          uint4 v;
          if (b_full) {
            v = ldw16<LD>(src, ok, pol);
          } else {  // N % 8 == 4: columns n .. n + 3 only
            const uint2 h = ldw8<LD>(src, ok, pol);
            v = make_uint4(h.x, h.y, 0, 0);
          }
          bnn[bf][u][r][0] = v.x;
          bnn[bf][u][r][1] = v.y;
          bnn[bf][u][r][2] = v.z;
          bnn[bf][u][r][3] = v.w;
        }
      }
    }
  };
  auto compute = [&](int bf, int u) {
    uint32_t aop[2][NI][4];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < NI; ++i) {
        if constexpr (NT) {
          aop[h][i][0] = word(bnt[bf][u][i][0], 2 * h);
          aop[h][i][1] = word(bnt[bf][u][i][1], 2 * h);
          aop[h][i][2] = word(bnt[bf][u][i][0], 2 * h + 1);
          aop[h][i][3] = word(bnt[bf][u][i][1], 2 * h + 1);
        } else {
          const uint32_t w0 = bnn[bf][u][4 * h][i], w1 = bnn[bf][u][4 * h + 1][i];
          const uint32_t w2 = bnn[bf][u][4 * h + 2][i], w3 = bnn[bf][u][4 * h + 3][i];
          aop[h][i][0] = __byte_perm(w0, w1, 0x5410);
          aop[h][i][1] = __byte_perm(w0, w1, 0x7632);
          aop[h][i][2] = __byte_perm(w2, w3, 0x5410);
          aop[h][i][3] = __byte_perm(w2, w3, 0x7632);
        }
      }
    if constexpr (PURE) {  // weight read only (same pattern, no mma): keeps the loads alive
      uint32_t x = 0;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < NI; ++i) x ^= aop[h][i][0] ^ aop[h][i][1] ^ aop[h][i][2] ^ aop[h][i][3];
      acc[0][0][0] = __int_as_float(__float_as_int(acc[0][0][0]) ^ x);
    } else if constexpr (NOMMA1) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t b_ops[2] = {word(a[bf][u][0], 2 * h), word(a[bf][u][0], 2 * h + 1)};
#pragma unroll
        for (int i = 0; i < NI; ++i) MmaTraits<T>::mma(acc[i][0], aop[h][i], b_ops);
      }
#pragma unroll
      for (int mt = 1; mt < MT; ++mt)  // keep the second tile's A loads alive
        acc[0][mt][0] = __int_as_float(__float_as_int(acc[0][mt][0]) ^ a[bf][u][mt].x ^ a[bf][u][mt].w);
    } else {
      step_mma<T, NI, MT>(acc, aop, a[bf][u]);
    }
  };
  auto step_of = [&](int j, int u) { return (j * U + u) * WS + wslot; };
  auto load_round = [&](int bf, int j, int part) {
#pragma unroll
    for (int u = 0; u < U; ++u) load(bf, u, step_of(j, u), part);
  };
  auto compute_round = [&](int bf) {
#pragma unroll
    for (int u = 0; u < U; ++u) compute(bf, u);
  };

  // Round 0 (PDL: weights before the grid dependency wait, A after it).
  if constexpr (PDL) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    load_round(0, 0, 1);
    asm volatile("griddepcontrol.wait;" ::: "memory");
    load_round(0, 0, 2);
  } else if constexpr (ASMEM) {
    // Round 0's weights first, then wait for the A fill (every thread's copies, then the
    // barrier), then round 0's A.
    if constexpr (PIPE != 0) load_round(0, 0, 1);
    cubins::cp_async_wait<0>();
    __syncthreads();
    if constexpr (PIPE != 0) load_round(0, 0, 2);
  } else if constexpr (PIPE != 0) {
    load_round(0, 0, 0);
  }
  if constexpr (PIPE == 2) {
    for (int j = 0; step_of(j, 0) < steps; j += 2) {
      load_round(1, j + 1, 0);
      compute_round(0);
      if (step_of(j + 1, 0) >= steps) break;
      load_round(0, j + 2, 0);
      compute_round(1);
    }
  } else {
    // ATMA: every warp takes every round (the rounds hold block-wide barriers).
    for (int j = 0; ATMA ? j * RSTEPS < steps : step_of(j, 0) < steps; ++j) {
      if constexpr (ATMA) {
        // Round j - 1 is done everywhere: its slot takes round j + 1's A.
        __syncthreads();
        if (tid == 0) {
          asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
          issue_a(j + 1);
        }
        load_round(0, j, 1);
        wait_a(j);
        load_round(0, j, 2);
      } else if (PIPE == 0 && !(PDL && j == 0)) load_round(0, j, 0);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        compute(0, u);
        if (PIPE == 1) load(0, u, step_of(j + 1, u), 0);
      }
    }
  }

  constexpr int E = NACC * 32;
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 4; ++r) red[warp * E + ((i * MT + mt) * 4 + r) * 32 + lane] = acc[i][mt][r];
  __syncthreads();
  reduce_store<T, NT, NI, MT, WARPS, CL, WC>(p, red, tid, WARPS * 32, n_block);
}

template <class T, Layout L, int NI, int MT, int W, int U, int CL, int LD, int PIPE, int MB, int OPT, int WC>
__global__ void __launch_bounds__(W * 32, MB) k_reg(GemmArgs p) {
  dec_reg<T, L, NI, MT, W, U, CL, LD, PIPE, OPT, WC>(p);
}
template <class T, Layout L, int NI, int MT, int W, int U, int CL, int LD, int PIPE, int MB, int OPT, int WC>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(W * 32, MB) k_reg_cl(GemmArgs p) {
  dec_reg<T, L, NI, MT, W, U, CL, LD, PIPE, OPT, WC>(p);
}

template <class T, Layout L, int NI, int MT, int W, int U, int CL, int LD, int PIPE, int MB, int OPT, int WC>
void run_reg(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  constexpr int red_bytes = W * NI * MT * 4 * 32 * 4;
  // ASMEM: room for A at K <= kAsmemMaxK (the launcher takes the global-A variant past it).
  constexpr int smem = red_bytes + ((OPT & 8) ? kDecodeMaxM * (kAsmemMaxK / 8 + 1) * 16 : 0) +
                       ((OPT & 64) ? 16 + 2 * 8 * MT * (U * W * 64 + 64) : 0);
  void (*k)(GemmArgs);
  if constexpr (CL == 1) k = k_reg<T, L, NI, MT, W, U, CL, LD, PIPE, MB, OPT, WC>;
  else k = k_reg_cl<T, L, NI, MT, W, U, CL, LD, PIPE, MB, OPT, WC>;
  static bool init = false;
  if (!init) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    init = true;
  }
  if constexpr ((OPT & 2) != 0) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = g;
    cfg.blockDim = b;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cudaLaunchKernelEx(&cfg, k, p);
  } else {
    k<<<g, b, smem, s>>>(p);
  }
}
template <class T, Layout L, int NI, int W, int U, int CL, int LD, int PIPE, int MB, int OPT, int WC>
void launch_reg(const GemmArgs& p, dim3 g, dim3 b, cudaStream_t s) {
  constexpr int kNoAsmem = OPT & ~8;
  if ((OPT & 8) && p.k > kAsmemMaxK) {
    launch_reg<T, L, NI, W, U, CL, LD, PIPE, MB, kNoAsmem, WC>(p, g, b, s);
    return;
  }
  if ((OPT & 1) || p.m <= 8) run_reg<T, L, NI, 1, W, U, CL, LD, PIPE, MB, OPT, WC>(p, g, b, s);
  else run_reg<T, L, NI, 2, W, U, CL, LD, PIPE, MB, OPT, WC>(p, g, b, s);
}

}  // namespace dec

// One variant name for one layout (LAYS: NT, NN or both). OPT bit 1 (PURE): not a GEMM, unchecked.
#define REG_ONE(NAME, T, L, NI, W, U, CL, LD, PIPE, MB, OPT, WC, ID)                                                \
  static Reg reg_##ID(Variant{NAME, dt_of<T>(), L == cubins::gemm::Layout::NT ? Lay::NT : Lay::NN, 16 * NI * WC, CL, \
                              W * 32, dec::launch_reg<T, L, NI, W, U, CL, LD, PIPE, MB, OPT, WC>, nullptr, !((OPT) & 49)});
#define REG_VARIANT(ID, NAME, T, NI, W, U, CL, LD, PIPE, MB, OPT, WC)                          \
  REG_ONE(NAME, T, cubins::gemm::Layout::NT, NI, W, U, CL, LD, PIPE, MB, OPT, WC, ID##_nt) \
  REG_ONE(NAME, T, cubins::gemm::Layout::NN, NI, W, U, CL, LD, PIPE, MB, OPT, WC, ID##_nn)
#define REG_VARIANT_NT(ID, NAME, T, NI, W, U, CL, LD, PIPE, MB, OPT, WC) \
  REG_ONE(NAME, T, cubins::gemm::Layout::NT, NI, W, U, CL, LD, PIPE, MB, OPT, WC, ID##_nt)
#define REG_VARIANT_NN(ID, NAME, T, NI, W, U, CL, LD, PIPE, MB, OPT, WC) \
  REG_ONE(NAME, T, cubins::gemm::Layout::NN, NI, W, U, CL, LD, PIPE, MB, OPT, WC, ID##_nn)
