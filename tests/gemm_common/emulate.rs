//! Whole-CTA emulators of the GEMM kernels built from the mirrors in `model.rs`: every copy,
//! every fragment read and every mma of every warp, with the invariants the kernels rely on
//! asserted as they run (each stage chunk written exactly once per fill, fragments read only
//! written chunks of their own operand, a stage refilled only after it was consumed, each
//! output written by exactly one lane). Exact on small-integer data, so a result that
//! differs from the reference GEMM is a schedule bug, not rounding.

use super::model::{
    decode_column, epilogue_quad, epilogue_slot, execute, fma_owned, ldmatrix_x4, load_a,
    load_b_pair, mma, raster_grouped, tf32_round, touched, MmaKind, MmaStage, MmaTileModel,
    TileLayout, CHUNK, EPILOGUE_PAD,
};
use super::plan::{DecodeTile, Layout, RASTER_GROUP};

/// A row-major matrix of raw little-endian elements, as it lies in device memory.
#[derive(Debug, Clone)]
pub struct Stored {
    pub bytes: Vec<u8>,
    pub elem_bytes: usize,
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
}

impl Stored {
    /// `bits(r, c)` for every element; padding past `cols` holds `pad` bits.
    pub fn from_fn(
        elem_bytes: usize,
        rows: usize,
        cols: usize,
        ld: usize,
        pad: u32,
        bits: impl Fn(usize, usize) -> u32,
    ) -> Stored {
        let mut bytes = Vec::with_capacity(rows * ld * elem_bytes);
        for r in 0..rows {
            for c in 0..ld {
                let v = if c < cols { bits(r, c) } else { pad };
                bytes.extend_from_slice(&v.to_le_bytes()[..elem_bytes]);
            }
        }
        Stored {
            bytes,
            elem_bytes,
            rows,
            cols,
            ld,
        }
    }

    pub fn bits(&self, r: usize, c: usize) -> u32 {
        assert!(
            r < self.rows && c < self.cols,
            "read of ({r}, {c}) outside the {}x{} matrix",
            self.rows,
            self.cols
        );
        let at = (r * self.ld + c) * self.elem_bytes;
        let mut b = [0u8; 4];
        b[..self.elem_bytes].copy_from_slice(&self.bytes[at..at + self.elem_bytes]);
        u32::from_le_bytes(b)
    }
}

/// A problem for the emulators: op(A) is m x k, op(B) is k x n.
pub struct EmuProblem {
    pub kind: MmaKind,
    pub layout: Layout,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: Stored,
    pub b: Stored,
}

impl EmuProblem {
    fn decode(&self, bits: u32) -> f64 {
        match self.kind {
            MmaKind::Bf16 => super::model::bf16_bits_to_f64(bits as u16),
            MmaKind::Fp16 => super::model::f16_bits_to_f64(bits as u16),
            MmaKind::Tf32 => f64::from(f32::from_bits(tf32_round(bits))),
        }
    }

    pub fn op_a(&self, m: usize, k: usize) -> f64 {
        self.decode(if self.layout.a_k_major() {
            self.a.bits(m, k)
        } else {
            self.a.bits(k, m)
        })
    }

    pub fn op_b(&self, k: usize, n: usize) -> f64 {
        self.decode(if self.layout.b_k_major() {
            self.b.bits(n, k)
        } else {
            self.b.bits(k, n)
        })
    }

    /// op(A) op(B) in f64, row-major m x n.
    pub fn reference(&self) -> Vec<f64> {
        let mut c = vec![0.0; self.m * self.n];
        for i in 0..self.m {
            for kk in 0..self.k {
                let a = self.op_a(i, kk);
                for j in 0..self.n {
                    c[i * self.n + j] += a * self.op_b(kk, j);
                }
            }
        }
        c
    }
}

/// Records each output write; every output must end with exactly one owner.
struct Outputs {
    n: usize,
    values: Vec<f64>,
    owners: Vec<u32>,
}

