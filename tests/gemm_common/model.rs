//! Host mirrors of the GEMM kernels' index math (`cuda/include/cubins/gemm/*.cuh`, function
//! by function, same names) and of the PTX semantics the kernels rely on: `ldmatrix` and
//! the `mma.sync` fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16 /
//! m16n8k8"). The emulators in `emulate.rs` run whole CTAs through these functions.

/// Bytes in one shared-memory chunk (one cp.async, one ldmatrix row).
pub const CHUNK: usize = 16;

/// `SwizzledTile` / `PaddedTile` (layout.cuh).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileLayout {
    Swizzled,
    Padded,
}

pub const PAD_CHUNKS: usize = 2;

impl TileLayout {
    /// Offset in chunks of logical chunk (row, col) of a tile of `rows` rows of `cpr` chunks.
    pub fn chunk(self, row: usize, col: usize, rows: usize, cpr: usize) -> usize {
        match self {
            TileLayout::Swizzled => {
                let u = if cpr <= 8 {
                    row * cpr + col
                } else {
                    (col >> 3) * rows * 8 + row * 8 + (col & 7)
                };
                let line = u >> 3;
                (line << 3) | ((u & 7) ^ (line & 7))
            }
            TileLayout::Padded => row * (cpr + PAD_CHUNKS) + col,
        }
    }

    pub fn footprint(self, rows: usize, cpr: usize) -> usize {
        match self {
            TileLayout::Swizzled => rows * cpr,
            TileLayout::Padded => rows * (cpr + PAD_CHUNKS),
        }
    }

    /// `StageTileLayout<T, K_MAJOR>` (fragments.cuh).
    pub fn for_stage(elem_bytes: usize, k_major: bool) -> TileLayout {
        if elem_bytes == 4 && !k_major {
            TileLayout::Padded
        } else {
            TileLayout::Swizzled
        }
    }
}

/// `raster_grouped` (layout.cuh): (tile row, tile column) of block `bid`.
pub fn raster_grouped(bid: usize, tiles_m: usize, tiles_n: usize, group: usize) -> (usize, usize) {
    let per_group = group * tiles_n;
    let first_m = (bid / per_group) * group;
    let rows_here = (tiles_m - first_m).min(group);
    let in_group = bid % per_group;
    (first_m + in_group % rows_here, in_group / rows_here)
}

/// `decode_column` (decode_kernel.cuh): column of C held by mma row `r` of column tile `i`.
pub fn decode_column(nt: bool, i: usize, r: usize) -> usize {
    if nt {
        16 * i + r
    } else {
        4 * (r & 7) + 2 * i + (r >> 3)
    }
}

/// `fma_owned` (pedantic_kernel.cuh).
pub fn fma_owned(i: usize, thread_idx: usize, tile: usize, per_thread: usize) -> usize {
    (i / 4) * (tile / (per_thread / 4)) + thread_idx * 4 + (i % 4)
}

/// `copy_slot` (tile_copy.cuh): (row, col, offset) of copy i of thread `tid`.
pub fn copy_slot(
    layout: TileLayout,
    i: usize,
    tid: usize,
    threads: usize,
    rows: usize,
    cpr: usize,
) -> (usize, usize, usize) {
    let idx = i * threads + tid;
    (
        idx / cpr,
        idx % cpr,
        layout.chunk(idx / cpr, idx % cpr, rows, cpr),
    )
}

/// `fma_run` (pedantic_kernel.cuh): (line, first) of thread `tid`'s staging run.
pub fn fma_run(tid: usize, runs_per_line: usize, per_thread: usize) -> (usize, usize) {
    (tid / runs_per_line, (tid % runs_per_line) * per_thread)
}

/// Floats of padding per staged epilogue row (`kEpiloguePad`, mma_kernel.cuh).
pub const EPILOGUE_PAD: usize = 8;

/// `epilogue_slot` (mma_kernel.cuh): (row, col) in a warp's staged m16 slice of accumulator
/// (ni, r) of `lane`.
pub fn epilogue_slot(lane: usize, ni: usize, r: usize) -> (usize, usize) {
    (
        (lane >> 2) + 8 * (r >> 1),
        8 * ni + 2 * (lane & 3) + (r & 1),
    )
}

/// `epilogue_quad` (mma_kernel.cuh): (row, first col) of the slice elements read `idx` covers.
pub fn epilogue_quad(idx: usize, warp_n: usize) -> (usize, usize) {
    (idx / (warp_n / 4), (idx % (warp_n / 4)) * 4)
}

