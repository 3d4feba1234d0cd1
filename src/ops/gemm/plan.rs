//! GEMM plans: which entry point, tile and launch geometry a problem gets, and the checks a
//! problem passes first. Pure (std only, no driver), so the selector is tested on machines
//! without a GPU; `tests/gemm_host.rs` also checks the planned entry points against
//! `cuda/kernels.toml`.
//!
//! The tables (the tiles of each [`SmemClass`], the entry points of each tier and layout in
//! [`schedules`], the [`flags`] bits) are generated from `cuda/gemm_catalogue.toml` into
//! `tiles.rs`, as the kernels' C++ tile tables are, so the two cannot disagree.

use std::fmt;

// By path: the tests compile this file as a module of their own (tests/gemm_common), where a
// plain `mod tiles;` would resolve to another folder.
#[path = "tiles.rs"]
mod tiles;
pub use tiles::*;

/// Which operand is stored transposed. op(A) is M x K and op(B) is K x N, storage row-major:
/// `NN` has A `[M][K]` and B `[K][N]`; `TN` has A `[K][M]`; `NT` has B `[N][K]` (the
/// `x @ w.T` of a linear layer with weights `[out][in]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    NN,
    TN,
    NT,
}

impl Layout {
    pub const ALL: [Layout; 3] = [Layout::NN, Layout::TN, Layout::NT];

    /// K is the contiguous dimension of stored A.
    pub fn a_k_major(self) -> bool {
        self != Layout::TN
    }

    /// K is the contiguous dimension of stored B.
    pub fn b_k_major(self) -> bool {
        self == Layout::NT
    }

    pub fn name(self) -> &'static str {
        match self {
            Layout::NN => "nn",
            Layout::TN => "tn",
            Layout::NT => "nt",
        }
    }
}

/// An element type of the GEMM's operands and outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    Bf16,
    F16,
    F32,
}

impl Dtype {
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::Bf16 | Dtype::F16 => 2,
            Dtype::F32 => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bf16 => "bf16",
            Dtype::F16 => "f16",
            Dtype::F32 => "f32",
        }
    }
}

/// A GEMM tier: input precision and the arithmetic behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// bf16 inputs, wgmma (sm_90a) or mma.sync m16n8k16, f32 accumulation; output bf16 or f32.
    Bf16,
    /// fp16 inputs, as `Bf16`; output fp16 or f32.
    Fp16,
    /// f32 inputs rounded to tf32 (`cvt.rna`) on tensor cores, f32 accumulation and output:
    /// mma.sync m16n8k8, or on the sm_90a route with a workspace, wgmma after an operand pass.
    Tf32,
    /// f32 FFMA, one owner per output, k ascending: bit-identical across configurations.
    F32Pedantic,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::Bf16, Tier::Fp16, Tier::Tf32, Tier::F32Pedantic];

    pub fn name(self) -> &'static str {
        match self {
            Tier::Bf16 => "bf16",
            Tier::Fp16 => "fp16",
            Tier::Tf32 => "tf32",
            Tier::F32Pedantic => "f32_pedantic",
        }
    }

    /// Element type of A and B.
    pub fn input(self) -> Dtype {
        match self {
            Tier::Bf16 => Dtype::Bf16,
            Tier::Fp16 => Dtype::F16,
            Tier::Tf32 | Tier::F32Pedantic => Dtype::F32,
        }
    }

    /// Bytes of one input element.
    pub fn input_bytes(self) -> u32 {
        self.input().bytes()
    }

    /// Whether the tier writes `out`: its input type or f32.
    pub fn writes(self, out: Dtype) -> bool {
        out == self.input() || out == Dtype::F32
    }
}

/// A tensor-core CTA tile (`MmaTile` in `cuda/include/cubins/gemm/mma_kernel.cuh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmaTile {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub warps_m: u32,
    pub warps_n: u32,
    pub stages: u32,
    /// Blocks per SM the kernel's `__launch_bounds__` and contract promise.
    pub min_blocks: u32,
    /// A skinny tile (entry suffix `skinny_{bm}x{bn}`): deep k tiles in a deep ring (128 where
    /// an SM holds 228 KB, else 64), for M <= 128 and for problems whose M x N gives the standard tiles less than a wave
    /// (`select`, `select_skinny`).
    pub skinny: bool,
}

/// An FFMA tile (`FmaTile` in `cuda/include/cubins/gemm/pedantic_kernel.cuh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FmaTile {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub tm: u32,
    pub tn: u32,
    pub min_blocks: u32,
}

/// A Hopper warpgroup-MMA tile (`WgmmaTile` in `cuda/include/cubins/gemm/wgmma_kernel.cuh`):
/// `warpgroups` x 64 rows by `bn` columns, k tiles of `bk` (one 128-byte row: 64 16-bit or
/// 32 f32 values) in a `stages`-deep ring. Only the sm_90a cubin holds its real code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WgmmaTile {
    pub warpgroups: u32,
    pub bn: u32,
    pub bk: u32,
    pub stages: u32,
}

/// A decode kernel variant (`DecodeTile` in `cuda/include/cubins/gemm/decode_kernel.cuh`,
/// instantiated in `tiles.cuh`): `bn` columns of C per block, `warps` warps splitting K in
/// 32-wide steps (the direct walk) or each owning 16 columns over all of K (the ring walk,
/// `ring_stages > 0`, NN only: `cuda/include/cubins/gemm/decode_ring.cuh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeTile {
    /// Columns of C per block: 16 (NT only) or 32; the ring walk 16 per warp.
    pub bn: u32,
    pub warps: u32,
    /// Steps each warp loads per round before it issues their mma.
    pub unroll: u32,
    /// Weight loads `ld.global.nc.L1::no_allocate.L2::256B` (else `ld.global.cs`).
    pub l2_prefetch: bool,
    /// Column block `c` starts its K walk at step `(c % G) * steps / G` (and wraps), G =
    /// `stagger_groups`; 0: every block starts at step 0.
    pub stagger_groups: u32,
    /// Two register sets: the loads of the next round are issued before this round's mma.
    pub double_buffer: bool,
    /// Blocks per SM the kernel's `__launch_bounds__` and contract promise.
    pub min_blocks: u32,
    /// Stages of the ring walk's shared-memory ring (0: the direct walk) and k rows a stage.
    pub ring_stages: u32,
    pub ring_k: u32,
}

/// The largest M the skinny tiles take whether or not a standard tile fills a wave.
pub const SKINNY_MAX_M: u32 = 128;

/// k per decode step, largest M the decode kernel takes, largest M it computes with one n8
/// tile of rows (it picks one or two at run time).
pub const DECODE_STEP_K: u32 = 32;
pub const DECODE_MAX_M: u32 = 16;
pub const DECODE_ONE_ROW_TILE_M: u32 = 8;
/// Rows of tiles a raster group spans (`kRasterGroup`).
pub const RASTER_GROUP: u32 = 8;