impl Outputs {
    fn new(m: usize, n: usize) -> Outputs {
        Outputs {
            n,
            values: vec![f64::NAN; m * n],
            owners: vec![0; m * n],
        }
    }
    fn write(&mut self, row: usize, col: usize, v: f64) {
        self.values[row * self.n + col] = v;
        self.owners[row * self.n + col] += 1;
    }
    fn finish(self) -> Vec<f64> {
        if let Some(i) = self.owners.iter().position(|&o| o != 1) {
            panic!(
                "output ({}, {}) written {} times",
                i / self.n,
                i % self.n,
                self.owners[i]
            );
        }
        self.values
    }
}

/// Shared memory of one CTA with per-stage write tracking.
struct StageRing {
    smem: Vec<u8>,
    stage: MmaStage,
    /// Per stage: which k tile it holds, and per chunk how often the current fill wrote it.
    content: Vec<Option<usize>>,
    written: Vec<Vec<u32>>,
}

impl StageRing {
    fn stage_base(&self, s: usize) -> usize {
        s * self.stage.chunks() * CHUNK
    }

    /// Emulates `issue(stage, kt)` for both operands.
    fn fill(
        &mut self,
        p: &EmuProblem,
        s: usize,
        kt: usize,
        m_base: usize,
        n_base: usize,
        bk: usize,
    ) {
        self.content[s] = Some(kt);
        self.written[s].iter_mut().for_each(|w| *w = 0);
        let k0 = kt * bk;
        let st = self.stage;
        let operands = [
            (
                st.copy_a,
                0,
                &p.a,
                if st.a_k_major {
                    (m_base, k0, p.m, p.k)
                } else {
                    (k0, m_base, p.k, p.m)
                },
            ),
            (
                st.copy_b,
                st.chunks_a(),
                &p.b,
                if st.b_k_major {
                    (n_base, k0, p.n, p.k)
                } else {
                    (k0, n_base, p.k, p.n)
                },
            ),
        ];
        for (copy, tile_base, matrix, (row0, col0, rows_total, cols_total)) in operands {
            assert!(
                copy.well_formed(),
                "{copy:?} violates TileCopy's static_asserts"
            );
            let epc = copy.elems_per_chunk();
            for tid in 0..copy.threads {
                for i in 0..copy.per_thread() {
                    let c = copy.chunk(i, tid, row0, col0, rows_total, cols_total);
                    assert!(
                        c.offset < copy.footprint(),
                        "chunk offset {} outside the tile footprint",
                        c.offset
                    );
                    self.written[s][tile_base + c.offset] += 1;
                    let dst = self.stage_base(s) + (tile_base + c.offset) * CHUNK;
                    for e in 0..epc {
                        let bits = if e < c.valid {
                            matrix.bits(c.grow, c.gcol + e)
                        } else {
                            0
                        };
                        let at = dst + e * copy.elem_bytes;
                        self.smem[at..at + copy.elem_bytes]
                            .copy_from_slice(&bits.to_le_bytes()[..copy.elem_bytes]);
                    }
                }
            }
            // Every logical chunk of the tile landed exactly once (the layout is a bijection).
            for row in 0..copy.rows {
                for col in 0..copy.chunks_per_row() {
                    let at = tile_base
                        + copy
                            .layout
                            .chunk(row, col, copy.rows, copy.chunks_per_row());
                    assert_eq!(
                        self.written[s][at], 1,
                        "tile chunk ({row}, {col}) written {} times",
                        self.written[s][at]
                    );
                }
            }
        }
    }

    /// Checks that a fragment read of stage `s` touches only chunks of `operand_range`
    /// (in chunks from the stage start) that the current fill wrote.
    fn check_read(
        &self,
        s: usize,
        read: &super::model::FragmentRead,
        operand_range: std::ops::Range<usize>,
    ) {
        let base = self.stage_base(s);
        for (addr, len) in touched(read) {
            let addr = addr as usize;
            assert!(addr >= base, "read below the stage");
            let first = (addr - base) / CHUNK;
            let last = (addr - base + len as usize - 1) / CHUNK;
            for ch in first..=last {
                assert!(
                    operand_range.contains(&ch),
                    "fragment read of chunk {ch} outside its operand tile {operand_range:?}"
                );
                assert_eq!(
                    self.written[s][ch], 1,
                    "fragment read of chunk {ch}, which this fill did not write"
                );
            }
        }
    }
}