/// One chunk of a `TileCopy` (tile_copy.cuh).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyChunk {
    /// Position in the tile, in chunks.
    pub offset: usize,
    /// Logical (row, col) in the tile; col in chunks.
    pub row: usize,
    pub col: usize,
    pub grow: usize,
    pub gcol: usize,
    /// Elements of the chunk inside the matrix.
    pub valid: usize,
}

/// `TileCopy<T, TileLayout, ROWS, COLS, THREADS>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileCopy {
    pub elem_bytes: usize,
    pub layout: TileLayout,
    pub rows: usize,
    pub cols: usize,
    pub threads: usize,
}

impl TileCopy {
    pub fn elems_per_chunk(&self) -> usize {
        CHUNK / self.elem_bytes
    }
    pub fn chunks_per_row(&self) -> usize {
        self.cols / self.elems_per_chunk()
    }
    pub fn chunks(&self) -> usize {
        self.rows * self.chunks_per_row()
    }
    pub fn per_thread(&self) -> usize {
        self.chunks() / self.threads
    }
    pub fn footprint(&self) -> usize {
        self.layout.footprint(self.rows, self.chunks_per_row())
    }

    /// The static_asserts of TileCopy.
    pub fn well_formed(&self) -> bool {
        let cpr = self.chunks_per_row();
        self.cols % self.elems_per_chunk() == 0
            && self.chunks() % self.threads == 0
            && (cpr <= 8 || cpr % 8 == 0)
            && self.threads % cpr == 0
    }

    /// `TileCopy::chunk(i, tid, ...)`.
    pub fn chunk(
        &self,
        i: usize,
        tid: usize,
        row0: usize,
        col0: usize,
        rows_total: usize,
        cols_total: usize,
    ) -> CopyChunk {
        let epc = self.elems_per_chunk();
        let (row, col, offset) = copy_slot(
            self.layout,
            i,
            tid,
            self.threads,
            self.rows,
            self.chunks_per_row(),
        );
        let grow = row0 + row;
        let gcol = col0 + col * epc;
        let valid = if grow < rows_total {
            cols_total.saturating_sub(gcol).min(epc)
        } else {
            0
        };
        CopyChunk {
            offset,
            row,
            col,
            grow,
            gcol,
            valid,
        }
    }
}

/// A tensor-core tile as the model needs it (`MmaTile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmaTileModel {
    pub bm: usize,
    pub bn: usize,
    pub bk: usize,
    pub warps_m: usize,
    pub warps_n: usize,
    pub stages: usize,
}

impl MmaTileModel {
    pub fn from_plan(t: &super::plan::MmaTile) -> MmaTileModel {
        MmaTileModel {
            bm: t.bm as usize,
            bn: t.bn as usize,
            bk: t.bk as usize,
            warps_m: t.warps_m as usize,
            warps_n: t.warps_n as usize,
            stages: t.stages as usize,
        }
    }
    pub fn threads(&self) -> usize {
        self.warps_m * self.warps_n * 32
    }
    pub fn warp_m(&self) -> usize {
        self.bm / self.warps_m
    }
    pub fn warp_n(&self) -> usize {
        self.bn / self.warps_n
    }
    pub fn mt(&self) -> usize {
        self.warp_m() / 16
    }
    pub fn nt(&self) -> usize {
        self.warp_n() / 8
    }
}

/// `MmaStage<T, L, Tile>` (mma_kernel.cuh): one pipeline stage, A tile then B tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmaStage {
    pub a_k_major: bool,
    pub b_k_major: bool,
    pub copy_a: TileCopy,
    pub copy_b: TileCopy,
}

impl MmaStage {
    pub fn new(elem_bytes: usize, a_k_major: bool, b_k_major: bool, t: &MmaTileModel) -> MmaStage {
        let copy = |outer: usize, k_major: bool| TileCopy {
            elem_bytes,
            layout: TileLayout::for_stage(elem_bytes, k_major),
            rows: if k_major { outer } else { t.bk },
            cols: if k_major { t.bk } else { outer },
            threads: t.threads(),
        };
        MmaStage {
            a_k_major,
            b_k_major,
            copy_a: copy(t.bm, a_k_major),
            copy_b: copy(t.bn, b_k_major),
        }
    }
    pub fn chunks_a(&self) -> usize {
        self.copy_a.footprint()
    }
    pub fn chunks(&self) -> usize {
        self.copy_a.footprint() + self.copy_b.footprint()
    }
    pub fn smem_bytes(&self, stages: usize) -> usize {
        stages * self.chunks() * CHUNK
    }
}