/// The warp-specialized Hopper tile (`TmaTile` in `cuda/include/cubins/gemm/tma_kernel.cuh`):
/// 128 x 256 output tiles, k tiles of one 128-byte row (64 16-bit values, 32 tf32 ones) loaded
/// by TMA into a `stages`-deep ring, one producer and two consumer warpgroups, persistent CTAs
/// (at most one per SM), the common call's epilogue through shared memory and TMA stores
/// (`flags::TMA_C`). Only the sm_90a cubin holds its real code; its operands must be
/// TMA-addressable (16-byte aligned bases, leading dimensions in whole 16-byte chunks): TF32's
/// are, as the operand pass writes them into the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TmaTile {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub stages: u32,
}

/// The warp-specialized tile (`cubins::gemm::TmaTile`) of the 16-bit tiers; `tests/gemm_host.rs`
/// checks its ring against `cuda/kernels.toml`.
pub const TILE_TMA: TmaTile = TmaTile {
    bm: 128,
    bn: 256,
    bk: 64,
    stages: 4,
};

/// The same tile on tf32 operands: k tiles of 32.
pub const TILE_TMA_TF32: TmaTile = TmaTile { bk: 32, ..TILE_TMA };

impl TmaTile {
    /// Bytes of a k tile's row in the ring, as the wgmma kernel's: one 128-byte swizzle row.
    pub const ROW_BYTES: u32 = WgmmaTile::ROW_BYTES;

    /// One producer warpgroup and two consumers.
    pub fn threads(&self) -> u32 {
        3 * 128
    }

    /// The ring of A and B k tiles (a 128-byte row per row of the tile), each consumer's
    /// staging of a part of its 64 x `bn` outputs (`64 * bn` bytes), the slack that aligns them
    /// to 1024 bytes, and a full and an empty mbarrier per stage (`TmaTile::kSmemBytes`).
    pub fn smem_bytes(&self) -> u32 {
        let staging = 2 * 64 * self.bn;
        self.stages * (self.bm + self.bn) * Self::ROW_BYTES + staging + 1024 + 2 * self.stages * 8
    }

    pub fn label(&self) -> String {
        format!("tma_{}x{}", self.bm, self.bn)
    }
}

/// The schedules of a tier and layout: the warp-specialized tile (16-bit tiers; TF32 after
/// its operand pass), then the catalogue's entry points in the order the selector prefers
/// them ([`catalogued_schedules`]).
pub fn schedules(tier: Tier, layout: Layout, class: SmemClass) -> Vec<Schedule> {
    let mut all = catalogued_schedules(tier, layout, class);
    match tier {
        Tier::Bf16 | Tier::Fp16 => all.insert(0, Schedule::Tma(TILE_TMA)),
        Tier::Tf32 => all.insert(0, Schedule::Tma(TILE_TMA_TF32)),
        Tier::F32Pedantic => {}
    }
    all
}

/// How a plan computes: the kernel family and its tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schedule {
    Tma(TmaTile),
    Wgmma(WgmmaTile),
    Mma(MmaTile),
    Decode(DecodeTile),
    Fma(FmaTile),
}

impl MmaTile {
    pub fn threads(&self) -> u32 {
        self.warps_m * self.warps_n * 32
    }

    /// Dynamic shared memory of the cp.async ring (`MmaStage::kSmemBytes`): per stage the A
    /// and B tiles in 16-byte chunks; f32 tiles stored MN-major carry 2 chunks of padding
    /// per row (`PaddedTile`), every other tile is swizzled without padding.
    pub fn smem_bytes(&self, tier: Tier, layout: Layout) -> u32 {
        let e = tier.input_bytes();
        let tile = |outer: u32, k_major: bool| -> u32 {
            let (rows, cols) = if k_major {
                (outer, self.bk)
            } else {
                (self.bk, outer)
            };
            let cpr = cols * e / 16;
            let pad = if e == 4 && !k_major { 2 } else { 0 };
            rows * (cpr + pad)
        };
        let chunks = tile(self.bm, layout.a_k_major()) + tile(self.bn, layout.b_k_major());
        self.stages * chunks * 16
    }

    pub fn label(&self) -> String {
        if self.skinny {
            format!("skinny_{}x{}", self.bm, self.bn)
        } else {
            format!("{}x{}", self.bm, self.bn)
        }
    }
}

impl WgmmaTile {
    /// Bytes of one stage row: a 128-byte swizzle row of `bk` values.
    pub const ROW_BYTES: u32 = 128;

    pub fn bm(&self) -> u32 {
        64 * self.warpgroups
    }

    pub fn threads(&self) -> u32 {
        128 * self.warpgroups
    }

    /// Dynamic shared memory of the ring (`WgmmaStage::kSmemBytes`): per stage one 128-byte
    /// row per row of the A tile and per column of the B tile, unpadded.
    pub fn smem_bytes(&self) -> u32 {
        self.stages * (self.bm() + self.bn) * Self::ROW_BYTES
    }

    pub fn label(&self) -> String {
        format!("wgmma_{}x{}", self.bm(), self.bn)
    }
}

impl DecodeTile {
    pub fn label(&self) -> String {
        format!("decode_n{}w{}", self.bn, self.warps)
    }

    /// Dynamic shared memory: the ring walk's stages (`ring_k` rows of `bn` 16-bit weights and
    /// A's 16 rows of `ring_k`, `DecodeRing::kSmemBytes`); the direct walk takes none.
    pub fn smem_bytes(&self) -> u32 {
        self.ring_stages * (self.ring_k * self.bn + 16 * self.ring_k) * 2
    }

    /// Every parameter, for STAMP lines: `decode n16 k-split-warps=8 unroll=4 rounds=single
    /// loads=nc.L2::256B stagger=128 min-blocks=2` (`stagger=off` without one); the ring walk
    /// `decode n128 ring=4x64 warps=8 min-blocks=2`.
    pub fn describe(&self) -> String {
        if self.ring_stages > 0 {
            return format!(
                "decode n{} ring={}x{} warps={} min-blocks={}",
                self.bn, self.ring_stages, self.ring_k, self.warps, self.min_blocks
            );
        }
        format!(
            "decode n{} k-split-warps={} unroll={} rounds={} loads={} stagger={} min-blocks={}",
            self.bn,
            self.warps,
            self.unroll,
            if self.double_buffer {
                "double-buffered"
            } else {
                "single"
            },
            if self.l2_prefetch {
                "nc.L2::256B"
            } else {
                "cs"
            },
            match self.stagger_groups {
                0 => "off".to_string(),
                g => g.to_string(),
            },
            self.min_blocks
        )
    }
}

impl FmaTile {
    pub fn threads(&self) -> u32 {
        (self.bm / self.tm) * (self.bn / self.tn)
    }