/// Emulates `gemm_mma<T, L, Tile>` (mma_kernel.cuh) on `p`: the accumulators (alpha = 1,
/// beta = 0, no bias) of every output.
pub fn emulate_mma(p: &EmuProblem, tile: &MmaTileModel) -> Vec<f64> {
    let eb = p.kind.elem_bytes();
    let stage = MmaStage::new(eb, p.layout.a_k_major(), p.layout.b_k_major(), tile);
    let (tiles_m, tiles_n) = (p.m.div_ceil(tile.bm), p.n.div_ceil(tile.bn));
    let ktiles = p.k.div_ceil(tile.bk);
    let s_count = tile.stages;
    let mut out = Outputs::new(p.m, p.n);
    for bid in 0..tiles_m * tiles_n {
        let (tm, tn) = raster_grouped(bid, tiles_m, tiles_n, RASTER_GROUP as usize);
        let (m_base, n_base) = (tm * tile.bm, tn * tile.bn);
        let mut ring = StageRing {
            smem: vec![0xa5; stage.smem_bytes(s_count)],
            stage,
            content: vec![None; s_count],
            written: vec![vec![0; stage.chunks()]; s_count],
        };
        let warps = tile.warps_m * tile.warps_n;
        let mut acc = vec![vec![vec![[[0.0f64; 4]; 32]; tile.nt()]; tile.mt()]; warps];
        // gemm_mma's schedule: the prologue fills k tiles 0 .. stages - 2; k tile kt refills
        // the stage tile kt - 1 used with tile kt + stages - 1, and every fragment it reads
        // comes from tile kt's stage (its first step's fragments are loaded at the end of
        // tile kt - 1, after the barrier, from the same stage). Step j of this loop is the
        // fill of tile j followed by the reads of tile j - (stages - 1).
        let (mut read_stage, mut write_stage) = (0, 0);
        for j in 0..ktiles + s_count - 1 {
            let kt = j as isize - (s_count as isize - 1);
            if j < ktiles {
                if let Some(old) = ring.content[write_stage] {
                    assert!(
                        (old as isize) < kt,
                        "stage {write_stage} refilled while tile {old} is still unread"
                    );
                }
                ring.fill(p, write_stage, j, m_base, n_base, tile.bk);
            }
            write_stage = (write_stage + 1) % s_count;
            if kt < 0 {
                continue;
            }
            let kt = kt as usize;
            assert_eq!(
                ring.content[read_stage],
                Some(kt),
                "stage {read_stage} does not hold tile {kt} when it is read"
            );
            let sa = ring.stage_base(read_stage) as u32;
            let sb = sa + (stage.chunks_a() * CHUNK) as u32;
            for (warp, acc) in acc.iter_mut().enumerate() {
                let wm = (warp / tile.warps_n) * tile.warp_m();
                let wn = (warp % tile.warps_n) * tile.warp_n();
                for kk in (0..tile.bk).step_by(p.kind.k()) {
                    let mut a_frags = Vec::new();
                    for mi in 0..tile.mt() {
                        let read = load_a(
                            eb,
                            stage.copy_a.layout,
                            stage.a_k_major,
                            tile.bm,
                            tile.bk,
                            sa,
                            wm + mi * 16,
                            kk,
                        );
                        ring.check_read(read_stage, &read, 0..stage.chunks_a());
                        a_frags.push(operands(p.kind, execute(&read, &ring.smem)));
                    }
                    let mut b_frags = Vec::new();
                    for np in 0..tile.nt() / 2 {
                        let read = load_b_pair(
                            eb,
                            stage.copy_b.layout,
                            stage.b_k_major,
                            tile.bn,
                            tile.bk,
                            sb,
                            wn + np * 16,
                            kk,
                        );
                        ring.check_read(read_stage, &read, stage.chunks_a()..stage.chunks());
                        let r = operands(p.kind, execute(&read, &ring.smem));
                        b_frags.push(std::array::from_fn::<[u32; 2], 32, _>(|l| {
                            [r[l][0], r[l][1]]
                        }));
                        b_frags.push(std::array::from_fn::<[u32; 2], 32, _>(|l| {
                            [r[l][2], r[l][3]]
                        }));
                    }
                    for (mi, a) in a_frags.iter().enumerate() {
                        for (ni, b) in b_frags.iter().enumerate() {
                            mma(p.kind, a, b, &mut acc[mi][ni]);
                        }
                    }
                }
            }
            read_stage = (read_stage + 1) % s_count;
        }
        // Epilogue: per warp and m16 slice, accumulators -> staged slice -> quads of C.
        for (warp, acc) in acc.iter().enumerate() {
            let wm = (warp / tile.warps_n) * tile.warp_m();
            let wn = (warp % tile.warps_n) * tile.warp_n();
            let row_len = tile.warp_n() + EPILOGUE_PAD;
            assert!(
                tile.warps_m * tile.warps_n * 16 * row_len * 4 <= stage.smem_bytes(s_count),
                "slices exceed the ring"
            );
            for (mi, row_acc) in acc.iter().enumerate() {
                let mut slice = vec![f64::NAN; 16 * row_len];
                let mut hits = vec![0u32; 16 * row_len];
                for lane in 0..32 {
                    for (ni, frag) in row_acc.iter().enumerate() {
                        for (r, &v) in frag[lane].iter().enumerate() {
                            let (row, col) = epilogue_slot(lane, ni, r);
                            slice[row * row_len + col] = v;
                            hits[row * row_len + col] += 1;
                        }
                    }
                }
                for row in 0..16 {
                    for col in 0..tile.warp_n() {
                        assert_eq!(
                            hits[row * row_len + col],
                            1,
                            "slice element ({row}, {col}) staged {} times",
                            hits[row * row_len + col]
                        );
                    }
                }
                for idx in 0..16 * tile.warp_n() / 4 {
                    let (qr, qc) = epilogue_quad(idx, tile.warp_n());
                    for e in 0..4 {
                        let (row, col) = (m_base + wm + mi * 16 + qr, n_base + wn + qc + e);
                        if row < p.m && col < p.n {
                            out.write(row, col, slice[qr * row_len + qc + e]);
                        }
                    }
                }
            }
        }
    }
    out.finish()
}