/// How a warp reads one fragment (or fragment pair) from shared memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FragmentRead {
    /// `ldmatrix.x4`: lane l supplies the byte address of row l % 8 of matrix l / 8.
    Ldmatrix { addrs: [u32; 32], trans: bool },
    /// Four 32-bit loads per lane: `addrs[lane][reg]`.
    Words { addrs: Box<[[u32; 4]; 32]> },
}

/// `a_ldmatrix_offset<TileLayout, K_MAJOR, EPC>` (fragments.cuh), same arguments.
#[allow(clippy::too_many_arguments)]
pub fn a_ldmatrix_offset(
    layout: TileLayout,
    k_major: bool,
    epc: usize,
    lane: usize,
    m0: usize,
    kk: usize,
    bm: usize,
    bk: usize,
) -> usize {
    if k_major {
        return layout.chunk(m0 + (lane & 15), kk / epc + (lane >> 4), bm, bk / epc) * 16;
    }
    let (j, i) = (lane >> 3, lane & 7);
    layout.chunk(
        kk + (j >> 1) * 8 + i,
        (m0 + (j & 1) * 8) / epc,
        bk,
        bm / epc,
    ) * 16
}

/// `b_ldmatrix_offset<TileLayout, K_MAJOR, EPC>` (fragments.cuh), same arguments.
#[allow(clippy::too_many_arguments)]
pub fn b_ldmatrix_offset(
    layout: TileLayout,
    k_major: bool,
    epc: usize,
    lane: usize,
    n0: usize,
    kk: usize,
    bn: usize,
    bk: usize,
) -> usize {
    let (j, i) = (lane >> 3, lane & 7);
    if k_major {
        return layout.chunk(n0 + (j >> 1) * 8 + i, kk / epc + (j & 1), bn, bk / epc) * 16;
    }
    layout.chunk(
        kk + (j & 1) * 8 + i,
        (n0 + (j >> 1) * 8) / epc,
        bk,
        bn / epc,
    ) * 16
}

/// `padded_word_offset` (fragments.cuh).
pub fn padded_word_offset(row: usize, elem: usize, cpr: usize) -> usize {
    row * (cpr + PAD_CHUNKS) * 16 + elem * 4
}

/// `a_word_offset` (fragments.cuh).
pub fn a_word_offset(lane: usize, reg: usize, m0: usize, kk: usize, cpr: usize) -> usize {
    padded_word_offset(
        kk + (lane & 3) + (reg >> 1) * 4,
        m0 + (lane >> 2) + (reg & 1) * 8,
        cpr,
    )
}

/// `b_word_offset` (fragments.cuh).
pub fn b_word_offset(lane: usize, reg: usize, n0: usize, kk: usize, cpr: usize) -> usize {
    padded_word_offset(
        kk + (lane & 3) + (reg & 1) * 4,
        n0 + (lane >> 2) + (reg >> 1) * 8,
        cpr,
    )
}

/// `load_a` (fragments.cuh): how lane addresses are formed for the A fragment of rows
/// [m0, m0 + 16) at k offset kk. `tile` is the byte address of the stage's A tile.
#[allow(clippy::too_many_arguments)]
pub fn load_a(
    elem_bytes: usize,
    layout: TileLayout,
    k_major: bool,
    bm: usize,
    bk: usize,
    tile: u32,
    m0: usize,
    kk: usize,
) -> FragmentRead {
    let epc = CHUNK / elem_bytes;
    if k_major || elem_bytes == 2 {
        let addrs = std::array::from_fn(|lane| {
            tile + a_ldmatrix_offset(layout, k_major, epc, lane, m0, kk, bm, bk) as u32
        });
        FragmentRead::Ldmatrix {
            addrs,
            trans: !k_major,
        }
    } else {
        assert_eq!(layout, TileLayout::Padded, "f32 MN-major tiles are padded");
        let addrs = std::array::from_fn(|lane| {
            std::array::from_fn(|r| tile + a_word_offset(lane, r, m0, kk, bm / epc) as u32)
        });
        FragmentRead::Words {
            addrs: Box::new(addrs),
        }
    }
}