    pub fn label(&self) -> String {
        format!("{}x{}", self.bm, self.bn)
    }
}

impl Schedule {
    pub fn threads(&self) -> u32 {
        match self {
            Schedule::Tma(t) => t.threads(),
            Schedule::Wgmma(t) => t.threads(),
            Schedule::Mma(t) => t.threads(),
            Schedule::Decode(d) => d.warps * 32,
            Schedule::Fma(t) => t.threads(),
        }
    }

    pub fn min_blocks(&self) -> u32 {
        match self {
            Schedule::Tma(_) | Schedule::Wgmma(_) => 1,
            Schedule::Mma(t) => t.min_blocks,
            Schedule::Decode(d) => d.min_blocks,
            Schedule::Fma(t) => t.min_blocks,
        }
    }

    /// The suffix of the entry-point name: `128x256`, `decode_n16w8`.
    pub fn label(&self) -> String {
        match self {
            Schedule::Tma(t) => t.label(),
            Schedule::Wgmma(t) => t.label(),
            Schedule::Mma(t) => t.label(),
            Schedule::Decode(d) => d.label(),
            Schedule::Fma(t) => t.label(),
        }
    }

    /// Human-readable tile description for STAMP lines.
    pub fn describe(&self) -> String {
        match self {
            Schedule::Tma(t) => format!(
                "tma-ws {}x{}x{} producer=1 consumers=2 stages={} persistent",
                t.bm, t.bn, t.bk, t.stages
            ),
            Schedule::Wgmma(t) => format!(
                "wgmma {}x{}x{} warpgroups={} stages={}",
                t.bm(),
                t.bn,
                t.bk,
                t.warpgroups,
                t.stages
            ),
            Schedule::Mma(t) => format!(
                "mma {}x{}x{} warps={}x{} stages={}",
                t.bm, t.bn, t.bk, t.warps_m, t.warps_n, t.stages
            ),
            Schedule::Decode(d) => d.describe(),
            Schedule::Fma(t) => format!("ffma {}x{}x{} thread={}x{}", t.bm, t.bn, t.bk, t.tm, t.tn),
        }
    }
}

/// Entry-point name of a schedule (as in `cuda/kernels.toml`).
pub fn entry_name(tier: Tier, layout: Layout, schedule: &Schedule) -> String {
    let layout = if runs_tf32_prepare(tier, schedule) {
        Layout::NT // the operand pass makes every layout NT
    } else {
        layout
    };
    format!(
        "gemm_{}_{}_{}",
        tier.name(),
        layout.name(),
        schedule.label()
    )
}

/// Whether `schedule` runs after the TF32 operand pass: tf32 wgmma reads both operands
/// K-major only and truncates, so A and B are rounded and laid out K-major first.
pub fn runs_tf32_prepare(tier: Tier, schedule: &Schedule) -> bool {
    tier == Tier::Tf32 && matches!(schedule, Schedule::Wgmma(_) | Schedule::Tma(_))
}

/// Entry point of the TF32 operand pass (`cuda/gemm_tf32_prepare.cu`) and its block size.
pub const TF32_PREPARE_ENTRY: &str = "gemm_tf32_prepare";
pub const TF32_PREPARE_BLOCK: u32 = 256;
/// Outer rows x k values one operand-pass block handles per step.
pub const TF32_PREPARE_TILE: u32 = 64;

/// A caller-provided device buffer the plan may use: its address and size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workspace {
    pub addr: u64,
    pub bytes: u64,
}

/// The TF32 operand pass a plan runs before its GEMM kernel: A and B rounded with
/// `cvt.rna` into the workspace as K-major `[M][kp]` then `[N][kp]`, `kp` = K rounded up
/// to 4 (16-byte rows, zero-padded); the GEMM kernel then reads them as layout NT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tf32Prepare {
    pub kp: u32,
    pub grid: u32,
    pub block: u32,
    /// `CUBINS_TF32_PREPARE_*` bits: which operands are transposed.
    pub flags: u32,
}

impl Tf32Prepare {
    /// The pass for `p`: one block per 64 x 64 tile of either operand's output.
    pub fn for_problem(p: &Problem) -> Tf32Prepare {
        let kp = p.k.next_multiple_of(4);
        let tiles_k = u64::from(kp.div_ceil(TF32_PREPARE_TILE));
        let tiles = (u64::from(p.m.div_ceil(TF32_PREPARE_TILE))
            + u64::from(p.n.div_ceil(TF32_PREPARE_TILE)))
            * tiles_k;
        let mut f = 0;
        if !p.layout.a_k_major() {
            f |= flags::TF32_PREPARE_A_MN_MAJOR;
        }
        if !p.layout.b_k_major() {
            f |= flags::TF32_PREPARE_B_MN_MAJOR;
        }
        if p.vec_a() {
            f |= flags::TF32_PREPARE_A_VEC;
        }
        if p.vec_b() {
            f |= flags::TF32_PREPARE_B_VEC;
        }
        Tf32Prepare {
            kp,
            // The kernel walks its tiles grid-stride: a capped grid still covers them all.
            grid: tiles.min(i32::MAX as u64) as u32,
            block: TF32_PREPARE_BLOCK,
            flags: f,
        }
    }

    /// Workspace bytes the pass writes for an M x N problem.
    pub fn workspace_bytes(&self, m: u32, n: u32) -> u64 {
        (u64::from(m) + u64::from(n)) * u64::from(self.kp) * 4
    }

    /// Element offset of B's rows in the workspace.
    pub fn b_offset(&self, m: u32) -> u64 {
        u64::from(m) * u64::from(self.kp)
    }
}

/// Blocks of `block` threads for a pass that walks `items` grid-stride: one item a thread, at
/// most 2^20 blocks, at least one.
fn pass_grid(items: u64, block: u32) -> u32 {
    items.div_ceil(u64::from(block)).clamp(1, 1 << 20) as u32
}

/// Entry point of the 16-bit operand pass (`cuda/gemm_pack.cu`) for the input type, and its
/// block size.
pub fn pack_entry(input: Dtype) -> String {
    format!("gemm_pack_{}", input.name())
}
pub const PACK_BLOCK: u32 = 256;
/// The planner packs an operand wherever the element path would read at least this many bytes
/// of it (its bytes times the tiles that read it, counted in 64-wide tiles): element loads
/// stream at a fraction of the bandwidth (run80: 107 MB of weights in 183 us, 0.58 TB/s, on
/// an H200 that copies at 4 TB/s), so a pass that reads and writes the operand once and lets
/// the GEMM read the copy by vectors costs less at any size past the pass's launch. Below it
/// the launch costs more than the element loads it saves (run73: 550x2x1 and 2x25x13 went
/// from 0.79x and 0.92x of cuBLAS to 0.51x and 0.55x with a copy).
pub const PACK_MIN_ELEMENT_BYTES: u64 = 256 << 10;
/// Nor where K is shorter than this: a tile then reads its operands in at most two k tiles
/// (one on the tiles 64 or 128 deep), so the element path costs a block a round or two of
/// loads, less than the pass's launch and the GEMM's wait on it.
pub const PACK_MIN_K: u32 = 65;