/// `MmaTraits<T>::operand`: tf32 operands are rounded as they leave shared memory.
fn operands(kind: MmaKind, regs: [[u32; 4]; 32]) -> [[u32; 4]; 32] {
    if kind == MmaKind::Tf32 {
        regs.map(|r| r.map(tf32_round))
    } else {
        regs
    }
}

/// `__byte_perm(x, y, s)` for selectors below 8 per nibble.
pub fn byte_perm(x: u32, y: u32, s: u32) -> u32 {
    let bytes = (u64::from(y) << 32 | u64::from(x)).to_le_bytes();
    (0..4).fold(0u32, |acc, i| {
        acc | u32::from(bytes[((s >> (4 * i)) & 7) as usize]) << (8 * i)
    })
}

fn words<const N: usize>(s: &Stored, r: usize, c: usize) -> [u32; N] {
    // N 32-bit words = 2N 16-bit elements starting at (r, c).
    std::array::from_fn(|w| s.bits(r, c + 2 * w) | (s.bits(r, c + 2 * w + 1) << 16))
}

/// Emulates `gemm_decode<T, L, Tile>` (decode_kernel.cuh) for the variant `tile`:
/// accumulators of every output (alpha = 1, beta = 0, no bias), with one n8 tile of rows for
/// M <= 8 and two above, as the kernel picks. Walk position `s` of column block `c` reads
/// physical step `(s + shift) % steps` (the stagger); warp `w` takes the positions of its
/// rounds in order. Also asserts that each weight element is loaded exactly once.
pub fn emulate_decode(p: &EmuProblem, tile: &DecodeTile) -> Vec<f64> {
    assert!(matches!(p.kind, MmaKind::Bf16 | MmaKind::Fp16));
    if tile.ring_stages > 0 {
        return emulate_decode_ring(p, tile);
    }
    let nt = match p.layout {
        Layout::NT => true,
        Layout::NN => false,
        Layout::TN => panic!("the decode kernel reads A as [M][K]"),
    };
    assert!(
        p.m <= 16 && p.k % 8 == 0 && (nt || p.n % 4 == 0),
        "outside the decode kernel's domain"
    );
    let (bn, warps, unroll) = (tile.bn as usize, tile.warps as usize, tile.unroll as usize);
    let ni = bn / 16;
    assert!(nt || ni == 2, "NN: 32 columns per block");
    let mt_count = if p.m <= 8 { 1 } else { 2 };
    let steps = p.k.div_ceil(32);
    let mut out = Outputs::new(p.m, p.n);
    let mut w_loads = vec![0u32; p.n * p.k];
    let mut count = |n: usize, k: usize, len: usize, along_k: bool| {
        for e in 0..len {
            let (nn, kk) = if along_k { (n, k + e) } else { (n + e, k) };
            w_loads[nn * p.k + kk] += 1;
        }
    };
    for block in 0..p.n.div_ceil(bn) {
        let n_block = block * bn;
        let groups = tile.stagger_groups as usize;
        // The kernel's shift: (block % G) * steps / G, none without stagger groups.
        let shift = block.checked_rem(groups).map_or(0, |r| r * steps / groups);
        let nacc = ni * mt_count * 4;
        let mut partial = vec![vec![[0.0f64; 32]; nacc]; warps];
        for (warp, partial) in partial.iter_mut().enumerate() {
            let mut acc = vec![vec![[[0.0f64; 4]; 32]; mt_count]; ni];
            let position = |j: usize, u: usize| (j * unroll + u) * warps + warp;
            let mut j = 0;
            while position(j, 0) < steps {
                for u in 0..unroll {
                    let s = position(j, u);
                    let phys = (s + shift) % steps;
                    let mut a_regs = vec![[[0u32; 4]; 32]; mt_count];
                    let mut b_nt = vec![[[[0u32; 4]; 32]; 2]; ni];
                    let mut b_nn = [[[0u32; 2]; 32]; 8];
                    for lane in 0..32 {
                        let (g, t) = (lane / 4, lane % 4);
                        let k = phys * 32 + 8 * t;
                        let k_in = s < steps && k < p.k;
                        for (mt, regs) in a_regs.iter_mut().enumerate() {
                            let m = g + 8 * mt;
                            if k_in && m < p.m {
                                regs[lane] = words::<4>(&p.a, m, k);
                            }
                        }
                        if nt {
                            for (i, tile_rows) in b_nt.iter_mut().enumerate() {
                                for (h2, rows) in tile_rows.iter_mut().enumerate() {
                                    let n = n_block + 16 * i + 8 * h2 + g;
                                    if k_in && n < p.n {
                                        rows[lane] = words::<4>(&p.b, n, k);
                                        count(n, k, 8, true);
                                    }
                                }
                            }
                        } else {
                            let n = n_block + 4 * g;
                            for (r, row) in b_nn.iter_mut().enumerate() {
                                if k_in && n < p.n {
                                    row[lane] = words::<2>(&p.b, k + r, n);
                                    count(n, k + r, 4, false);
                                }
                            }
                        }
                    }
                    for h in 0..2 {
                        let mut a_ops = vec![[[0u32; 4]; 32]; ni];
                        for lane in 0..32 {
                            for (i, ops) in a_ops.iter_mut().enumerate() {
                                ops[lane] = if nt {
                                    let (r0, r1) = (b_nt[i][0][lane], b_nt[i][1][lane]);
                                    [r0[2 * h], r1[2 * h], r0[2 * h + 1], r1[2 * h + 1]]
                                } else {
                                    let row = |q: usize| b_nn[4 * h + q][lane][i];
                                    [
                                        byte_perm(row(0), row(1), 0x5410),
                                        byte_perm(row(0), row(1), 0x7632),
                                        byte_perm(row(2), row(3), 0x5410),
                                        byte_perm(row(2), row(3), 0x7632),
                                    ]
                                };
                            }
                        }
                        for (mt, regs) in a_regs.iter().enumerate() {
                            let b_ops: [[u32; 2]; 32] =
                                std::array::from_fn(|l| [regs[l][2 * h], regs[l][2 * h + 1]]);
                            for (i, ops) in a_ops.iter().enumerate() {
                                mma(p.kind, ops, &b_ops, &mut acc[i][mt]);
                            }
                        }
                    }
                }
                j += 1;
            }
            for (i, per_mt) in acc.iter().enumerate() {
                for (mt, frag) in per_mt.iter().enumerate() {
                    for (lane, regs) in frag.iter().enumerate() {
                        for (r, &v) in regs.iter().enumerate() {
                            partial[(i * mt_count + mt) * 4 + r][lane] = v;
                        }
                    }
                }
            }
        }
        // Warps summed in order 0, 1, ... (exact here: small integers).
        for idx in 0..nacc * 32 {
            let (v, ln) = (idx >> 5, idx & 31);
            let (i, mt, r) = (v / (mt_count * 4), (v >> 2) % mt_count, v & 3);
            let m = 8 * mt + 2 * (ln & 3) + (r & 1);
            let row = (ln >> 2) + 8 * (r >> 1);
            let n = n_block + decode_column(nt, i, row);
            let sum: f64 = partial.iter().map(|w| w[v][ln]).sum();
            if m < p.m && n < p.n {
                out.write(m, n, sum);
            }
        }
    }
    assert_loaded_once(&w_loads, p.k);
    out.finish()
}