/// `load_b_pair` (fragments.cuh): lane addresses for the B fragments of columns
/// [n0, n0 + 16) at k offset kk; the four registers are (b[0][0], b[0][1], b[1][0], b[1][1]).
#[allow(clippy::too_many_arguments)]
pub fn load_b_pair(
    elem_bytes: usize,
    layout: TileLayout,
    k_major: bool,
    bn: usize,
    bk: usize,
    tile: u32,
    n0: usize,
    kk: usize,
) -> FragmentRead {
    let epc = CHUNK / elem_bytes;
    if k_major || elem_bytes == 2 {
        let addrs = std::array::from_fn(|lane| {
            tile + b_ldmatrix_offset(layout, k_major, epc, lane, n0, kk, bn, bk) as u32
        });
        FragmentRead::Ldmatrix {
            addrs,
            trans: !k_major,
        }
    } else {
        assert_eq!(layout, TileLayout::Padded, "f32 MN-major tiles are padded");
        let addrs = std::array::from_fn(|lane| {
            std::array::from_fn(|r| tile + b_word_offset(lane, r, n0, kk, bn / epc) as u32)
        });
        FragmentRead::Words {
            addrs: Box::new(addrs),
        }
    }
}

fn read_u32(smem: &[u8], addr: usize) -> u32 {
    u32::from_le_bytes(smem[addr..addr + 4].try_into().expect("4 bytes"))
}

fn read_u16(smem: &[u8], addr: usize) -> u16 {
    u16::from_le_bytes(smem[addr..addr + 2].try_into().expect("2 bytes"))
}

/// Executes a fragment read against shared memory: four registers per lane.
pub fn execute(read: &FragmentRead, smem: &[u8]) -> [[u32; 4]; 32] {
    match read {
        FragmentRead::Ldmatrix { addrs, trans } => ldmatrix_x4(smem, addrs, *trans),
        FragmentRead::Words { addrs } => std::array::from_fn(|lane| {
            std::array::from_fn(|r| read_u32(smem, addrs[lane][r] as usize))
        }),
    }
}

/// Byte addresses a fragment read touches (16 per ldmatrix row, 4 per word).
pub fn touched(read: &FragmentRead) -> Vec<(u32, u32)> {
    match read {
        FragmentRead::Ldmatrix { addrs, .. } => addrs.iter().map(|&a| (a, 16)).collect(),
        FragmentRead::Words { addrs } => addrs.iter().flatten().map(|&a| (a, 4)).collect(),
    }
}

/// `ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16`: matrix j has its row i at the address
/// of lane 8j + i (eight 16-bit elements). Without .trans lane l receives, in register j,
/// elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of matrix j; with .trans,
/// elements (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4). The lower column/row sits in the
/// low half of the register.
pub fn ldmatrix_x4(smem: &[u8], addrs: &[u32; 32], trans: bool) -> [[u32; 4]; 32] {
    for a in addrs {
        assert_eq!(a % 16, 0, "ldmatrix row addresses are 16-byte aligned");
    }
    let elem = |j: usize, row: usize, col: usize| -> u32 {
        u32::from(read_u16(smem, addrs[8 * j + row] as usize + 2 * col))
    };
    std::array::from_fn(|l| {
        std::array::from_fn(|j| {
            let (lo, hi) = if trans {
                (elem(j, 2 * (l % 4), l / 4), elem(j, 2 * (l % 4) + 1, l / 4))
            } else {
                (elem(j, l / 4, 2 * (l % 4)), elem(j, l / 4, 2 * (l % 4) + 1))
            };
            lo | (hi << 16)
        })
    })
}

/// Element decoders for the mma models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmaKind {
    Bf16,
    Fp16,
    Tf32,
}

impl MmaKind {
    pub fn k(self) -> usize {
        match self {
            MmaKind::Tf32 => 8,
            _ => 16,
        }
    }
    pub fn elem_bytes(self) -> usize {
        match self {
            MmaKind::Tf32 => 4,
            _ => 2,
        }
    }
}

pub fn bf16_bits_to_f64(bits: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(bits) << 16))
}

pub fn f16_bits_to_f64(bits: u16) -> f64 {
    f64::from(half::f16::from_bits(bits).to_f32())
}

/// `cvt.rna.tf32.f32`: round to nearest, ties away from zero, at 10 mantissa bits (finite inputs).
pub fn tf32_round(bits: u32) -> u32 {
    if (bits & 0x7f80_0000) == 0x7f80_0000 {
        return bits; // inf / NaN unchanged
    }
    bits.wrapping_add(0x1000) & 0xffff_e000
}