/// A 16-bit operand the plan copies into the workspace before the GEMM, because its base or
/// leading dimension keeps its rows off 16-byte chunks (`gemm_pack_*`): the stored
/// `rows` x `cols` with leading dimension `ld` (whole 16-byte chunks) at byte `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packed {
    pub rows: u32,
    pub cols: u32,
    pub ld: u32,
    pub offset: u64,
    pub grid: u32,
    pub block: u32,
}

impl Packed {
    fn new(rows: u32, cols: u32, elem_bytes: u32, offset: u64) -> Packed {
        let per_chunk = 16 / elem_bytes;
        let ld = cols.next_multiple_of(per_chunk).max(per_chunk);
        let chunks = u64::from(rows) * u64::from(ld / per_chunk);
        Packed {
            rows,
            cols,
            ld,
            offset,
            grid: pass_grid(chunks, PACK_BLOCK),
            block: PACK_BLOCK,
        }
    }

    /// Workspace bytes of the copy (whole 16-byte chunks, so the next region stays aligned).
    pub fn bytes(&self, elem_bytes: u32) -> u64 {
        u64::from(self.rows) * u64::from(self.ld) * u64::from(elem_bytes)
    }
}

/// The operands of `p` the plan packs (16-bit tiers, where the workspace holds them and the
/// pass pays: [`PACK_MIN_ELEMENT_BYTES`]), and the problem the GEMM kernel then runs: packed
/// operands at their workspace addresses with their new leading dimensions, the workspace
/// after them left for a split.
fn packed(p: &Problem) -> (Problem, Option<Packed>, Option<Packed>) {
    let none = (*p, None, None);
    let Some(ws) = p.workspace.filter(|w| w.addr % 16 == 0) else {
        return none;
    };
    if !matches!(p.tier, Tier::Bf16 | Tier::Fp16) || p.m == 0 || p.n == 0 || p.k < PACK_MIN_K {
        return none;
    }
    let e = p.tier.input_bytes();
    let (a_rows, a_cols) = p.a_stored();
    let (b_rows, b_cols) = p.b_stored();
    let size = |r: u32, c: u32, b: u32| u64::from(r) * u64::from(c) * u64::from(b);
    let mut used = 0u64;
    let mut take = |wanted: bool, rows: u32, cols: u32, reads: u32| {
        let pk = Packed::new(rows, cols, e, used);
        let bytes = pk.bytes(e);
        let element_bytes = size(rows, cols, e) * u64::from(reads.div_ceil(64));
        let pays = element_bytes >= PACK_MIN_ELEMENT_BYTES;
        (wanted && pays && used + bytes <= ws.bytes).then(|| {
            used += bytes;
            pk
        })
    };
    // A is read once per column of tiles, B once per row of tiles.
    let a = take(!p.vec_a(), a_rows, a_cols, p.n);
    let b = take(!p.vec_b(), b_rows, b_cols, p.m);
    if a.is_none() && b.is_none() {
        return none;
    }
    let mut q = *p;
    if let Some(a) = a {
        (q.a_addr, q.lda) = (ws.addr + a.offset, a.ld);
    }
    if let Some(b) = b {
        (q.b_addr, q.ldb) = (ws.addr + b.offset, b.ld);
    }
    q.workspace = Some(Workspace {
        addr: ws.addr + used,
        bytes: ws.bytes - used,
    });
    (q, a, b)
}

/// Entry point of the split-K reduce pass (`cuda/gemm_splitk.cu`) for C's element type, and
/// its block size.
pub fn splitk_reduce_entry(out: Dtype) -> String {
    format!("gemm_splitk_reduce_{}", out.name())
}
pub const SPLITK_REDUCE_BLOCK: u32 = 256;
/// The fewest k values the selector gives one slice (at least one k tile). A skinny tile's
/// k tile of 128 costs a block about 1.0-1.4 us at these sizes, latency, not bandwidth, and the
/// reduce pass (a programmatic dependent) less than one k tile: run84 on an H100, the sweep's
/// split shapes unsplit against split, 72 x 3 x 600 12.47 -> 10.09 us (5 -> 3 k tiles),
/// 2 x 134 x 5733 49.42 -> 10.76 us (45 -> 3).
pub const SPLITK_MIN_SLICE_K: u32 = 128;
/// The most slices: the reduce pass reads every plane once.
pub const SPLITK_MAX_SPLITS: u32 = 32;

/// Split K (mma.sync tiles where M x N leaves most block slots of a wave without an output
/// tile and K is long; the decode ring walk where K is long against N): `splits` slices of
/// the K loop run side by side as grid z, each multiplying `k_tiles_per_slice` k tiles (the
/// last may have fewer) and writing raw f32 sums to its own M x N plane of the workspace;
/// the reduce pass then sums the planes in slice order (the same bits on every run) and
/// applies alpha, beta, bias and the output type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitK {
    pub splits: u32,
    pub k_tiles_per_slice: u32,
    /// The GEMM kernel's flags for the slices: A's and B's vector access, f32 output, and
    /// four-float access to the planes (rows of N floats from a 16-byte aligned base).
    pub slice_flags: u32,
    /// The reduce pass: blocks (grid-stride over four-column groups) and threads.
    pub reduce_grid: u32,
    pub reduce_block: u32,
}

impl SplitK {
    /// `splits` slices of `k_tiles` k tiles of `p` (fewer where they would leave a slice
    /// empty).
    fn new(splits: u32, k_tiles: u32, p: &Problem) -> SplitK {
        let per = k_tiles.div_ceil(splits.max(1)).max(1);
        let groups = u64::from(p.m) * u64::from(p.n.div_ceil(4));
        let bit = |on: bool, flag: u32| if on { flag } else { 0 };
        SplitK {
            splits: k_tiles.div_ceil(per).max(1),
            k_tiles_per_slice: per,
            slice_flags: bit(p.vec_a(), flags::VEC_A)
                | bit(p.vec_b(), flags::VEC_B)
                | flags::OUT_F32
                | bit(p.n % 4 == 0, flags::VEC_C),
            reduce_grid: pass_grid(groups, SPLITK_REDUCE_BLOCK),
            reduce_block: SPLITK_REDUCE_BLOCK,
        }
    }

    /// Workspace bytes of the planes for an M x N problem.
    pub fn workspace_bytes(&self, m: u32, n: u32) -> u64 {
        u64::from(self.splits) * u64::from(m) * u64::from(n) * 4
    }
}