/// Panics unless every weight element (counted `[n][k]`, K = `k`) was loaded exactly once.
fn assert_loaded_once(w_loads: &[u32], k: usize) {
    if let Some(i) = w_loads.iter().position(|&c| c != 1) {
        panic!(
            "weight element (n {}, k {}) loaded {} times",
            i / k,
            i % k,
            w_loads[i]
        );
    }
}

/// Emulates the decode kernel's ring walk (`decode_ring_rows`, NN): per k tile, every
/// thread's 16-byte copies of B's rows and A's 16 rows into the swizzled stage (each chunk
/// written once, each weight element loaded once), then each warp's ldmatrix.x4.trans of
/// its 16 columns and ldmatrix.x2 of A^T per k16 block, and its mma in k order.
fn emulate_decode_ring(p: &EmuProblem, tile: &DecodeTile) -> Vec<f64> {
    assert_eq!(p.layout, Layout::NN, "the ring walk reads B as [K][N]");
    assert!(
        p.m <= 16 && p.k % 8 == 0,
        "outside the decode kernel's domain"
    );
    let (bn, bk, warps) = (tile.bn as usize, tile.ring_k as usize, tile.warps as usize);
    assert_eq!(bn, 16 * warps, "one 16-column tile per warp");
    let threads = 32 * warps;
    // Byte offsets of chunk (row, q) in the swizzled weight and A tiles (`DecodeRing`).
    let b_chunk = |r: usize, q: usize| 16 * TileLayout::Swizzled.chunk(r, q, bk, bn / 8);
    let a_chunk = |r: usize, q: usize| 16 * TileLayout::Swizzled.chunk(r, q, 16, bk / 8);
    let b_bytes = bk * 2 * bn;
    let mt_count = if p.m <= 8 { 1 } else { 2 };
    let mut out = Outputs::new(p.m, p.n);
    let mut w_loads = vec![0u32; p.n * p.k];
    for block in 0..p.n.div_ceil(bn) {
        let n0 = block * bn;
        let mut acc = vec![vec![[[0.0f64; 4]; 32]; mt_count]; warps];
        for k0 in (0..p.k).step_by(bk) {
            let mut stage = vec![0u8; b_bytes + 32 * bk];
            let mut written = vec![0u8; (b_bytes + 32 * bk) / 16];
            let mut put = |at: usize, elems: [u32; 8]| {
                written[at / 16] += 1;
                for (e, v) in elems.iter().enumerate() {
                    stage[at + 2 * e..at + 2 * e + 2].copy_from_slice(&(*v as u16).to_le_bytes());
                }
            };
            for tid in 0..threads {
                for j in 0..b_bytes / 16 / threads {
                    let c = tid + j * threads;
                    let (r, q) = (c / (bn / 8), c % (bn / 8));
                    let (k, n) = (k0 + r, n0 + 8 * q);
                    // A chunk that starts inside N stays inside the row (ldb >= N, whole chunks).
                    let elems = if k < p.k && n < p.n {
                        std::array::from_fn(|e| {
                            if n + e < p.n {
                                w_loads[(n + e) * p.k + k] += 1;
                                p.b.bits(k, n + e)
                            } else {
                                0
                            }
                        })
                    } else {
                        [0; 8]
                    };
                    put(b_chunk(r, q), elems);
                }
                if tid < 16 * (bk / 8) {
                    let (r, q) = (tid / (bk / 8), tid % (bk / 8));
                    let elems = if r < p.m && k0 + 8 * q < p.k {
                        std::array::from_fn(|e| p.a.bits(r, k0 + 8 * q + e))
                    } else {
                        [0; 8]
                    };
                    put(b_bytes + a_chunk(r, q), elems);
                }
            }
            assert!(
                written.iter().all(|&w| w == 1),
                "a stage chunk written other than once"
            );
            for (warp, acc) in acc.iter_mut().enumerate() {
                for kk in 0..bk / 16 {
                    let a_addrs: [u32; 32] = std::array::from_fn(|l| {
                        let (mi, rr) = (l >> 3, l & 7);
                        b_chunk(16 * kk + 8 * (mi >> 1) + rr, 2 * warp + (mi & 1)) as u32
                    });
                    let a_ops = ldmatrix_x4(&stage, &a_addrs, true);
                    for (mt, acc) in acc.iter_mut().enumerate() {
                        // x2: lanes 0-15 address the two matrices (lanes 16-31 repeat them).
                        let b_addrs: [u32; 32] = std::array::from_fn(|l| {
                            let (mi, rr) = (l >> 3, l & 7);
                            (b_bytes + a_chunk(8 * mt + rr, 2 * kk + (mi & 1))) as u32
                        });
                        let regs = ldmatrix_x4(&stage, &b_addrs, false);
                        let b_ops: [[u32; 2]; 32] =
                            std::array::from_fn(|l| [regs[l][0], regs[l][1]]);
                        mma(p.kind, &a_ops, &b_ops, acc);
                    }
                }
            }
        }
        for (warp, per_mt) in acc.iter().enumerate() {
            for (mt, frag) in per_mt.iter().enumerate() {
                for (lane, regs) in frag.iter().enumerate() {
                    let (g, t) = (lane / 4, lane % 4);
                    for (r, &v) in regs.iter().enumerate() {
                        let (m, n) = (8 * mt + 2 * t + (r & 1), n0 + 16 * warp + g + 8 * (r >> 1));
                        if m < p.m && n < p.n {
                            out.write(m, n, v);
                        }
                    }
                }
            }
        }
    }
    assert_loaded_once(&w_loads, p.k);
    out.finish()
}