fn half_of(reg: u32, hi: bool) -> u16 {
    if hi {
        (reg >> 16) as u16
    } else {
        reg as u16
    }
}

/// The m16 x k operand A and k x n8 operand B that the fragments of a warp describe.
/// Panics if two lanes claim the same element (a malformed fragment layout).
pub fn assemble(
    kind: MmaKind,
    a: &[[u32; 4]; 32],
    b: &[[u32; 2]; 32],
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let kk = kind.k();
    let mut am = vec![vec![f64::NAN; kk]; 16];
    let mut bm = vec![vec![f64::NAN; 8]; kk];
    let put = |m: &mut Vec<Vec<f64>>, r: usize, c: usize, v: f64| {
        assert!(
            m[r][c].is_nan(),
            "fragment element ({r}, {c}) supplied twice"
        );
        m[r][c] = v;
    };
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        match kind {
            MmaKind::Bf16 | MmaKind::Fp16 => {
                let dec = |x: u16| {
                    if kind == MmaKind::Bf16 {
                        bf16_bits_to_f64(x)
                    } else {
                        f16_bits_to_f64(x)
                    }
                };
                for (reg, (r, c)) in [
                    (g, 2 * t),
                    (g + 8, 2 * t),
                    (g, 2 * t + 8),
                    (g + 8, 2 * t + 8),
                ]
                .into_iter()
                .enumerate()
                {
                    put(&mut am, r, c, dec(half_of(a[lane][reg], false)));
                    put(&mut am, r, c + 1, dec(half_of(a[lane][reg], true)));
                }
                for (reg, k0) in [2 * t, 2 * t + 8].into_iter().enumerate() {
                    put(&mut bm, k0, g, dec(half_of(b[lane][reg], false)));
                    put(&mut bm, k0 + 1, g, dec(half_of(b[lane][reg], true)));
                }
            }
            MmaKind::Tf32 => {
                let dec = |x: u32| f64::from(f32::from_bits(x));
                for (reg, (r, c)) in [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]
                    .into_iter()
                    .enumerate()
                {
                    put(&mut am, r, c, dec(a[lane][reg]));
                }
                put(&mut bm, t, g, dec(b[lane][0]));
                put(&mut bm, t + 4, g, dec(b[lane][1]));
            }
        }
    }
    (am, bm)
}

/// `mma.sync` D = A B + C for one warp, f32 accumulators: lane (g, t) holds
/// c0 = (g, 2t), c1 = (g, 2t + 1), c2 = (g + 8, 2t), c3 = (g + 8, 2t + 1).
pub fn mma(kind: MmaKind, a: &[[u32; 4]; 32], b: &[[u32; 2]; 32], c: &mut [[f64; 4]; 32]) {
    let (am, bm) = assemble(kind, a, b);
    for (lane, acc) in c.iter_mut().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for (reg, (r, col)) in [
            (g, 2 * t),
            (g, 2 * t + 1),
            (g + 8, 2 * t),
            (g + 8, 2 * t + 1),
        ]
        .into_iter()
        .enumerate()
        {
            let dot: f64 = (0..kind.k()).map(|k| am[r][k] * bm[k][col]).sum();
            acc[reg] += dot;
        }
    }
}

/// Shared-memory bank group (16-byte unit within a 128-byte pass) of a byte address.
pub fn bank_group(addr: u32) -> u32 {
    (addr / 16) % 8
}

/// 4-byte bank of a byte address.
pub fn bank(addr: u32) -> u32 {
    (addr / 4) % 32
}

/// Whether an ldmatrix.x4 runs without bank conflicts: each of its four 8-row phases hits
/// eight different 16-byte bank groups.
pub fn ldmatrix_conflict_free(addrs: &[u32; 32]) -> bool {
    (0..4).all(|j| {
        let mut seen = [false; 8];
        addrs[8 * j..8 * j + 8]
            .iter()
            .all(|&a| !std::mem::replace(&mut seen[bank_group(a) as usize], true))
    })
}

/// Whether 32 lanes' 32-bit loads are conflict-free: lanes sharing a bank read one address.
pub fn words_conflict_free(addrs: &[u32]) -> bool {
    let mut by_bank: [Option<u32>; 32] = [None; 32];
    addrs.iter().all(|&a| match by_bank[bank(a) as usize] {
        None => {
            by_bank[bank(a) as usize] = Some(a);
            true
        }
        Some(prev) => prev == a,
    })
}