/// One GEMM problem as the kernels see it: shapes, leading dimensions (elements) and the
/// facts about buffer addresses that decide vector access.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Problem {
    pub tier: Tier,
    pub layout: Layout,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    /// Element type of C.
    pub out: Dtype,
    /// Addresses of A, B and C (only their alignment matters here).
    pub a_addr: u64,
    pub b_addr: u64,
    pub c_addr: u64,
    /// The caller's workspace, if any (the TF32 wgmma route needs one).
    pub workspace: Option<Workspace>,
}

/// The facts about the device the selector uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceFacts {
    pub sm_count: u32,
    /// Shared memory per block a kernel may opt into.
    pub max_smem_per_block_optin: u32,
    /// Whether the runtime loaded the sm_90a cubin of the wgmma kernels (compute capability
    /// 9.0 and a build that includes sm_90a): only then are they more than trapping stubs.
    pub wgmma: bool,
    /// The shared-memory class of the loaded tensor-core code: which tiles it holds.
    pub smem_class: SmemClass,
}

/// Largest dimension the kernels index with 32-bit arithmetic plus a tile of headroom.
pub const MAX_DIM: u32 = 1 << 30;

/// A problem the kernels cannot take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// A dimension beyond [`MAX_DIM`].
    TooLarge { what: &'static str, value: u32 },
    /// A leading dimension shorter than the stored row it spans.
    LeadingDimension {
        what: &'static str,
        ld: u32,
        min: u32,
    },
    /// Output precision the tier does not write.
    Output { tier: Tier, out: Dtype },
    /// A forced schedule the tier or layout has no entry point for, or the problem does not fit.
    Schedule { requested: String, reason: String },
    /// More tiles than a one-dimensional grid holds.
    GridTooLarge { blocks: u64 },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::TooLarge { what, value } => {
                write!(f, "{what} = {value} exceeds the GEMM limit of {MAX_DIM}")
            }
            PlanError::LeadingDimension { what, ld, min } => {
                write!(
                    f,
                    "{what} = {ld} is shorter than the stored row it spans ({min} elements)"
                )
            }
            PlanError::Output { tier, out } => write!(
                f,
                "the {} tier does not write {} outputs (it writes its input type or f32)",
                tier.name(),
                out.name()
            ),
            PlanError::Schedule { requested, reason } => {
                write!(f, "schedule {requested}: {reason}")
            }
            PlanError::GridTooLarge { blocks } => {
                write!(f, "{blocks} blocks exceed a one-dimensional grid")
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// Elements a row-major `rows x cols` matrix with leading dimension `ld` spans.
pub fn span(rows: u32, cols: u32, ld: u32) -> u64 {
    if rows == 0 || cols == 0 {
        0
    } else {
        u64::from(rows - 1) * u64::from(ld) + u64::from(cols)
    }
}

impl Problem {
    /// Stored shape of A as (rows, cols).
    pub fn a_stored(&self) -> (u32, u32) {
        if self.layout.a_k_major() {
            (self.m, self.k)
        } else {
            (self.k, self.m)
        }
    }

    /// Stored shape of B as (rows, cols).
    pub fn b_stored(&self) -> (u32, u32) {
        if self.layout.b_k_major() {
            (self.n, self.k)
        } else {
            (self.k, self.n)
        }
    }

    /// Elements each buffer must hold: A, B, C.
    pub fn spans(&self) -> (u64, u64, u64) {
        let (ar, ac) = self.a_stored();
        let (br, bc) = self.b_stored();
        (
            span(ar, ac, self.lda),
            span(br, bc, self.ldb),
            span(self.m, self.n, self.ldc),
        )
    }

    /// Checks shapes, leading dimensions and the output precision.
    pub fn validate(&self) -> Result<(), PlanError> {
        for (what, v) in [
            ("M", self.m),
            ("N", self.n),
            ("K", self.k),
            ("lda", self.lda),
            ("ldb", self.ldb),
            ("ldc", self.ldc),
        ] {
            if v > MAX_DIM {
                return Err(PlanError::TooLarge { what, value: v });
            }
        }
        let (_, ac) = self.a_stored();
        let (_, bc) = self.b_stored();
        for (what, ld, min) in [
            ("lda", self.lda, ac),
            ("ldb", self.ldb, bc),
            ("ldc", self.ldc, self.n),
        ] {
            if ld < min.max(1) {
                return Err(PlanError::LeadingDimension {
                    what,
                    ld,
                    min: min.max(1),
                });
            }
        }
        if !self.tier.writes(self.out) {
            return Err(PlanError::Output {
                tier: self.tier,
                out: self.out,
            });
        }
        Ok(())
    }

    /// A can be read in 16-byte chunks (`CUBINS_GEMM_VEC_A`).
    pub fn vec_a(&self) -> bool {
        vec16(self.a_addr, self.lda, self.tier.input_bytes())
    }

    /// B can be read in 16-byte chunks (`CUBINS_GEMM_VEC_B`).
    pub fn vec_b(&self) -> bool {
        vec16(self.b_addr, self.ldb, self.tier.input_bytes())
    }

    /// C can be accessed four elements at a time (`CUBINS_GEMM_VEC_C`).
    pub fn vec_c(&self) -> bool {
        let quad = 4 * u64::from(self.out.bytes());
        self.c_addr % quad == 0 && self.ldc % 4 == 0
    }

    /// Whether the decode kernel takes this problem: M <= 16, A read as `[M][K]`, K in whole
    /// 16-byte chunks, both operands vector-readable and, for NN, N in whole 4-column groups.
    pub fn decode_eligible(&self) -> bool {
        matches!(self.tier, Tier::Bf16 | Tier::Fp16)
            && self.layout != Layout::TN
            && self.m <= DECODE_MAX_M
            && self.k % 8 == 0
            && self.vec_a()
            && self.vec_b()
            && (self.layout == Layout::NT || self.n % 4 == 0)
    }

    /// Whether the lent workspace holds `split`'s planes (16-byte aligned for the four-float
    /// access of the reduce pass).
    fn has_room(&self, split: &SplitK) -> bool {
        self.workspace
            .is_some_and(|w| w.addr % 16 == 0 && w.bytes >= split.workspace_bytes(self.m, self.n))
    }
}

fn vec16(addr: u64, ld: u32, elem_bytes: u32) -> bool {
    addr % 16 == 0 && (u64::from(ld) * u64::from(elem_bytes)) % 16 == 0
}

/// Everything a launch needs besides the buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub entry: String,
    pub schedule: Schedule,
    pub grid: u32,
    pub block: u32,
    pub dynamic_smem_bytes: u32,
    pub flags: u32,
    /// The operand pass that runs first (TF32 on wgmma), writing the workspace.
    pub prepare: Option<Tf32Prepare>,
    /// Split K: the GEMM kernel's slices write the workspace, a reduce pass writes C.
    pub split: Option<SplitK>,
    /// The operands copied into the workspace first (16-bit tiers, off 16-byte chunks).
    pub pack_a: Option<Packed>,
    pub pack_b: Option<Packed>,
    /// Workspace bytes the plan uses (0: none).
    pub workspace_bytes: u64,
}

impl Plan {
    /// Workspace bytes the packed operands take (a split's planes follow them).
    pub fn packed_bytes(&self, tier: Tier) -> u64 {
        [self.pack_a, self.pack_b]
            .iter()
            .flatten()
            .map(|pk| pk.bytes(tier.input_bytes()))
            .sum()
    }

    /// The tile choice as it goes on a STAMP line.
    pub fn stamp_fields(&self) -> String {
        let mut s = format!(
            "tile=\"{}\" grid={} block={} smem={} flags={:#x}",
            self.schedule.describe(),
            self.grid,
            self.block,
            self.dynamic_smem_bytes,
            self.flags
        );
        if let Some(prep) = &self.prepare {
            s += &format!(
                " prepare=\"{} tf32-rna k-major kp={} grid={} flags={:#x}\" workspace={}",
                TF32_PREPARE_ENTRY, prep.kp, prep.grid, prep.flags, self.workspace_bytes
            );
        }
        for (name, pk) in [("a", &self.pack_a), ("b", &self.pack_b)] {
            if let Some(pk) = pk {
                s += &format!(
                    " pack_{name}=\"{}x{} ld={} at {} grid={}\"",
                    pk.rows, pk.cols, pk.ld, pk.offset, pk.grid
                );
            }
        }
        if let Some(split) = &self.split {
            s += &format!(
                " split=\"k x{} k_tiles={} reduce grid={}\" workspace={}",
                split.splits, split.k_tiles_per_slice, split.reduce_grid, self.workspace_bytes
            );
        }
        s
    }
}

fn tiles(m: u32, n: u32, bm: u32, bn: u32) -> u64 {
    u64::from(m.div_ceil(bm)) * u64::from(n.div_ceil(bn))
}

/// Whether `schedule` can run `p` on `device`, and why not.
pub fn fits(p: &Problem, device: &DeviceFacts, schedule: &Schedule) -> Result<(), String> {
    if !schedules(p.tier, p.layout, device.smem_class).contains(schedule) {
        return Err(format!(
            "the {} tier has no {} entry point for layout {} built as `{}`",
            p.tier.name(),
            schedule.label(),
            p.layout.name(),
            schedule.describe()
        ));
    }
    let smem = match schedule {
        Schedule::Tma(t) => Some(t.smem_bytes()),
        Schedule::Wgmma(t) => Some(t.smem_bytes()),
        Schedule::Mma(t) => Some(t.smem_bytes(p.tier, p.layout)),
        Schedule::Decode(t) => Some(t.smem_bytes()),
        Schedule::Fma(_) => None,
    };
    if let Some(smem) = smem {
        if smem > device.max_smem_per_block_optin {
            return Err(format!(
                "needs {smem} bytes of shared memory; the device allows {}",
                device.max_smem_per_block_optin
            ));
        }
    }
    match schedule {
        Schedule::Tma(_) | Schedule::Wgmma(_) if !device.wgmma => {
            return Err("the wgmma kernels run only from the sm_90a cubin (a build with sm_90a on a compute \
                        capability 9.0 device); this route holds their trapping stubs"
                .into())
        }
        Schedule::Tma(_) if p.k == 0 => return Err("the TMA kernel needs K >= 1 (a tensor map has no empty dimension)".into()),
        s if runs_tf32_prepare(p.tier, s) => {
            let need = Tf32Prepare::for_problem(p).workspace_bytes(p.m, p.n);
            match p.workspace {
                // K = 0 or an empty C: the pass writes nothing and the kernel reads nothing.
                _ if need == 0 => {}
                Some(w) if w.bytes >= need && w.addr % 16 == 0 => {}
                _ => {
                    return Err(format!(
                        "the TF32 wgmma route needs a 16-byte aligned workspace of {need} bytes for the rounded \
                         K-major operands (gemm_with_workspace; gemm_workspace_len says how much)"
                    ))
                }
            }
        }
        Schedule::Tma(_) if !(p.vec_a() && p.vec_b()) => {
            return Err("the TMA kernel reads A and B through tensor maps, which need 16-byte aligned bases and \
                        leading dimensions in whole 16-byte chunks"
                .into())
        }
        Schedule::Decode(_) if !p.decode_eligible() => {
            return Err("the decode kernel needs M <= 16, layout NN or NT, K % 8 == 0, 16-byte aligned A and B with \
                        leading dimensions in whole 16-byte chunks, and for NN N % 4 == 0"
                .into())
        }
        _ => {}
    }
    Ok(())
}

/// Picks the schedule for `p`: the decode kernel where it applies, else the TMA tile (where
/// tensor maps address A and B and K fills its ring) or the wgmma tile where it runs and
/// fills at least half the SMs, else (16-bit) a skinny tile where M <= 128, else
/// the largest mma.sync tile that still gives every SM a block (a full wave), else a skinny
/// tile, else the smallest tile.
pub fn select(p: &Problem, device: &DeviceFacts) -> Schedule {
    let candidates = schedules(p.tier, p.layout, device.smem_class);
    let fitting: Vec<Schedule> = candidates
        .into_iter()
        .filter(|s| fits(p, device, s).is_ok())
        .collect();
    let sms = u64::from(device.sm_count.max(1));
    if fitting.iter().any(|s| matches!(s, Schedule::Decode(_))) {
        return Schedule::Decode(select_decode(p, device));
    }
    // The TMA tile needs K for a full ring (`stages` k tiles): its persistent CTAs and
    // producer pipeline cost more than they hide below that (run87: 444 x 4485 x 113 NT read
    // 0.52x cuBLAS on it, 0.81x on the 128 x 256 mma.sync and wgmma tiles).
    let short_for_tma = |t: &TmaTile| p.k < t.stages * t.bk;
    let tiled: Vec<&Schedule> = fitting
        .iter()
        .filter(|s| match s {
            Schedule::Decode(_) | Schedule::Mma(MmaTile { skinny: true, .. }) => false,
            Schedule::Tma(t) => !short_for_tma(t),
            _ => true,
        })
        .collect();
    let skinny = select_skinny(p, device, &fitting);
    for s in &tiled {
        let (blocks, wave) = match s {
            // A wgmma tile runs about 1.7x faster than an mma.sync tile of the same size, so
            // half a wave of it still beats a full wave of the next smaller mma.sync tile.
            // The warp-specialized TMA tile runs ahead of the wgmma tile where both fit (run72:
            // 0.91-1.00x of cuBLAS at 4096^3 and 8192^3 in every layout, the wgmma tile
            // 0.76-0.92x), over the same tiles.
            Schedule::Tma(t) => (tiles(p.m, p.n, t.bm, t.bn), sms.div_ceil(2)),
            Schedule::Wgmma(t) => (tiles(p.m, p.n, t.bm(), t.bn), sms.div_ceil(2)),
            Schedule::Mma(t) => (tiles(p.m, p.n, t.bm, t.bn), sms),
            Schedule::Fma(t) => (tiles(p.m, p.n, t.bm, t.bn), sms),
            Schedule::Decode(_) => unreachable!("filtered above"),
        };
        if blocks >= wave {
            // Up to two rows of skinny tiles beat the standard mma.sync tiles even where those
            // fill a wave (bench run41: M = 128, N = K = 8192).
            if let (Schedule::Mma(_), Some(t)) = (s, skinny) {
                if p.m <= SKINNY_MAX_M {
                    return Schedule::Mma(t);
                }
            }
            return **s;
        }
    }
    if let Some(t) = skinny {
        return Schedule::Mma(t);
    }
    // Every tier has a smallest tile that fits any device of sm_80 or later.
    **tiled.last().expect("every tier has a tile that fits")
}

/// The skinny tile for a problem no standard tile gives a wave (bench run41): 32 x 32 for
/// M <= 32 (a taller tile copies A through the bounds-checked path on every k tile) unless its
/// tiles need a second wave of resident blocks that 64 x 64's do not (run99, 20 x 14797 x 3638
/// NN: 463 tiles of 32 x 32 at three per SM, 0.627x cuBLAS; 232 of 64 x 64 at two, 0.715x), else
/// 64 x 64 where it gives at least 90% of a wave (70% where B is stored [K][N]: there a 64 x 32
/// tile reads B in 64-byte row pieces; run87, 43 x 6374 x 1303 TN, 100 tiles of 64 x 64: 0.79x
/// cuBLAS against 64 x 32's 0.73x; run41, 64 x 4096 x 4096 NN, 64 tiles: 0.58x against 0.71x),
/// else 64 x 32. `None` where the tier has no skinny tiles or the pick does not fit the
/// device.
fn select_skinny(p: &Problem, device: &DeviceFacts, fitting: &[Schedule]) -> Option<MmaTile> {
    let sms = u64::from(device.sm_count.max(1));
    let t = device.smem_class.tiles();
    let wide = t.skinny_64x64;
    let tenths_of_a_wave = if p.layout.b_k_major() { 9 } else { 7 };
    let fits = |tile: &MmaTile| fitting.contains(&Schedule::Mma(*tile));
    let one_wave = |tile: &MmaTile| {
        let per_sm = device
            .smem_class
            .blocks_per_sm(tile.smem_bytes(p.tier, p.layout));
        tiles(p.m, p.n, tile.bm, tile.bn) <= sms * u64::from(per_sm)
    };
    let pick = if p.m <= t.skinny_32x32.bm {
        if !one_wave(&t.skinny_32x32) && one_wave(&wide) && fits(&wide) {
            wide
        } else {
            t.skinny_32x32
        }
    } else if tiles(p.m, p.n, wide.bm, wide.bn) * 10 >= sms * tenths_of_a_wave {
        wide
    } else {
        t.skinny_64x32
    };
    fits(&pick).then_some(pick)
}

/// The decode variant for `p` (docs/kernels/gemm.md; runs 16, 30 and 49 on the H200, run81
/// on the H100): NN with at least as many 128-column blocks as SMs streams the weights
/// through the ring (the direct walk's column stripes are L2-bound there), and so does NN
/// with K longer than N where the workspace holds the planes of K split over the ring's
/// blocks ([`decode_ring_split`]; the direct walk read 0.85-0.97x cuBLAS there, run82); with
/// more 32-column blocks than SMs the 8-warp kernels, two blocks per SM (NT with a stagger, NN
/// without); else NT takes the 16-column kernel for every M, NN picks by whether one n8 tile
/// of rows holds M.
fn select_decode(p: &Problem, device: &DeviceFacts) -> DecodeTile {
    let sms = u64::from(device.sm_count.max(1));
    let wide = u64::from(p.n.div_ceil(DECODE_NT_N32W8.bn)) > sms;
    let ring_wide = u64::from(p.n.div_ceil(DECODE_NN_RING_N128W8.bn)) >= sms;
    let long_k = p.k > p.n && decode_ring_split(p, device).is_some_and(|s| p.has_room(&s));
    match p.layout {
        Layout::NT if wide => DECODE_NT_N32W8,
        Layout::NT => DECODE_NT_N16W8,
        _ if ring_wide || long_k => DECODE_NN_RING_N128W8,
        _ if wide => DECODE_NN_N32W8,
        _ if p.m <= DECODE_ONE_ROW_TILE_M => DECODE_NN_N32W24,
        _ => DECODE_NN_N32W16,
    }
}

impl SmemClass {
    /// Shared memory per SM, bytes.
    pub fn bytes_per_sm(self) -> u32 {
        1024 * match self {
            SmemClass::Kb100 => 100,
            SmemClass::Kb164 => 164,
            SmemClass::Kb228 => 228,
        }
    }

    /// Blocks of `smem_bytes` of shared memory each that an SM holds, at least 1.
    pub fn blocks_per_sm(self, smem_bytes: u32) -> u32 {
        (self.bytes_per_sm() / smem_bytes.max(1)).max(1)
    }
}

/// The fewest k values the selector gives one slice of the decode ring walk: a slice must
/// stream enough weight rows for its ring to reach its steady state.
pub const DECODE_RING_MIN_SLICE_K: u32 = 1024;

/// The ring walk's split of K on `p`: as many slices as fill the block slots of a wave (the
/// SMs x the blocks of its ring an SM holds, at most the kernel's `min_blocks`: 2, or 1 where
/// an SM has 100 KB; over its 128-column blocks), each at least [`DECODE_RING_MIN_SLICE_K`]
/// long; `None` where that is fewer than two.
fn decode_ring_split(p: &Problem, device: &DeviceFacts) -> Option<SplitK> {
    let t = DECODE_NN_RING_N128W8;
    let blocks = u64::from(p.n.div_ceil(t.bn)).max(1);
    let per_sm = t
        .min_blocks
        .min(device.smem_class.blocks_per_sm(t.smem_bytes()))
        .max(1);
    let slots = u64::from(device.sm_count.max(1)) * u64::from(per_sm);
    let splits = (slots / blocks)
        .min(u64::from(p.k / DECODE_RING_MIN_SLICE_K))
        .min(u64::from(SPLITK_MAX_SPLITS)) as u32;
    let split = SplitK::new(splits, p.k.div_ceil(t.ring_k), p);
    (split.splits >= 2).then_some(split)
}

/// What a caller may fix instead of the selector (tests, sweeps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Choice {
    pub schedule: Option<Schedule>,
    /// Blocks to launch; only the pedantic tier (grid-stride over tiles) takes one.
    pub grid: Option<u32>,
    /// Slices of K (mma.sync tiles and the decode ring walk; 1: no split); the selector's where
    /// `None`.
    pub splits: Option<u32>,
}