/// Emulates `gemm_pedantic<L, Tile>` (pedantic_kernel.cuh) bit for bit in f32: staging
/// through the two shared buffers, each thread's reads of its owned rows and columns, the
/// fmaf chain. Returns the accumulators. Also asserts each staged element is loaded once
/// per k tile and each output has one owner.
pub fn emulate_pedantic(
    layout: Layout,
    m: usize,
    n: usize,
    k: usize,
    a: &Stored,
    b: &Stored,
    t: &super::plan::FmaTile,
) -> Vec<f32> {
    let (bm, bn, bk, tm, tn) = (
        t.bm as usize,
        t.bn as usize,
        t.bk as usize,
        t.tm as usize,
        t.tn as usize,
    );
    let (threads_m, threads_n) = (bm / tm, bn / tn);
    let threads = threads_m * threads_n;
    let pad = 4;
    let f = |s: &Stored, r: usize, c: usize| f32::from_bits(s.bits(r, c));
    // FmaStage::load + store: returns the staged [bk][rows + pad] slice.
    let stage = |x: &Stored,
                 k_major: bool,
                 rows: usize,
                 row0: usize,
                 k0: usize,
                 rows_total: usize|
     -> Vec<f32> {
        let per_thread = rows * bk / threads;
        let runs_per_line = (if k_major { bk } else { rows }) / per_thread;
        let mut s = vec![f32::NAN; bk * (rows + pad)];
        let mut hits = vec![0u32; bk * (rows + pad)];
        for tid in 0..threads {
            let (line, first) = super::model::fma_run(tid, runs_per_line, per_thread);
            for i in 0..per_thread {
                let (row, kk) = if k_major {
                    (line, first + i)
                } else {
                    (first + i, line)
                };
                let (gr, gk) = (row0 + row, k0 + kk);
                let v = if gr < rows_total && gk < k {
                    if k_major {
                        f(x, gr, gk)
                    } else {
                        f(x, gk, gr)
                    }
                } else {
                    0.0
                };
                s[kk * (rows + pad) + row] = v;
                hits[kk * (rows + pad) + row] += 1;
            }
        }
        for kk in 0..bk {
            for row in 0..rows {
                assert_eq!(
                    hits[kk * (rows + pad) + row],
                    1,
                    "staged element (k {kk}, row {row}) written {} times",
                    hits[kk * (rows + pad) + row]
                );
            }
        }
        s
    };
    let mut out = vec![f32::NAN; m * n];
    let mut owners = vec![0u32; m * n];
    let (tiles_m, tiles_n) = (m.div_ceil(bm), n.div_ceil(bn));
    for tile in 0..tiles_m * tiles_n {
        let (tmi, tni) = raster_grouped(tile, tiles_m, tiles_n, RASTER_GROUP as usize);
        let (m0, n0) = (tmi * bm, tni * bn);
        let mut acc = vec![vec![0.0f32; tm * tn]; threads];
        for kt in 0..k.div_ceil(bk) {
            let sa = stage(a, layout.a_k_major(), bm, m0, kt * bk, m);
            let sb = stage(b, layout.b_k_major(), bn, n0, kt * bk, n);
            for (tid, acc) in acc.iter_mut().enumerate() {
                let (ty, tx) = (tid / threads_n, tid % threads_n);
                for kk in 0..bk {
                    for i in 0..tm {
                        let av = sa[kk * (bm + pad) + fma_owned(i, ty, bm, tm)];
                        for j in 0..tn {
                            let bv = sb[kk * (bn + pad) + fma_owned(j, tx, bn, tn)];
                            acc[i * tn + j] = av.mul_add(bv, acc[i * tn + j]);
                        }
                    }
                }
            }
        }
        for (tid, acc) in acc.iter().enumerate() {
            let (ty, tx) = (tid / threads_n, tid % threads_n);
            for i in 0..tm {
                for j in 0..tn {
                    let (row, col) = (m0 + fma_owned(i, ty, bm, tm), n0 + fma_owned(j, tx, bn, tn));
                    if row < m && col < n {
                        out[row * n + col] = acc[i * tn + j];
                        owners[row * n + col] += 1;
                    }
                }
            }
        }
    }
    if let Some(i) = owners.iter().position(|&o| o != 1) {
        panic!(
            "output ({}, {}) owned by {} threads",
            i / n,
            i % n,
            owners[i]
        );
    }
    out
}