/// The full plan for `p`: schedule (selected, or chosen), grid, block, shared memory, flags.
pub fn plan(
    p: &Problem,
    device: &DeviceFacts,
    choice: &Choice,
    bias: bool,
) -> Result<Plan, PlanError> {
    p.validate()?;
    // The GEMM kernel runs on the packed operands where the plan packs any (its addresses
    // and leading dimensions decide the schedule and the vector flags).
    let (q, pack_a, pack_b) = packed(p);
    let p = &q;
    let schedule = match choice.schedule {
        Some(s) => {
            fits(p, device, &s).map_err(|reason| PlanError::Schedule {
                requested: entry_name(p.tier, p.layout, &s),
                reason,
            })?;
            s
        }
        None => select(p, device),
    };
    let (blocks, smem) = match &schedule {
        // An empty C: nothing to launch.
        _ if p.m == 0 || p.n == 0 => (0, 0),
        Schedule::Wgmma(t) => (tiles(p.m, p.n, t.bm(), t.bn), t.smem_bytes()),
        // Persistent: at most one CTA per SM, each walking tiles by the grid's stride.
        Schedule::Tma(t) => (
            tiles(p.m, p.n, t.bm, t.bn).min(u64::from(device.sm_count.max(1))),
            t.smem_bytes(),
        ),
        Schedule::Mma(t) => (tiles(p.m, p.n, t.bm, t.bn), t.smem_bytes(p.tier, p.layout)),
        Schedule::Decode(d) => (u64::from(p.n.div_ceil(d.bn)), d.smem_bytes()),
        Schedule::Fma(t) => (tiles(p.m, p.n, t.bm, t.bn), 0),
    };
    if blocks > i32::MAX as u64 {
        return Err(PlanError::GridTooLarge { blocks });
    }
    let grid = match (choice.grid, &schedule) {
        (_, _) if blocks == 0 => 0,
        (None, _) => blocks as u32,
        // The FFMA kernel walks tiles with a grid-stride loop: any grid computes every tile.
        (Some(g), Schedule::Fma(_)) if g > 0 => g,
        (Some(g), _) => {
            return Err(PlanError::Schedule {
                requested: format!("{} with grid {g}", entry_name(p.tier, p.layout, &schedule)),
                reason: "only the pedantic tier's kernels take a grid other than one block per tile, and it must be \
                         at least 1"
                    .into(),
            })
        }
    };
    let prepare = runs_tf32_prepare(p.tier, &schedule).then(|| Tf32Prepare::for_problem(p));
    let split = split_k(p, device, &schedule, blocks, choice.splits)?;
    let mut f = 0;
    if bias {
        f |= flags::BIAS;
    }
    if p.out == Dtype::F32 {
        f |= flags::OUT_F32;
    }
    // The operand pass writes 16-byte rows into a 16-byte aligned workspace (checked in `fits`).
    if p.vec_a() || prepare.is_some() {
        f |= flags::VEC_A;
    }
    if p.vec_b() || prepare.is_some() {
        f |= flags::VEC_B;
    }
    if p.vec_c() {
        f |= flags::VEC_C;
    }
    let mut plan = Plan {
        entry: entry_name(p.tier, p.layout, &schedule),
        schedule,
        grid,
        block: schedule.threads(),
        dynamic_smem_bytes: smem,
        flags: f,
        prepare,
        split,
        pack_a,
        pack_b,
        workspace_bytes: match (prepare, split) {
            (Some(prep), _) => prep.workspace_bytes(p.m, p.n),
            (_, Some(split)) => split.workspace_bytes(p.m, p.n),
            _ => 0,
        },
    };
    plan.workspace_bytes += plan.packed_bytes(p.tier);
    Ok(plan)
}

/// The split of K for `schedule` on `p` (`blocks` output tiles), forced or the selector's
/// ([`mma_split`], [`decode_ring_split`]) where the workspace holds its planes; other
/// schedules take none.
fn split_k(
    p: &Problem,
    device: &DeviceFacts,
    schedule: &Schedule,
    blocks: u64,
    forced: Option<u32>,
) -> Result<Option<SplitK>, PlanError> {
    let refuse = |reason: String| PlanError::Schedule {
        requested: format!(
            "{} split {}x",
            entry_name(p.tier, p.layout, schedule),
            forced.unwrap_or(0)
        ),
        reason,
    };
    let (k_tile, selected) = match schedule {
        Schedule::Mma(t) => (t.bk, mma_split(p, device, t, blocks)),
        Schedule::Decode(d) if d.ring_stages > 0 => (d.ring_k, decode_ring_split(p, device)),
        _ => {
            return match forced {
                None | Some(1) => Ok(None),
                Some(_) => Err(refuse(
                    "only the mma.sync tiles and the decode ring walk split K".into(),
                )),
            }
        }
    };
    let k_tiles = p.k.div_ceil(k_tile);
    if blocks == 0 || k_tiles == 0 {
        return match forced {
            None | Some(1) => Ok(None),
            Some(_) => Err(refuse("an empty C or K = 0 has nothing to split".into())),
        };
    }
    match forced {
        Some(0) => Err(refuse("a split takes at least one slice".into())),
        Some(1) => Ok(None),
        Some(s) => {
            let split = SplitK::new(s.min(SPLITK_MAX_SPLITS), k_tiles, p);
            if split.splits == 1 {
                return Ok(None); // one k tile: nothing to share
            }
            if !p.has_room(&split) {
                return Err(refuse(format!(
                    "needs a 16-byte aligned workspace of {} bytes for its f32 planes (gemm_with_workspace; \
                     gemm_workspace_len says how much)",
                    split.workspace_bytes(p.m, p.n)
                )));
            }
            Ok(Some(split))
        }
        None => Ok(selected.filter(|split| split.splits >= 2 && p.has_room(split))),
    }
}

/// The selector's split of an mma.sync tile's K: where `blocks` output tiles leave more than
/// half the block slots of a wave empty (the tile's `min_blocks` per SM: the slices wait on
/// latency, so blocks that share an SM overlap), as many slices as fill them (at most
/// [`SPLITK_MAX_SPLITS`]), each at least [`SPLITK_MIN_SLICE_K`] long.
fn mma_split(p: &Problem, device: &DeviceFacts, t: &MmaTile, blocks: u64) -> Option<SplitK> {
    let slots = u64::from(device.sm_count.max(1)) * u64::from(t.min_blocks.max(1));
    if blocks == 0 || blocks * 2 > slots {
        return None;
    }
    let k_tiles = p.k.div_ceil(t.bk);
    let wave = slots / blocks;
    let deep = u64::from(k_tiles / SPLITK_MIN_SLICE_K.div_ceil(t.bk));
    let splits = wave.min(deep).min(u64::from(SPLITK_MAX_SPLITS)) as u32;
    Some(SplitK::new(splits, k_tiles, p))
}
