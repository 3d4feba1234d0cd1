//! GEMM checks that need no GPU: the schedule proofs (copy coverage, swizzled shared-memory
//! addresses, bank conflicts, stage-ring lifetime, fragment and output ownership, tails) on
//! the host model of the kernels, whole-CTA emulations against reference GEMMs, the
//! selector, and the agreement of the planned entry points with `cuda/kernels.toml`. The
//! planner's tables themselves come from `cuda/gemm_catalogue.toml`, as the kernels' do.

mod common;
mod gemm_common;

use common::data::SplitMix64;
use gemm_common::emulate::{
    byte_perm, emulate_decode, emulate_mma, emulate_pedantic, EmuProblem, Stored,
};
use gemm_common::model::{
    self, bank_group, ldmatrix_conflict_free, load_a, load_b_pair, raster_grouped,
    words_conflict_free, FragmentRead, MmaKind, MmaStage, MmaTileModel, TileLayout, CHUNK,
};
use gemm_common::plan::{
    self, Choice, DeviceFacts, Dtype, Layout, Plan, PlanError, Problem, Schedule, SmemClass, Tier,
    Workspace,
};
use gemm_common::reference::pedantic_f32;

/// The H200 running an sm_90 cubin (the wgmma kernels are stubs there).
const H200: DeviceFacts = DeviceFacts {
    sm_count: 132,
    max_smem_per_block_optin: 232_448,
    wgmma: false,
    smem_class: SmemClass::Kb228,
};

/// The H200 running the sm_90a cubin.
const H200_SM90A: DeviceFacts = DeviceFacts {
    wgmma: true,
    ..H200
};

fn kind_of(tier: Tier) -> MmaKind {
    match tier {
        Tier::Bf16 => MmaKind::Bf16,
        Tier::Fp16 => MmaKind::Fp16,
        Tier::Tf32 => MmaKind::Tf32,
        Tier::F32Pedantic => panic!("no mma in the pedantic tier"),
    }
}

/// The tensor-core tiles the kernels instantiate for `tier` and `layout` on any arch.
fn mma_tiles(tier: Tier, layout: Layout) -> Vec<plan::MmaTile> {
    let mut v = Vec::new();
    for class in SmemClass::ALL {
        for s in plan::schedules(tier, layout, class) {
            if let Schedule::Mma(t) = s {
                if !v.contains(&t) {
                    v.push(t);
                }
            }
        }
    }
    v
}

/// Every (tier, layout, tensor-core tile) the kernels instantiate, on any arch.
fn mma_configs() -> Vec<(Tier, Layout, plan::MmaTile)> {
    let mut v = Vec::new();
    for tier in [Tier::Bf16, Tier::Fp16, Tier::Tf32] {
        for layout in Layout::ALL {
            v.extend(
                mma_tiles(tier, layout)
                    .into_iter()
                    .map(|t| (tier, layout, t)),
            );
        }
    }
    v
}

/// Every tensor-core configuration with its stage model.
fn mma_stages() -> Vec<(Tier, Layout, plan::MmaTile, MmaStage)> {
    mma_configs()
        .into_iter()
        .map(|(tier, layout, t)| {
            let stage = MmaStage::new(
                tier.input_bytes() as usize,
                layout.a_k_major(),
                layout.b_k_major(),
                &MmaTileModel::from_plan(&t),
            );
            (tier, layout, t, stage)
        })
        .collect()
}

// ---------------------------------------------------------------- shared-memory layouts

#[test]
fn tile_layouts_are_bijections_into_their_footprint() {
    for (tier, layout, t, stage) in mma_stages() {
        for copy in [stage.copy_a, stage.copy_b] {
            assert!(copy.well_formed(), "{copy:?}");
            let cpr = copy.chunks_per_row();
            let mut hit = vec![0u32; copy.footprint()];
            for row in 0..copy.rows {
                for col in 0..cpr {
                    hit[copy.layout.chunk(row, col, copy.rows, cpr)] += 1;
                }
            }
            let used = hit.iter().filter(|&&h| h == 1).count();
            assert!(
                hit.iter().all(|&h| h <= 1),
                "{tier:?} {layout:?} {copy:?}: two chunks share a slot"
            );
            assert_eq!(used, copy.chunks(), "{tier:?} {layout:?} {copy:?}");
        }
        assert_eq!(
            stage.smem_bytes(t.stages as usize) as u32,
            t.smem_bytes(tier, layout),
            "{tier:?} {layout:?} {t:?}"
        );
    }
}

#[test]
fn swizzle_puts_each_ldmatrix_phase_on_eight_bank_groups() {
    // Direct check of the property the XOR is for, on every row offset an ldmatrix can use.
    for (rows, cpr) in [
        (128, 4),
        (64, 8),
        (32, 16),
        (32, 32),
        (64, 16),
        (16, 8),
        (128, 8),
    ] {
        for col in 0..cpr {
            for r0 in (0..rows).step_by(8) {
                let mut seen = [false; 8];
                for row in r0..r0 + 8 {
                    let g = TileLayout::Swizzled.chunk(row, col, rows, cpr) % 8;
                    assert!(
                        !std::mem::replace(&mut seen[g], true),
                        "rows {r0}.. col {col} of a {rows}x{cpr} tile collide"
                    );
                }
            }
        }
    }
}

#[test]
fn every_fragment_read_is_bank_conflict_free() {
    for (tier, layout, t) in mma_configs() {
        let tile = MmaTileModel::from_plan(&t);
        let eb = tier.input_bytes() as usize;
        let stage = MmaStage::new(eb, layout.a_k_major(), layout.b_k_major(), &tile);
        let sb = (stage.chunks_a() * CHUNK) as u32;
        for warp in 0..tile.warps_m * tile.warps_n {
            let wm = (warp / tile.warps_n) * tile.warp_m();
            let wn = (warp % tile.warps_n) * tile.warp_n();
            for kk in (0..tile.bk).step_by(kind_of(tier).k()) {
                let mut reads = Vec::new();
                for mi in 0..tile.mt() {
                    reads.push(load_a(
                        eb,
                        stage.copy_a.layout,
                        stage.a_k_major,
                        tile.bm,
                        tile.bk,
                        0,
                        wm + mi * 16,
                        kk,
                    ));
                }
                for np in 0..tile.nt() / 2 {
                    reads.push(load_b_pair(
                        eb,
                        stage.copy_b.layout,
                        stage.b_k_major,
                        tile.bn,
                        tile.bk,
                        sb,
                        wn + np * 16,
                        kk,
                    ));
                }
                for read in &reads {
                    match read {
                        FragmentRead::Ldmatrix { addrs, .. } => {
                            assert!(
                                ldmatrix_conflict_free(addrs),
                                "{tier:?} {layout:?} {t:?} warp {warp} kk {kk}: ldmatrix conflict"
                            )
                        }
                        FragmentRead::Words { addrs } => {
                            for r in 0..4 {
                                let lanes: Vec<u32> = addrs.iter().map(|a| a[r]).collect();
                                assert!(words_conflict_free(&lanes), "{tier:?} {layout:?} {t:?} warp {warp} kk {kk} reg {r}: LDS conflict");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn cp_async_store_phases_are_bank_conflict_free() {
    // A warp's 16-byte stores go out eight lanes at a time; each eight must cover eight bank groups.
    for (tier, layout, t, stage) in mma_stages() {
        for copy in [stage.copy_a, stage.copy_b] {
            for i in 0..copy.per_thread() {
                for first in (0..copy.threads).step_by(8) {
                    let mut seen = [false; 8];
                    for tid in first..first + 8 {
                        let g = bank_group(
                            (copy.chunk(i, tid, 0, 0, usize::MAX, usize::MAX).offset * CHUNK)
                                as u32,
                        );
                        assert!(
                            !std::mem::replace(&mut seen[g as usize], true),
                            "{tier:?} {layout:?} {t:?} {copy:?} i {i} lanes {first}.."
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn epilogue_staging_is_bank_conflict_free() {
    // float2 writes go out a half-warp at a time (16 lanes x 8 bytes: 32 distinct banks
    // wanted); float4 reads a quarter-warp at a time (8 lanes x 16 bytes: 8 bank groups).
    for warp_n in [32usize, 64] {
        let row_len = warp_n + model::EPILOGUE_PAD;
        for ni in 0..warp_n / 8 {
            for r in [0, 2] {
                for half in [0..16, 16..32] {
                    let mut banks = std::collections::HashSet::new();
                    for lane in half {
                        let (row, col) = model::epilogue_slot(lane, ni, r);
                        let word = row * row_len + col;
                        assert_eq!(word % 2, 0, "float2 writes are 8-byte aligned");
                        assert!(
                            banks.insert(word % 32) && banks.insert((word + 1) % 32),
                            "warp_n {warp_n} ni {ni} r {r}: write conflict"
                        );
                    }
                }
            }
        }
        let quads: Vec<usize> = (0..16 * warp_n / 4)
            .map(|idx| {
                let (row, col) = model::epilogue_quad(idx, warp_n);
                row * row_len + col
            })
            .collect();
        for (i, group) in quads.chunks(8).enumerate() {
            let mut seen = [false; 8];
            for &word in group {
                assert_eq!(word % 4, 0, "float4 reads are 16-byte aligned");
                assert!(
                    !std::mem::replace(&mut seen[bank_group((word * 4) as u32) as usize], true),
                    "warp_n {warp_n} read group {i}: conflict"
                );
            }
        }
    }
}

/// Where the TMA kernel's staged epilogue (`store_staged` in
/// cuda/include/cubins/gemm/tma_kernel.cuh) puts accumulators `4j + 2h` and `4j + 2h + 1` of
/// lane `lane` of warp `warp` for outputs of `e` bytes, `jj` the column group of 8 within the
/// part: (box, byte offset in the box).
fn tma_staging_slot(e: usize, jj: usize, h: usize, warp: usize, lane: usize) -> (usize, usize) {
    let box_ = jj / (128 / e / 8);
    let chunk = if e == 2 {
        jj % 8
    } else {
        2 * (jj % 4) + (lane % 4) / 2
    };
    let within = if e == 2 {
        4 * (lane % 4)
    } else {
        8 * (lane % 2)
    };
    let r = warp * 16 + lane / 4 + 8 * h;
    (box_, r * 128 + ((chunk ^ (r & 7)) << 4) + within)
}

#[test]
fn tma_staged_epilogue_is_the_copy_engines_box_layout() {
    // Staging per consumer: 64 x 256 bytes; a part is its 64 rows x (256 / e) columns, stored
    // as boxes of 64 rows x 128 bytes that the copy engine reads in the 128-byte swizzle:
    // element (row, c) of a box at row * 128 + (((c e) / 16) ^ (row % 8)) * 16 + (c e) % 16.
    // Accumulator 4j + 2h + i of lane l of warp w is output row 16w + l/4 + 8h, column
    // 8j + 2 (l % 4) + i of the consumer's 64 x 256. A warp's store of 32 pairs is served 128
    // bytes a wavefront: 16-bit pairs (32 lanes x 4 bytes) without a bank conflict; f32 pairs
    // (16 lanes x 8 bytes: 4 rows of 32 bytes, rows r and r ^ 1 on the same two chunk slots)
    // two ways, 64 KB a tile against its thousands of cycles of MMA.
    for (e, conflict_ways) in [(2usize, 1usize), (4, 2)] {
        let part_cols = 256 / e;
        let (parts, kj, box_cols) = (256 / part_cols, part_cols / 8, 128 / e);
        for part in 0..parts {
            let mut written = std::collections::HashSet::new();
            for jj in 0..kj {
                let j = part * kj + jj;
                for h in 0..2 {
                    for warp in 0..4 {
                        let mut banks = std::collections::HashMap::<usize, usize>::new();
                        for lane in 0..32 {
                            let (b, at) = tma_staging_slot(e, jj, h, warp, lane);
                            let (row, col) = (16 * warp + lane / 4 + 8 * h, 8 * j + 2 * (lane % 4));
                            let c = col - part * part_cols;
                            assert_eq!(b, c / box_cols, "e {e} part {part} jj {jj}");
                            let cb = (c % box_cols) * e;
                            assert_eq!(
                                at,
                                row * 128 + (((cb / 16) ^ (row % 8)) << 4) + cb % 16,
                                "e {e} ({row}, {col})"
                            );
                            assert_eq!(at % (2 * e), 0, "pairs are aligned stores");
                            assert!(
                                written.insert((b, at)),
                                "e {e}: ({row}, {col}) written twice"
                            );
                            if lane % (128 / (2 * e)) == 0 {
                                banks.clear();
                            }
                            for word in 0..2 * e / 4 {
                                let ways = banks.entry((at / 4 + word) % 32).or_default();
                                *ways += 1;
                                assert!(
                                    *ways <= conflict_ways,
                                    "e {e} part {part} jj {jj} warp {warp}"
                                );
                            }
                        }
                    }
                }
            }
            // Every byte of the part's staging is written once.
            assert_eq!(written.len() * 2 * e, 64 * part_cols * e);
        }
    }
}

#[test]
fn interior_copies_are_one_pointer_and_a_stride_per_thread() {
    // TileCopy's fast path addresses chunk i of a thread as its first chunk plus
    // i * kRowsPerPass rows: true when every thread's chunks share a column.
    for (tier, layout, _, stage) in mma_stages() {
        for copy in [stage.copy_a, stage.copy_b] {
            let rows_per_pass = copy.threads / copy.chunks_per_row();
            for tid in 0..copy.threads {
                let first = copy.chunk(0, tid, 0, 0, usize::MAX, usize::MAX);
                for i in 0..copy.per_thread() {
                    let c = copy.chunk(i, tid, 0, 0, usize::MAX, usize::MAX);
                    assert_eq!(
                        (c.row, c.col),
                        (first.row + i * rows_per_pass, first.col),
                        "{tier:?} {layout:?} {copy:?} tid {tid} i {i}"
                    );
                }
            }
        }
    }
}

#[test]
fn tile_copy_loads_every_element_once_and_zero_fills_outside() {
    for (tier, layout, _, stage) in mma_stages() {
        for copy in [stage.copy_a, stage.copy_b] {
            let epc = copy.elems_per_chunk();
            // A window hanging over the matrix edge in both directions (a tail tile).
            let (row0, col0) = (copy.rows * 3, copy.cols * 5);
            for (rows_total, cols_total) in [
                (usize::MAX, usize::MAX),
                (row0 + 5, col0 + 3),
                (row0, col0 + copy.cols - 1),
                (row0 + 1, col0 + 1),
            ] {
                let mut loads = std::collections::HashMap::new();
                for tid in 0..copy.threads {
                    for i in 0..copy.per_thread() {
                        let c = copy.chunk(i, tid, row0, col0, rows_total, cols_total);
                        assert!(c.valid <= epc);
                        for e in 0..c.valid {
                            *loads.entry((c.grow, c.gcol + e)).or_insert(0u32) += 1;
                        }
                        // Everything past `valid` is outside the matrix (and zero-filled).
                        for e in c.valid..epc {
                            assert!(
                                c.grow >= rows_total || c.gcol + e >= cols_total,
                                "in-range element dropped"
                            );
                        }
                    }
                }
                let want = copy.rows.min(rows_total.saturating_sub(row0))
                    * copy.cols.min(cols_total.saturating_sub(col0));
                assert_eq!(
                    loads.len(),
                    want,
                    "{tier:?} {layout:?} {copy:?} ({rows_total}, {cols_total})"
                );
                assert!(loads.values().all(|&n| n == 1), "an element loaded twice");
            }
        }
    }
}

#[test]
fn stage_ring_waits_cover_the_tile_and_refills_only_consumed_stages() {
    // The group accounting of gemm_mma's pipeline: the prologue commits stages - 1 groups
    // (k tiles 0 .. stages - 2, empty past the end) and waits until at most stages - 2 are
    // pending before reading tile 0; k tile kt commits one group at its first step (tile
    // kt + stages - 1, into the stage tile kt - 1 used) and, at its last step, waits again
    // (at most stages - 2 pending) and passes the barrier before reading tile kt + 1. So
    // before tile kt is read, stages - 1 + kt groups have been committed.
    for stages in 2..=5usize {
        for ktiles in 0..=13usize {
            let mut group_tile: Vec<Option<usize>> = Vec::new();
            let mut stage_tile: Vec<Option<usize>> = vec![None; stages];
            let mut consumed = vec![false; ktiles];
            for (s, slot) in stage_tile.iter_mut().enumerate().take(stages - 1) {
                let tile = (s < ktiles).then_some(s);
                group_tile.push(tile);
                *slot = tile;
            }
            let (mut read_stage, mut write_stage) = (0, stages - 1);
            for kt in 0..ktiles {
                let complete = group_tile.len() - (stages - 2); // groups [0, complete) are done
                let landed = group_tile[..complete].iter().flatten().any(|&t| t == kt);
                assert!(
                    landed,
                    "stages {stages} ktiles {ktiles}: tile {kt} read before its group completed"
                );
                assert_eq!(stage_tile[read_stage], Some(kt));
                let next = kt + stages - 1;
                if next < ktiles {
                    if let Some(old) = stage_tile[write_stage] {
                        assert!(
                            consumed[old],
                            "stage {write_stage} refilled while tile {old} is unread"
                        );
                    }
                    stage_tile[write_stage] = Some(next);
                }
                group_tile.push((next < ktiles).then_some(next));
                consumed[kt] = true;
                read_stage = (read_stage + 1) % stages;
                write_stage = (write_stage + 1) % stages;
            }
            assert!(consumed.iter().all(|&c| c));
        }
    }
}

/// The address a wgmma shared-memory descriptor in the 128-byte swizzle gives element
/// (`outer`, `k`) of an operand of `elem`-byte values (PTX ISA, "Matrix Descriptor" and the
/// canonical SW128 layouts): K-major: 128-byte rows of k values, 8-row groups `sbo` apart;
/// MN-major (16-bit only): k rows of 64 M (or N) values, 8-row groups `sbo` apart, 64-wide
/// panels `lbo` apart. One wgmma covers 32 bytes of k (k16 for 16-bit, k8 for tf32), and the
/// start address moves per wgmma; the swizzle XORs address bits [4, 7) with bits [7, 10) of
/// the whole (1024-byte aligned) address.
fn wgmma_sw128_byte(
    elem: usize,
    k_major: bool,
    outer: usize,
    k: usize,
    lbo: usize,
    sbo: usize,
) -> usize {
    let k_step = 32 / elem;
    let (step, kk) = (k / k_step, k % k_step);
    let linear = if k_major {
        step * 32 + (outer / 8) * sbo + (outer % 8) * 128 + kk * elem
    } else {
        step * k_step * 128
            + (outer / 64) * lbo
            + (kk / 8) * sbo
            + (kk % 8) * 128
            + (outer % 64) * elem
    };
    linear ^ (((linear >> 7) & 7) << 4)
}

#[test]
fn swizzled_tiles_are_the_wgmma_descriptor_layouts() {
    // The wgmma kernel's stage tiles (cuda/include/cubins/gemm/wgmma_kernel.cuh, WgmmaStage):
    // TileCopy with SwizzledTile, k tiles of one 128-byte row (64 16-bit or 32 f32 values),
    // descriptors with SBO = 1024 bytes, LBO = one panel (bk x 128 bytes) for MN-major tiles,
    // wgmma steps of 32 bytes (K-major) or 16 rows (MN-major, 16-bit only). Every element
    // must be where the descriptor reads it.
    for (t, elem, majors) in [
        (plan::TILE_WGMMA, 2, &[true, false][..]),
        (plan::TILE_WGMMA_TF32, 4, &[true][..]),
    ] {
        let bk = t.bk as usize;
        assert_eq!(bk * elem, plan::WgmmaTile::ROW_BYTES as usize);
        let per_chunk = CHUNK / elem;
        for outer in [t.bm() as usize, t.bn as usize] {
            for &k_major in majors {
                let (rows, cols) = if k_major { (outer, bk) } else { (bk, outer) };
                let cpr = cols * elem / CHUNK;
                for o in 0..outer {
                    for k in 0..bk {
                        let (row, col) = if k_major { (o, k) } else { (k, o) };
                        let chunk = TileLayout::Swizzled.chunk(row, col / per_chunk, rows, cpr);
                        let stored = chunk * CHUNK + (col % per_chunk) * elem;
                        let read = wgmma_sw128_byte(elem, k_major, o, k, bk * 128, 1024);
                        assert_eq!(
                            stored, read,
                            "{elem}-byte {outer} x {bk}, k-major {k_major}: element ({o}, {k})"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn raster_visits_every_tile_once() {
    for (tiles_m, tiles_n) in [
        (1, 1),
        (1, 7),
        (7, 1),
        (8, 8),
        (9, 5),
        (17, 3),
        (33, 64),
        (3, 100),
    ] {
        let mut seen = vec![false; tiles_m * tiles_n];
        for bid in 0..tiles_m * tiles_n {
            let (m, n) = raster_grouped(bid, tiles_m, tiles_n, plan::RASTER_GROUP as usize);
            assert!(m < tiles_m && n < tiles_n);
            assert!(
                !std::mem::replace(&mut seen[m * tiles_n + n], true),
                "({m}, {n}) twice"
            );
        }
    }
}

// ---------------------------------------------------------------- fragment semantics

#[test]
fn ldmatrix_model_follows_the_ptx_fragment_layout() {
    // Element (r, c) of an 8x8 matrix holds 8 r + c; lane 4g + t must get (g, 2t), (g, 2t+1)
    // without .trans and (2t, g), (2t+1, g) with it.
    let mut smem = vec![0u8; 4 * 128];
    for j in 0..4 {
        for r in 0..8 {
            for c in 0..8 {
                let at = j * 128 + r * 16 + c * 2;
                smem[at..at + 2].copy_from_slice(&((100 * j + 8 * r + c) as u16).to_le_bytes());
            }
        }
    }
    let addrs: [u32; 32] = std::array::from_fn(|l| (128 * (l / 8) + 16 * (l % 8)) as u32);
    for trans in [false, true] {
        let regs = model::ldmatrix_x4(&smem, &addrs, trans);
        for (l, lane) in regs.iter().enumerate() {
            let (g, t) = (l / 4, l % 4);
            for (j, &reg) in lane.iter().enumerate() {
                let (lo, hi) = if trans {
                    (8 * (2 * t) + g, 8 * (2 * t + 1) + g)
                } else {
                    (8 * g + 2 * t, 8 * g + 2 * t + 1)
                };
                assert_eq!(
                    reg,
                    (100 * j + lo) as u32 | ((100 * j + hi) as u32) << 16,
                    "lane {l} reg {j} trans {trans}"
                );
            }
        }
    }
}

#[test]
fn byte_perm_pairs_rows_per_column() {
    // r0 = (col0, col1) of k row 0, r1 = the same columns of k row 1.
    let (r0, r1) = (0x2222_1111u32, 0x4444_3333u32);
    assert_eq!(
        byte_perm(r0, r1, 0x5410),
        0x3333_1111,
        "column 0: k0 low, k1 high"
    );
    assert_eq!(byte_perm(r0, r1, 0x7632), 0x4444_2222, "column 1");
}

// ---------------------------------------------------------------- whole-CTA emulation

fn encode(kind: MmaKind, v: i32) -> u32 {
    match kind {
        MmaKind::Bf16 => u32::from(half::bf16::from_f32(v as f32).to_bits()),
        MmaKind::Fp16 => u32::from(half::f16::from_f32(v as f32).to_bits()),
        MmaKind::Tf32 => (v as f32).to_bits(),
    }
}

/// A problem with small-integer entries (exact in every tier) and padded leading dimensions;
/// padding holds a value that would show up in the result if it were ever read.
fn int_problem(
    kind: MmaKind,
    layout: Layout,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> EmuProblem {
    let mut rng = SplitMix64::new(seed);
    let eb = kind.elem_bytes();
    let pad = encode(kind, 1000);
    let (ar, ac) = if layout.a_k_major() { (m, k) } else { (k, m) };
    let (br, bc) = if layout.b_k_major() { (n, k) } else { (k, n) };
    let mut gen = |rows: usize, cols: usize| {
        let vals: Vec<i32> = (0..rows * cols)
            .map(|_| (rng.next_u64() % 9) as i32 - 4)
            .collect();
        Stored::from_fn(eb, rows, cols, cols + 8 / eb * 3, pad, |r, c| {
            encode(kind, vals[r * cols + c])
        })
    };
    let a = gen(ar, ac);
    let b = gen(br, bc);
    EmuProblem {
        kind,
        layout,
        m,
        n,
        k,
        a,
        b,
    }
}

fn check_mma(tier: Tier, layout: Layout) {
    for t in mma_tiles(tier, layout) {
        let tile = MmaTileModel::from_plan(&t);
        // A shape with M, N and K tails beyond one tile, and the M = 1 corner.
        for (i, (m, n, k)) in [
            (tile.bm + 9, tile.bn + 17, 2 * tile.bk + 5),
            (1, 24, 3 * tile.bk - 1),
            (tile.bm - 3, 8, 7),
        ]
        .into_iter()
        .enumerate()
        {
            let p = int_problem(kind_of(tier), layout, m, n, k, 17 + i as u64);
            let got = emulate_mma(&p, &tile);
            let want = p.reference();
            assert_eq!(got, want, "{tier:?} {layout:?} {t:?} m {m} n {n} k {k}");
        }
    }
}

#[test]
fn mma_bf16_nn_emulation_matches_reference() {
    check_mma(Tier::Bf16, Layout::NN);
}

#[test]
fn mma_bf16_tn_emulation_matches_reference() {
    check_mma(Tier::Bf16, Layout::TN);
}

#[test]
fn mma_bf16_nt_emulation_matches_reference() {
    check_mma(Tier::Bf16, Layout::NT);
}

#[test]
fn mma_fp16_emulation_matches_reference() {
    // The fp16 kernels share every index with bf16; one tile per layout checks the decoder.
    for layout in Layout::ALL {
        let tile = MmaTileModel::from_plan(&plan::TILE_SMALL);
        let p = int_problem(MmaKind::Fp16, layout, 70, 75, 130, 5);
        assert_eq!(emulate_mma(&p, &tile), p.reference(), "{layout:?}");
    }
}

#[test]
fn mma_tf32_emulation_matches_reference() {
    for layout in Layout::ALL {
        check_mma(Tier::Tf32, layout);
    }
}

/// The decode variants the planner has for `layout` (16-bit tiers).
fn decode_tiles(layout: Layout) -> Vec<plan::DecodeTile> {
    plan::schedules(Tier::Bf16, layout, SmemClass::Kb228)
        .into_iter()
        .filter_map(|s| match s {
            Schedule::Decode(d) => Some(d),
            _ => None,
        })
        .collect()
}

#[test]
fn decode_emulation_matches_reference() {
    for layout in [Layout::NT, Layout::NN] {
        let tiles = decode_tiles(layout);
        let want = if layout == Layout::NT { 2 } else { 4 };
        assert_eq!(tiles.len(), want, "{layout:?}");
        for tile in tiles {
            // One and two n8 tiles of rows, N and K tails, K = 8 (one lane group of one
            // step), more column blocks than the stagger's 16, 32 and 128 offsets.
            for (i, (m, n, k)) in [
                (1, 64, 32),
                (16, 96, 8 * 37),
                (5, 36, 1024 + 40),
                (9, 100, 72),
                (8, 43, 8),
                (3, 341, 4104),
                (2, 4200, 264),
            ]
            .into_iter()
            .enumerate()
            {
                let n = if layout == Layout::NN { n / 4 * 4 } else { n };
                let p = int_problem(MmaKind::Bf16, layout, m, n, k, 40 + i as u64);
                let got = emulate_decode(&p, &tile);
                assert_eq!(
                    got,
                    p.reference(),
                    "{layout:?} {} m {m} n {n} k {k}",
                    tile.label()
                );
            }
        }
    }
}

fn f32_problem(
    layout: Layout,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> (Stored, Stored, Vec<f32>, Vec<f32>, usize, usize) {
    let mut rng = SplitMix64::new(seed);
    let (ar, ac) = if layout.a_k_major() { (m, k) } else { (k, m) };
    let (br, bc) = if layout.b_k_major() { (n, k) } else { (k, n) };
    let (lda, ldb) = (ac + 3, bc + 1);
    let av: Vec<f32> = (0..ar * lda)
        .map(|_| rng.uniform(-1.0, 1.0) as f32)
        .collect();
    let bv: Vec<f32> = (0..br * ldb)
        .map(|_| rng.uniform(-1.0, 1.0) as f32)
        .collect();
    let a = Stored::from_fn(4, ar, ac, lda, f32::NAN.to_bits(), |r, c| {
        av[r * lda + c].to_bits()
    });
    let b = Stored::from_fn(4, br, bc, ldb, f32::NAN.to_bits(), |r, c| {
        bv[r * ldb + c].to_bits()
    });
    (a, b, av, bv, lda, ldb)
}

#[test]
fn pedantic_emulation_is_bit_exact_for_both_tiles() {
    for layout in Layout::ALL {
        for (m, n, k) in [(1, 1, 1), (131, 70, 37), (64, 129, 16), (7, 200, 3)] {
            let (a, b, av, bv, lda, ldb) = f32_problem(layout, m, n, k, (m * n + k) as u64);
            let want = pedantic_f32(
                (layout.a_k_major(), layout.b_k_major()),
                m,
                n,
                k,
                &av,
                lda,
                &bv,
                ldb,
            );
            for t in [plan::TILE_FMA_LARGE, plan::TILE_FMA_SMALL] {
                let got = emulate_pedantic(layout, m, n, k, &a, &b, &t);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(g, w)| g.to_bits() == w.to_bits());
                assert!(same, "{layout:?} {t:?} m {m} n {n} k {k}: not bit-identical to the ascending fmaf chain");
            }
        }
    }
}

// ---------------------------------------------------------------- selector

fn problem(tier: Tier, layout: Layout, m: u32, n: u32, k: u32) -> Problem {
    let (lda, ldb) = (
        if layout.a_k_major() { k } else { m },
        if layout.b_k_major() { k } else { n },
    );
    Problem {
        tier,
        layout,
        m,
        n,
        k,
        lda,
        ldb,
        ldc: n,
        out: tier.input(),
        a_addr: 0,
        b_addr: 1 << 20,
        c_addr: 2 << 20,
        workspace: None,
    }
}

/// The selector's plan for a tight problem on `device`.
fn picked_on(device: &DeviceFacts, tier: Tier, layout: Layout, m: u32, n: u32, k: u32) -> Plan {
    plan::plan(
        &problem(tier, layout, m, n, k),
        device,
        &Choice::default(),
        false,
    )
    .expect("a plan")
}

fn picked(tier: Tier, layout: Layout, m: u32, n: u32, k: u32) -> Plan {
    picked_on(&H200, tier, layout, m, n, k)
}

#[test]
fn selector_picks_per_shape() {
    let mma = |p: &Plan| match p.schedule {
        Schedule::Mma(t) => (t.bm, t.bn),
        other => panic!("expected a tensor-core tile, got {other:?}"),
    };
    for tier in [Tier::Bf16, Tier::Fp16] {
        for layout in Layout::ALL {
            assert_eq!(mma(&picked(tier, layout, 8192, 8192, 8192)), (128, 256));
            assert_eq!(mma(&picked(tier, layout, 4096, 4096, 4096)), (128, 256));
            assert_eq!(mma(&picked(tier, layout, 4096, 14336, 4096)), (128, 256));
            assert_eq!(mma(&picked(tier, layout, 4096, 4096, 14336)), (128, 256));
            // 2048^2 gives 128 large tiles, less than a wave on 132 SMs.
            assert_eq!(mma(&picked(tier, layout, 2048, 2048, 2048)), (128, 128));
            // 256 x 4096 fills a wave with 64 x 64 tiles (256 blocks).
            assert_eq!(
                picked(tier, layout, 256, 4096, 4096).schedule,
                Schedule::Mma(plan::TILE_SMALL)
            );
            // M <= 128, or below a wave of every standard tile: the skinny tiles, 64 x 64
            // where it gives 90% of a wave (128 blocks), else 64 x 32; 32 x 32 for M <= 32
            // (TN at any M: it has no decode kernel) unless its tiles need a second wave of
            // resident blocks (three per SM) that 64 x 64's (two per SM) do not: 20 x 14797
            // gives 463 and 232 tiles on 132 SMs; 20 x 20000, 625 and 313.
            for (m, n, want) in [
                (128, 4096, plan::TILE_SKINNY_64X64),
                (64, 8192, plan::TILE_SKINNY_64X64),
                (128, 8192, plan::TILE_SKINNY_64X64),
                (64, 4096, plan::TILE_SKINNY_64X32),
                (33, 4096, plan::TILE_SKINNY_64X32),
                (300, 512, plan::TILE_SKINNY_64X32),
                (32, 4096, plan::TILE_SKINNY_32X32),
                (32, 8192, plan::TILE_SKINNY_32X32),
                (17, 100, plan::TILE_SKINNY_32X32),
                (20, 14797, plan::TILE_SKINNY_64X64),
                (20, 20000, plan::TILE_SKINNY_32X32),
                (192, 1024, plan::TILE_SKINNY_64X32),
            ] {
                assert_eq!(
                    picked(tier, layout, m, n, 4096).schedule,
                    Schedule::Mma(want),
                    "{tier:?} {layout:?} {m}x{n}"
                );
            }
            assert_eq!(
                picked(tier, Layout::TN, 1, 4096, 4096).schedule,
                Schedule::Mma(plan::TILE_SKINNY_32X32)
            );
        }
        // Decode: by layout (and M for NN) where N / 32 blocks fit the SMs, else the layout's
        // 8-warp kernel.
        for (layout, one_row_tile, two_row_tiles) in [
            (Layout::NT, plan::DECODE_NT_N16W8, plan::DECODE_NT_N16W8),
            (Layout::NN, plan::DECODE_NN_N32W24, plan::DECODE_NN_N32W16),
        ] {
            for m in [1, 2, 8, 9, 16] {
                let want = if m <= 8 { one_row_tile } else { two_row_tiles };
                for n in [4096, 4224, 64, 4104] {
                    assert_eq!(
                        picked(tier, layout, m, n, 4096).schedule,
                        Schedule::Decode(want),
                        "{layout:?} m {m} n {n}"
                    );
                }
                let wide = match layout {
                    Layout::NT => plan::DECODE_NT_N32W8,
                    _ => plan::DECODE_NN_N32W8,
                };
                for n in [4232, 8192] {
                    assert_eq!(
                        picked(tier, layout, m, n, n).schedule,
                        Schedule::Decode(wide),
                        "{layout:?} m {m} n {n}"
                    );
                }
            }
        }
        // TN has no decode kernel: A would be read as [K][M].
        assert!(matches!(
            picked(tier, Layout::TN, 1, 4096, 4096).schedule,
            Schedule::Mma(_)
        ));
        assert!(matches!(
            picked(tier, Layout::NT, 17, 4096, 4096).schedule,
            Schedule::Mma(_)
        ));
    }
    // On the sm_90a route the warp-specialized TMA tile takes every 16-bit shape that fills
    // half the SMs (2048^2: 128 tiles on 132 SMs) where tensor maps can address A and B and K
    // fills its ring, the wgmma tile where they cannot; smaller ones and decode keep their kernels. The TMA tile
    // is persistent (at most a CTA per SM).
    let on_sm90a = |tier, layout, m, n, k| picked_on(&H200_SM90A, tier, layout, m, n, k).schedule;
    let tma = Choice {
        schedule: Some(Schedule::Tma(plan::TILE_TMA)),
        grid: None,
        splits: None,
    };
    for tier in [Tier::Bf16, Tier::Fp16] {
        for layout in Layout::ALL {
            for (m, n, k) in [
                (8192, 8192, 8192),
                (4096, 4096, 4096),
                (4096, 14336, 4096),
                (4096, 4096, 14336),
                (2048, 2048, 2048),
                (1152, 2048, 256),
            ] {
                assert_eq!(
                    on_sm90a(tier, layout, m, n, k),
                    Schedule::Tma(plan::TILE_TMA),
                    "{tier:?} {layout:?} {m}x{n}x{k}"
                );
                let p = plan::plan(&problem(tier, layout, m, n, k), &H200_SM90A, &tma, false)
                    .expect("a plan");
                let tiles = m.div_ceil(128) * n.div_ceil(256);
                assert_eq!(p.grid, tiles.min(H200_SM90A.sm_count), "{m}x{n}x{k}");
                assert_eq!(p.block, 384);
                let mut odd = problem(tier, layout, m, n, k);
                odd.lda += 1;
                let e = plan::plan(&odd, &H200_SM90A, &tma, false)
                    .unwrap_err()
                    .to_string();
                assert!(
                    e.contains("tensor maps, which need 16-byte aligned bases"),
                    "{e}"
                );
                // The selector falls back to the wgmma tile there.
                let fallback = plan::plan(&odd, &H200_SM90A, &Choice::default(), false).unwrap();
                assert_eq!(fallback.schedule, Schedule::Wgmma(plan::TILE_WGMMA));
                let e = plan::plan(&problem(tier, layout, m, n, k), &H200, &tma, false)
                    .unwrap_err()
                    .to_string();
                assert!(e.contains("run only from the sm_90a cubin"), "{e}");
            }
            assert_eq!(
                on_sm90a(tier, layout, 128, 4096, 4096),
                Schedule::Mma(plan::TILE_SKINNY_64X64)
            );
        }
        assert_eq!(
            on_sm90a(tier, Layout::NN, 8, 4096, 4096),
            Schedule::Decode(plan::DECODE_NN_N32W24)
        );
        assert_eq!(
            on_sm90a(tier, Layout::NT, 16, 4096, 4096),
            Schedule::Decode(plan::DECODE_NT_N16W8)
        );
    }
    for tier in [Tier::Tf32, Tier::F32Pedantic] {
        assert_eq!(
            on_sm90a(tier, Layout::NN, 4096, 4096, 4096),
            picked(tier, Layout::NN, 4096, 4096, 4096).schedule
        );
    }
    // 16-bit NT keeps the BK = 32 ring (the BK = 64 one spills there).
    for tier in [Tier::Bf16, Tier::Fp16] {
        assert_eq!(
            picked(tier, Layout::NN, 4096, 4096, 4096).schedule,
            Schedule::Mma(plan::TILE_LARGE)
        );
        assert_eq!(
            picked(tier, Layout::NT, 4096, 4096, 4096).schedule,
            Schedule::Mma(plan::TILE_LARGE_NT)
        );
    }
    // TF32: 128 x 256 for NN and TN, 128 x 128 for NT and below a wave.
    for layout in [Layout::NN, Layout::TN] {
        assert_eq!(
            picked(Tier::Tf32, layout, 4096, 4096, 4096).schedule,
            Schedule::Mma(plan::TILE_TF32_WIDE)
        );
        assert_eq!(
            picked(Tier::Tf32, layout, 2048, 2048, 2048).schedule,
            Schedule::Mma(plan::TILE_TF32_LARGE)
        );
    }
    assert_eq!(
        picked(Tier::Tf32, Layout::NT, 4096, 4096, 4096).schedule,
        Schedule::Mma(plan::TILE_TF32_LARGE)
    );
    assert_eq!(
        picked(Tier::Tf32, Layout::NN, 512, 512, 512).schedule,
        Schedule::Mma(plan::TILE_TF32_SMALL)
    );
    // The TF32 tier has no skinny tiles: its smallest tile below a wave, and at M <= 128 the
    // tile that fills one.
    assert_eq!(
        picked(Tier::Tf32, Layout::NN, 64, 4096, 4096).schedule,
        Schedule::Mma(plan::TILE_TF32_SMALL)
    );
    assert_eq!(
        picked(Tier::Tf32, Layout::NN, 128, 32768, 4096).schedule,
        Schedule::Mma(plan::TILE_TF32_LARGE)
    );
    assert_eq!(
        picked(Tier::F32Pedantic, Layout::TN, 4096, 4096, 4096).schedule,
        Schedule::Fma(plan::TILE_FMA_LARGE)
    );
    assert_eq!(
        picked(Tier::F32Pedantic, Layout::TN, 100, 100, 4096).schedule,
        Schedule::Fma(plan::TILE_FMA_SMALL)
    );
}

#[test]
fn decode_needs_alignment_whole_chunks_and_small_m() {
    let base = problem(Tier::Bf16, Layout::NT, 4, 4096, 4096);
    assert!(base.decode_eligible());
    for (what, p) in [
        ("M > 16", Problem { m: 17, ..base }),
        (
            "K % 8",
            Problem {
                k: 4095,
                lda: 4095,
                ldb: 4095,
                ..base
            },
        ),
        ("A misaligned", Problem { a_addr: 8, ..base }),
        ("lda not whole chunks", Problem { lda: 4100, ..base }),
        ("B misaligned", Problem { b_addr: 2, ..base }),
        (
            "NN with N % 4",
            Problem {
                layout: Layout::NN,
                n: 4094,
                ldb: 4094,
                ..base
            },
        ),
        (
            "TN",
            Problem {
                layout: Layout::TN,
                lda: 4,
                ..base
            },
        ),
        (
            "tf32",
            Problem {
                tier: Tier::Tf32,
                out: Dtype::F32,
                ..base
            },
        ),
    ] {
        assert!(!p.decode_eligible(), "{what}");
        assert!(
            !matches!(plan::select(&p, &H200), Schedule::Decode(_)),
            "{what}"
        );
    }
}

#[test]
fn plan_flags_and_geometry() {
    let p = Problem {
        out: Dtype::F32,
        ..problem(Tier::Bf16, Layout::NN, 300, 512, 64)
    };
    let pl = plan::plan(&p, &H200, &Choice::default(), true).unwrap();
    assert_eq!(
        pl.flags,
        plan::flags::BIAS
            | plan::flags::OUT_F32
            | plan::flags::VEC_A
            | plan::flags::VEC_B
            | plan::flags::VEC_C
    );
    let Schedule::Mma(t) = pl.schedule else {
        panic!()
    };
    assert_eq!(pl.grid, 300u32.div_ceil(t.bm) * 512u32.div_ceil(t.bn));
    assert_eq!(pl.block, t.threads());
    assert_eq!(pl.dynamic_smem_bytes, t.smem_bytes(Tier::Bf16, Layout::NN));
    assert_eq!(pl.entry, format!("gemm_bf16_nn_{}", t.label()));
    assert_eq!(pl.entry, "gemm_bf16_nn_skinny_64x32");
    // Odd leading dimensions and offsets switch vector access off, operand by operand.
    let odd = Problem {
        lda: 65,
        ldc: 513,
        c_addr: 2,
        ..p
    };
    let f = plan::plan(&odd, &H200, &Choice::default(), false)
        .unwrap()
        .flags;
    assert_eq!(f, plan::flags::OUT_F32 | plan::flags::VEC_B);
    assert!(
        pl.stamp_fields().contains("tile=\"mma "),
        "{}",
        pl.stamp_fields()
    );
    // Decode: one block per `bn` columns, no dynamic shared memory, every variant parameter
    // on the STAMP line.
    let d = picked(Tier::Bf16, Layout::NT, 1, 4100, 4096);
    assert_eq!(d.entry, "gemm_bf16_nt_decode_n16w8");
    assert_eq!((d.grid, d.block, d.dynamic_smem_bytes), (257, 256, 0));
    assert!(
        d.stamp_fields().contains(
            "tile=\"decode n16 k-split-warps=8 unroll=4 rounds=single loads=nc.L2::256B stagger=128 \
             min-blocks=2\""
        ),
        "{}",
        d.stamp_fields()
    );
    let d = picked(Tier::Fp16, Layout::NN, 16, 4104, 4096);
    assert_eq!(d.entry, "gemm_fp16_nn_decode_n32w16");
    assert_eq!((d.grid, d.block), (129, 512));
    // NN with at least one 128-column block per SM (132 on the H200) takes the ring walk and
    // its ring; one block fewer keeps the direct 8-warp walk; NT keeps its own kernel.
    let d = picked(Tier::Bf16, Layout::NN, 1, 28672, 4096);
    assert_eq!(d.entry, "gemm_bf16_nn_decode_n128w8");
    assert_eq!((d.grid, d.block, d.dynamic_smem_bytes), (224, 256, 73728));
    assert!(
        d.stamp_fields()
            .contains("tile=\"decode n128 ring=4x64 warps=8 min-blocks=2\""),
        "{}",
        d.stamp_fields()
    );
    let edge = 128 * 132;
    assert_eq!(
        picked(Tier::Bf16, Layout::NN, 16, edge, 4096).entry,
        "gemm_bf16_nn_decode_n128w8"
    );
    assert_eq!(
        picked(Tier::Bf16, Layout::NN, 16, edge - 128, 4096).entry,
        "gemm_bf16_nn_decode_n32w8"
    );
    assert_eq!(
        picked(Tier::Bf16, Layout::NT, 1, 28672, 4096).entry,
        "gemm_bf16_nt_decode_n32w8"
    );
}

#[test]
fn tf32_takes_the_warp_specialized_tile_only_with_a_workspace_on_the_sm90a_route() {
    let with_ws = |p: Problem, bytes: u64, addr: u64| Problem {
        workspace: Some(plan::Workspace { addr, bytes }),
        ..p
    };
    for layout in Layout::ALL {
        let (m, n, k) = (4096, 2048, 1030); // K not a multiple of 4: kp = 1032
        let p = problem(Tier::Tf32, layout, m, n, k);
        let need = u64::from(m + n) * 1032 * 4;
        // Without a workspace, or on the sm_90 route, TF32 stays on mma.sync.
        for (device, q) in [(&H200_SM90A, p), (&H200, with_ws(p, need, 1 << 30))] {
            let pl = plan::plan(&q, device, &Choice::default(), false).unwrap();
            assert!(matches!(pl.schedule, Schedule::Mma(_)), "{layout:?}");
            assert_eq!((pl.prepare, pl.workspace_bytes), (None, 0));
        }
        let on_sm90a = |q, need| {
            plan::plan(
                &with_ws(q, need, 1 << 30),
                &H200_SM90A,
                &Choice::default(),
                false,
            )
            .unwrap()
        };
        let pl = on_sm90a(p, need);
        assert_eq!(pl.schedule, Schedule::Tma(plan::TILE_TMA_TF32));
        // One NT kernel serves every layout: it reads the operand pass's K-major copies.
        assert_eq!(pl.entry, "gemm_tf32_nt_tma_128x256");
        assert_eq!(pl.workspace_bytes, need);
        // K short of the TMA ring (4 k tiles of 32) takes the cp.async wgmma tile, the same
        // kernel after the same pass.
        let short = problem(Tier::Tf32, layout, m, n, 100);
        let short_need = u64::from(m + n) * 100 * 4;
        let pl_short = on_sm90a(short, short_need);
        assert_eq!(pl_short.schedule, Schedule::Wgmma(plan::TILE_WGMMA_TF32));
        assert_eq!(pl_short.entry, "gemm_tf32_nt_wgmma_128x256");
        let prep = pl.prepare.expect("an operand pass");
        assert_eq!(prep.kp, 1032);
        assert_eq!(prep.b_offset(m), u64::from(m) * 1032);
        let transposed = (
            prep.flags & plan::flags::TF32_PREPARE_A_MN_MAJOR != 0,
            prep.flags & plan::flags::TF32_PREPARE_B_MN_MAJOR != 0,
        );
        assert_eq!(
            transposed,
            (!layout.a_k_major(), !layout.b_k_major()),
            "{layout:?}"
        );
        // One block per 64 x 64 tile of both outputs. Tight K-major rows of 1030 floats are
        // not whole 16-byte groups, so the pass reads those element by element; MN-major
        // rows (4096 or 2048 floats) in 16-byte groups.
        assert_eq!(
            u64::from(prep.grid),
            u64::from((m + n) / 64) * 1032u64.div_ceil(64)
        );
        let vec = (
            prep.flags & plan::flags::TF32_PREPARE_A_VEC != 0,
            prep.flags & plan::flags::TF32_PREPARE_B_VEC != 0,
        );
        assert_eq!(vec, transposed, "{layout:?}");
        // The kernel reads the workspace in 16-byte chunks, whatever A and B allow.
        let unaligned = Problem {
            a_addr: 4,
            b_addr: 12,
            ..p
        };
        let pl = plan::plan(
            &with_ws(unaligned, need, 1 << 30),
            &H200_SM90A,
            &Choice::default(),
            false,
        )
        .unwrap();
        let vec_ab = plan::flags::VEC_A | plan::flags::VEC_B;
        assert_eq!(pl.flags & vec_ab, vec_ab);
        assert!(pl
            .stamp_fields()
            .contains("prepare=\"gemm_tf32_prepare tf32-rna k-major kp=1032"));
        // A workspace one byte short, or not 16-byte aligned, leaves the selector on mma.sync
        // and makes a forced wgmma or TMA schedule an error that says what it needs.
        for schedule in [
            Schedule::Wgmma(plan::TILE_WGMMA_TF32),
            Schedule::Tma(plan::TILE_TMA_TF32),
        ] {
            let forced = Choice {
                schedule: Some(schedule),
                grid: None,
                splits: None,
            };
            for q in [
                with_ws(p, need - 1, 1 << 30),
                with_ws(p, need, (1 << 30) + 8),
            ] {
                let pl = plan::plan(&q, &H200_SM90A, &Choice::default(), false).unwrap();
                assert!(matches!(pl.schedule, Schedule::Mma(_)));
                let err = plan::plan(&q, &H200_SM90A, &forced, false).unwrap_err();
                assert!(
                    matches!(&err, PlanError::Schedule { reason, .. } if reason.contains(&format!("{need} bytes"))),
                    "{err:?}"
                );
            }
        }
    }
    // K = 0 needs no workspace: the forced route plans without one (nothing to round).
    let forced = Choice {
        schedule: Some(Schedule::Wgmma(plan::TILE_WGMMA_TF32)),
        grid: None,
        splits: None,
    };
    let k0 = problem(Tier::Tf32, Layout::TN, 4096, 4096, 0);
    let pl = plan::plan(&k0, &H200_SM90A, &forced, false).unwrap();
    assert_eq!(pl.workspace_bytes, 0);
    assert_eq!(pl.prepare.map(|p| p.grid), Some(0));
    // The TMA tile refuses it (a tensor map has no empty dimension).
    let forced_tma = Choice {
        schedule: Some(Schedule::Tma(plan::TILE_TMA_TF32)),
        ..forced
    };
    assert!(plan::plan(&k0, &H200_SM90A, &forced_tma, false).is_err());
    // Shapes that leave half the SMs idle keep the mma.sync tiles.
    let small = problem(Tier::Tf32, Layout::NN, 512, 512, 4096);
    let pl = plan::plan(
        &with_ws(small, u64::MAX, 0),
        &H200_SM90A,
        &Choice::default(),
        false,
    )
    .unwrap();
    assert!(matches!(pl.schedule, Schedule::Mma(_)));
}

#[test]
fn plan_rejects_bad_problems() {
    let p = problem(Tier::Bf16, Layout::NN, 64, 64, 64);
    // The wgmma kernels are stubs outside the sm_90a cubin, and 16-bit only.
    let wgmma = Choice {
        schedule: Some(Schedule::Wgmma(plan::TILE_WGMMA)),
        grid: None,
        splits: None,
    };
    let forced = plan::plan(&p, &H200, &wgmma, false);
    assert!(
        matches!(&forced, Err(PlanError::Schedule { reason, .. }) if reason.contains("sm_90a")),
        "{forced:?}"
    );
    assert!(plan::plan(&p, &H200_SM90A, &wgmma, false).is_ok());
    let tf32 = problem(Tier::Tf32, Layout::NN, 64, 64, 64);
    assert!(plan::plan(&tf32, &H200_SM90A, &wgmma, false).is_err());
    assert_eq!(
        plan::plan(&Problem { lda: 63, ..p }, &H200, &Choice::default(), false),
        Err(PlanError::LeadingDimension {
            what: "lda",
            ld: 63,
            min: 64
        })
    );
    assert_eq!(
        plan::plan(
            &Problem { ldc: 0, n: 0, ..p },
            &H200,
            &Choice::default(),
            false
        ),
        Err(PlanError::LeadingDimension {
            what: "ldc",
            ld: 0,
            min: 1
        })
    );
    assert!(matches!(
        plan::plan(
            &Problem {
                m: plan::MAX_DIM + 1,
                ..p
            },
            &H200,
            &Choice::default(),
            false
        ),
        Err(PlanError::TooLarge { what: "M", .. })
    ));
    assert!(matches!(
        plan::plan(
            &Problem {
                out: Dtype::Bf16,
                tier: Tier::Tf32,
                ..p
            },
            &H200,
            &Choice::default(),
            false
        ),
        Err(PlanError::Output { .. })
    ));
    let forced_decode = |p: Problem, d: plan::DecodeTile| {
        let choice = Choice {
            schedule: Some(Schedule::Decode(d)),
            grid: None,
            splits: None,
        };
        plan::plan(&p, &H200, &choice, false)
    };
    let decode_on_tn = forced_decode(
        Problem {
            layout: Layout::TN,
            ..p
        },
        plan::DECODE_NT_N32W8,
    );
    assert!(
        matches!(decode_on_tn, Err(PlanError::Schedule { .. })),
        "{decode_on_tn:?}"
    );
    // A variant exists for the layouts it is instantiated in only (16 columns: NT).
    let nt_variant_on_nn = forced_decode(
        problem(Tier::Bf16, Layout::NN, 8, 64, 64),
        plan::DECODE_NT_N16W8,
    );
    assert!(
        matches!(&nt_variant_on_nn, Err(PlanError::Schedule { reason, .. }) if reason.contains("no decode_n16w8")),
        "{nt_variant_on_nn:?}"
    );
    // The 8-warp kernels share their name across layouts, not their parameters.
    let nt_wide_on_nn = forced_decode(
        problem(Tier::Bf16, Layout::NN, 8, 64, 64),
        plan::DECODE_NT_N32W8,
    );
    assert!(
        matches!(&nt_wide_on_nn, Err(PlanError::Schedule { reason, .. })
            if reason.contains("no decode_n32w8") && reason.contains("stagger=128")),
        "{nt_wide_on_nn:?}"
    );
    let big = plan::plan(
        &problem(Tier::Bf16, Layout::NN, 4096, 4096, 64),
        &DeviceFacts {
            max_smem_per_block_optin: 48 * 1024,
            ..H200
        },
        &Choice {
            schedule: Some(Schedule::Mma(plan::TILE_LARGE)),
            grid: None,
            splits: None,
        },
        false,
    );
    assert!(matches!(big, Err(PlanError::Schedule { .. })), "{big:?}");
    let e = plan::plan(&Problem { lda: 63, ..p }, &H200, &Choice::default(), false).unwrap_err();
    assert!(e.to_string().contains("lda = 63"), "{e}");
}

#[test]
fn empty_outputs_launch_nothing() {
    for tier in Tier::ALL {
        for layout in Layout::ALL {
            for (m, n, k) in [(0, 64, 64), (64, 0, 64), (0, 0, 0), (8, 0, 4096)] {
                let mut p = problem(tier, layout, m, n, k);
                p.lda = p.lda.max(1);
                p.ldb = p.ldb.max(1);
                p.ldc = p.ldc.max(1);
                let pl = plan::plan(&p, &H200, &Choice::default(), true).unwrap();
                assert_eq!(pl.grid, 0, "{tier:?} {layout:?} {m}x{n}x{k}");
            }
        }
    }
}

#[test]
fn only_the_pedantic_tier_takes_a_grid() {
    let p = problem(Tier::F32Pedantic, Layout::NN, 300, 300, 64);
    for g in [1, 7, 1000] {
        let pl = plan::plan(
            &p,
            &H200,
            &Choice {
                schedule: None,
                grid: Some(g),
                splits: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(pl.grid, g);
    }
    assert!(plan::plan(
        &p,
        &H200,
        &Choice {
            schedule: None,
            grid: Some(0),
            splits: None,
        },
        false
    )
    .is_err());
    let t = problem(Tier::Tf32, Layout::NN, 300, 300, 64);
    let e = plan::plan(
        &t,
        &H200,
        &Choice {
            schedule: None,
            grid: Some(7),
            splits: None,
        },
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("only the pedantic tier"), "{e}");
}

#[test]
fn selector_respects_a_small_shared_memory_limit() {
    // sm_89 / sm_86 allow 99 KiB per block: every selected tile must fit.
    let small = DeviceFacts {
        sm_count: 128,
        max_smem_per_block_optin: 101_376,
        wgmma: false,
        smem_class: SmemClass::Kb100,
    };
    for tier in Tier::ALL {
        for layout in Layout::ALL {
            for (m, n, k) in [(8192, 8192, 8192), (2048, 2048, 2048), (100, 100, 100)] {
                let pl = plan::plan(
                    &problem(tier, layout, m, n, k),
                    &small,
                    &Choice::default(),
                    false,
                )
                .unwrap();
                assert!(
                    pl.dynamic_smem_bytes <= small.max_smem_per_block_optin,
                    "{tier:?} {layout:?} {pl:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------- agreement with the manifest
// The planner's tiles and flag bits and the kernels' instantiations are generated from one
// source, cuda/gemm_catalogue.toml (`cargo xtask codegen --check`); the manifest is not.

fn cuda_file(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cuda")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every entry point the planner can name in code of `class`, as (name, threads, dynamic
/// smem, min blocks).
fn planned_entries(class: SmemClass) -> Vec<(String, u32, u32, u32)> {
    let mut v = Vec::new();
    for tier in Tier::ALL {
        for layout in Layout::ALL {
            for s in plan::schedules(tier, layout, class) {
                let smem = match s {
                    Schedule::Tma(t) => t.smem_bytes(),
                    Schedule::Wgmma(t) => t.smem_bytes(),
                    Schedule::Mma(t) => t.smem_bytes(tier, layout),
                    Schedule::Decode(t) => t.smem_bytes(),
                    Schedule::Fma(_) => 0,
                };
                let entry = (
                    plan::entry_name(tier, layout, &s),
                    s.threads(),
                    smem,
                    s.min_blocks(),
                );
                // TF32 on wgmma: one NT entry behind every layout.
                if !v.contains(&entry) {
                    v.push(entry);
                }
            }
        }
    }
    v
}

#[test]
fn every_planned_entry_is_declared() {
    let manifest = cubins_build::manifest::Manifest::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/kernels.toml"),
    )
    .expect("kernels.toml");
    // Each arch's rings are its class's: the manifest's per-arch shared memory says the same.
    // The wgmma entry points hold their ring only where their code is (sm_90a); elsewhere
    // they are stubs that are never launched, read with none.
    for arch in cubins_build::arch::SUPPORTED {
        let class = SmemClass::of_cc(arch.cc);
        for (name, _, smem, _) in planned_entries(class) {
            let entry = &manifest.kernels[&name];
            let stub =
                (name.contains("_wgmma_") || name.contains("_tma_")) && arch.sm_name() != "sm_90a";
            assert_eq!(
                entry.dynamic_smem_on(&arch.sm_name()),
                if stub { 0 } else { smem },
                "{name} on {arch} ({class:?}): dynamic_smem_bytes"
            );
        }
    }
    let planned = planned_entries(SmemClass::Kb228);
    for (name, threads, smem, min_blocks) in &planned {
        let entry = manifest
            .kernels
            .get(name)
            .unwrap_or_else(|| panic!("{name} has no [kernels.{name}] in cuda/kernels.toml"));
        let file = name.split('_').take(2).collect::<Vec<_>>().join("_");
        let tma = name.contains("_tma_");
        // Real code only on sm_90a (the wgmma and TMA kernels), stubs elsewhere.
        let wgmma = name.contains("_wgmma_") || tma;
        let file = if file == "gemm_f32" {
            "gemm_f32_pedantic".to_string()
        } else if tma {
            "gemm_tma".to_string()
        } else if wgmma {
            "gemm_wgmma".to_string()
        } else {
            file
        };
        assert_eq!(entry.file, format!("{file}.cu"), "{name}");
        assert_eq!(entry.block_sizes, vec![*threads], "{name}: block_sizes");
        let declared = if wgmma {
            entry.dynamic_smem_on("sm_90a")
        } else {
            entry.dynamic_smem_bytes
        };
        assert_eq!(declared, *smem, "{name}: dynamic_smem_bytes");
        // The wgmma kernels promise their occupancy where they are real: sm_90a.
        let contract = if wgmma {
            entry
                .arch
                .get("sm_90a")
                .unwrap_or_else(|| panic!("{name}: no [kernels.{name}.arch.sm_90a]"))
        } else {
            &entry.contract
        };
        let mb = contract
            .min_blocks_per_sm
            .unwrap_or_else(|| panic!("{name}: min_blocks_per_sm"));
        assert_eq!(
            (mb.block_size, mb.blocks),
            (*threads, *min_blocks),
            "{name}: min_blocks_per_sm"
        );
        let c_ty = if name.starts_with("gemm_bf16") || name.starts_with("gemm_fp16") {
            "u8"
        } else {
            "f32"
        };
        let elem = if name.starts_with("gemm_bf16") {
            "bf16"
        } else if name.starts_with("gemm_fp16") {
            "f16"
        } else {
            "f32"
        };
        // The TMA kernels take the operands as tensor maps (their leading dimensions inside),
        // and C's for the staged epilogue.
        let operands: Vec<String> = if tma {
            ["tma_a", "tma_b", "tma_c"]
                .map(|m| format!("{m}: tensor_map"))
                .into()
        } else {
            vec![format!("a: *const {elem}"), format!("b: *const {elem}")]
        };
        let dims: &[&str] = if tma {
            &["m: i32", "n: i32", "k: i32", "ldc: i32"]
        } else {
            &[
                "m: i32", "n: i32", "k: i32", "lda: i32", "ldb: i32", "ldc: i32",
            ]
        };
        let mut want = operands;
        want.push(format!("c: *mut {c_ty}"));
        want.push("bias: *const f32".into());
        want.extend(dims.iter().map(|d| d.to_string()));
        want.extend(["alpha: f32", "beta: f32", "flags: u32"].map(String::from));
        assert_eq!(entry.params, want, "{name}: params");
    }
    // And nothing declared that the planner cannot reach (the build fails on an entry point
    // no [kernels.*] declares, and the ENTRY macros on one the catalogue does not list).
    // The TF32 operand pass is not a GEMM entry point (tf32_prepare_entry_matches_the_plan).
    let gemm_declared = manifest
        .kernels
        .keys()
        .filter(|k| {
            k.starts_with("gemm_")
                && k.as_str() != plan::TF32_PREPARE_ENTRY
                && !k.starts_with("gemm_splitk_reduce_")
                && !k.starts_with("gemm_pack_")
        })
        .count();
    assert_eq!(gemm_declared, planned.len());
}

#[test]
fn index_fingerprints_match_the_cuda_static_asserts() {
    // fingerprints.cuh static_asserts these constants when the kernels compile; the model
    // must reproduce them, so the CUDA index functions and the model cannot drift apart.
    let text = cuda_file("include/cubins/gemm/fingerprints.cuh");
    let constant = |name: &str| -> u32 {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("static_assert({name}() == ")))
            .unwrap_or_else(|| panic!("no static_assert for {name}"));
        let hex = line
            .split("== 0x")
            .nth(1)
            .unwrap()
            .split('u')
            .next()
            .unwrap();
        u32::from_str_radix(hex, 16).unwrap()
    };
    use gemm_common::fingerprint as fp;
    let got = [
        ("layouts", fp::layouts()),
        ("fragments", fp::fragments()),
        ("copies", fp::copies()),
        ("ownership", fp::ownership()),
    ];
    for (name, value) in got {
        assert_eq!(value, constant(name), "{name}: model {value:#010x}");
    }
}

#[test]
fn tf32_prepare_entry_matches_the_plan() {
    let manifest = cubins_build::manifest::Manifest::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/kernels.toml"),
    )
    .expect("kernels.toml");
    let entry = &manifest.kernels[plan::TF32_PREPARE_ENTRY];
    assert_eq!(entry.file, "gemm_tf32_prepare.cu");
    assert_eq!(entry.block_sizes, vec![plan::TF32_PREPARE_BLOCK]);
    let source = cuda_file("gemm_tf32_prepare.cu");
    assert!(source.contains(&format!(
        "constexpr int kTile = {};",
        plan::TF32_PREPARE_TILE
    )));
    assert!(source.contains(&format!(
        "constexpr int kThreads = {};",
        plan::TF32_PREPARE_BLOCK
    )));
}

/// The passes the planner launches around the GEMM kernel (the split-K reduce for every output
/// type, the operand pass for each 16-bit input) exist with the planner's block size and the
/// parameters their launchers pass.
#[test]
fn pass_entries_match_the_plan() {
    let manifest = cubins_build::manifest::Manifest::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/kernels.toml"),
    )
    .expect("kernels.toml");
    for out in [Dtype::Bf16, Dtype::F16, Dtype::F32] {
        let name = plan::splitk_reduce_entry(out);
        let entry = &manifest.kernels[&name];
        assert_eq!(entry.file, "gemm_splitk.cu", "{name}");
        assert_eq!(entry.block_sizes, vec![plan::SPLITK_REDUCE_BLOCK], "{name}");
        let params: Vec<String> = [
            "partial: *const f32".to_string(),
            format!("c: *mut {}", out.name()),
            "bias: *const f32".into(),
        ]
        .into_iter()
        .chain(
            [
                "m: i32",
                "n: i32",
                "ldc: i32",
                "splits: i32",
                "alpha: f32",
                "beta: f32",
                "flags: u32",
            ]
            .map(String::from),
        )
        .collect();
        assert_eq!(entry.params, params, "{name}");
    }
    for input in [Dtype::Bf16, Dtype::F16] {
        let name = plan::pack_entry(input);
        let entry = &manifest.kernels[&name];
        assert_eq!(entry.file, "gemm_pack.cu", "{name}");
        assert_eq!(entry.block_sizes, vec![plan::PACK_BLOCK], "{name}");
        let t = input.name();
        let want = [
            format!("src: *const {t}"),
            format!("dst: *mut {t}"),
            "rows: i32".into(),
            "cols: i32".into(),
            "ld_src: i32".into(),
            "ld_dst: i32".into(),
        ];
        assert_eq!(entry.params, want, "{name}");
    }
    let source = cuda_file("gemm_pack.cu");
    assert!(source.contains(&format!("constexpr int kThreads = {};", plan::PACK_BLOCK)));
    let source = cuda_file("gemm_splitk.cu");
    assert!(source.contains(&format!(
        "constexpr int kThreads = {};",
        plan::SPLITK_REDUCE_BLOCK
    )));
}

/// `p` with a workspace as large as any plan asks for.
fn with_workspace(mut p: Problem) -> Problem {
    p.workspace = Some(Workspace {
        addr: 0,
        bytes: u64::MAX,
    });
    p
}

/// Split K: a small M x N with a long K (the random sweep's cliff: 5-23 output tiles for 132
/// SMs) splits where a workspace is lent, into slices that fill at most one wave, none of
/// them empty or shorter than the minimum; without a workspace the same tile runs unsplit.
#[test]
fn small_outputs_with_a_long_k_split_k_where_a_workspace_is_lent() {
    let shapes = [
        (Layout::NN, 41, 721, 1923),
        (Layout::NN, 2, 134, 5733),
        (Layout::TN, 100, 300, 8000),
        (Layout::NT, 64, 64, 16384),
        (Layout::NN, 300, 200, 4096),
    ];
    for tier in [Tier::Bf16, Tier::Fp16, Tier::Tf32] {
        for (layout, m, n, k) in shapes {
            for device in [H200, H200_SM90A] {
                let p = with_workspace(problem(tier, layout, m, n, k));
                let what = format!(
                    "{} {} {m}x{n}x{k} wgmma={}",
                    tier.name(),
                    layout.name(),
                    device.wgmma
                );
                let pl = plan::plan(&p, &device, &Choice::default(), false).unwrap();
                let Schedule::Mma(t) = pl.schedule else {
                    // TF32 on the sm_90a route runs its wgmma kernel after the operand pass.
                    assert!(
                        tier == Tier::Tf32 && device.wgmma && pl.split.is_none(),
                        "{what}: {pl:?}"
                    );
                    continue;
                };
                let split = pl
                    .split
                    .unwrap_or_else(|| panic!("{what}: no split in {pl:?}"));
                let k_tiles = k.div_ceil(t.bk);
                assert!(split.splits >= 2, "{what}: {split:?}");
                assert!(
                    u64::from(pl.grid) * u64::from(split.splits)
                        <= u64::from(device.sm_count * t.min_blocks),
                    "{what}: {split:?}"
                );
                assert!(
                    split.k_tiles_per_slice * t.bk >= plan::SPLITK_MIN_SLICE_K.min(k),
                    "{what}: {split:?}"
                );
                assert!(
                    split.k_tiles_per_slice * (split.splits - 1) < k_tiles
                        && k_tiles <= split.k_tiles_per_slice * split.splits,
                    "{what}: {split:?} leaves a slice empty or a k tile out ({k_tiles} k tiles)"
                );
                assert_eq!(
                    pl.workspace_bytes,
                    u64::from(split.splits) * u64::from(m) * u64::from(n) * 4
                        + pl.packed_bytes(tier),
                    "{what}"
                );
                assert!(
                    pl.stamp_fields()
                        .contains(&format!("split=\"k x{}", split.splits)),
                    "{what}"
                );

                let bare = plan::plan(
                    &problem(tier, layout, m, n, k),
                    &device,
                    &Choice::default(),
                    false,
                )
                .unwrap();
                // The same tile where no operand was copied (a copy changes the vector flags).
                if pl.packed_bytes(tier) == 0 {
                    assert_eq!(bare.schedule, pl.schedule, "{what}");
                }
                assert_eq!((bare.split, bare.workspace_bytes), (None, 0), "{what}");
            }
        }
    }
}

/// The sweep's split shapes (run84): slices of one k tile where the block slots allow, the
/// skinny tiles' `min_blocks` per SM counted as slots.
#[test]
fn split_counts_fill_the_block_slots_of_a_wave() {
    for (layout, m, n, k, want) in [
        (Layout::NN, 72, 3, 600, (5, 1)),
        (Layout::NN, 41, 721, 1923, (8, 2)),
        (Layout::TN, 2680, 2, 4631, (6, 7)),
        (Layout::NN, 2, 134, 5733, (23, 2)),
        // 126 output tiles of 64 x 32, two slots per SM: two slices.
        (Layout::TN, 42, 4023, 10779, (2, 43)),
    ] {
        let p = with_workspace(problem(Tier::Bf16, layout, m, n, k));
        let pl = plan::plan(&p, &H200_SM90A, &Choice::default(), false).unwrap();
        let split = pl.split.unwrap_or_else(|| panic!("{m}x{n}x{k}: {pl:?}"));
        assert_eq!(
            (split.splits, split.k_tiles_per_slice),
            want,
            "{m}x{n}x{k}: {pl:?}"
        );
    }
}

/// The random sweep's cliffs (run87): K shorter than the TMA tile's ring takes the next tile;
/// where B is stored [K][N], the skinny 64 x 64 tile from 70% of a wave (64 x 32 reads B in
/// 64-byte row pieces); where B is [N][K], from 90%.
#[test]
fn short_k_skips_the_tma_tile_and_wide_b_rows_take_64x64() {
    let p = with_workspace(problem(Tier::Bf16, Layout::NT, 444, 4485, 113));
    let pl = plan::plan(&p, &H200_SM90A, &Choice::default(), false).unwrap();
    assert_eq!(pl.entry, "gemm_bf16_nt_wgmma_128x256", "{pl:?}");
    let p = with_workspace(problem(Tier::Bf16, Layout::NT, 444, 4485, 256));
    let pl = plan::plan(&p, &H200_SM90A, &Choice::default(), false).unwrap();
    assert_eq!(pl.entry, "gemm_bf16_nt_tma_128x256", "{pl:?}");
    for (layout, m, n, k, tile) in [
        (Layout::TN, 43, 6374, 1303, "skinny_64x64"),
        (Layout::NN, 43, 6374, 1303, "skinny_64x64"),
        (Layout::TN, 42, 4023, 10779, "skinny_64x32"),
        (Layout::NT, 43, 6374, 1303, "skinny_64x32"),
        (Layout::TN, 43, 3800, 1303, "skinny_64x32"),
        (Layout::NN, 64, 4096, 4096, "skinny_64x32"),
    ] {
        let pl = picked(Tier::Bf16, layout, m, n, k);
        assert!(
            pl.entry.ends_with(tile),
            "{} {m}x{n}x{k}: {}",
            layout.name(),
            pl.entry
        );
    }
}

/// NN decode with K longer than N, where N alone gives too few 128-column blocks for a wave,
/// takes the ring walk with K split over its blocks (slices fill two blocks per SM, each at
/// least `DECODE_RING_MIN_SLICE_K` long); without a workspace, or with K no longer than N, the
/// direct walk, unsplit.
#[test]
fn long_k_decode_takes_the_ring_walk_split_over_k() {
    for (m, n, k, splits) in [
        (1, 4096, 28672, 8),
        (8, 8192, 14336, 4),
        (16, 14336, 28672, 2),
        (1, 4096, 8192, 8),
        (16, 8192, 28672, 4),
    ] {
        let what = format!("{m}x{n}x{k}");
        let p = with_workspace(problem(Tier::Bf16, Layout::NN, m, n, k));
        let pl = plan::plan(&p, &H200, &Choice::default(), false).unwrap();
        assert_eq!(pl.entry, "gemm_bf16_nn_decode_n128w8", "{what}");
        let split = pl.split.unwrap_or_else(|| panic!("{what}: {pl:?}"));
        assert_eq!(split.splits, splits, "{what}: {split:?}");
        assert!(
            split.k_tiles_per_slice * 64 >= plan::DECODE_RING_MIN_SLICE_K,
            "{what}: {split:?}"
        );
        assert!(
            u64::from(pl.grid) * u64::from(split.splits) <= 2 * 132,
            "{what}: {split:?}"
        );
        assert_eq!(
            pl.workspace_bytes,
            u64::from(split.splits) * u64::from(m) * u64::from(n) * 4,
            "{what}"
        );
        // No workspace: the direct walk.
        let bare = picked(Tier::Bf16, Layout::NN, m, n, k);
        assert!(
            bare.entry.contains("_nn_decode_n32w"),
            "{what}: {}",
            bare.entry
        );
        assert_eq!(bare.split, None, "{what}");
    }
    // Where an SM has 100 KB its ring holds one block: half the slices (sm_89, 128 SMs).
    let ada = DeviceFacts {
        sm_count: 128,
        max_smem_per_block_optin: 101_376,
        wgmma: false,
        smem_class: SmemClass::Kb100,
    };
    let p = with_workspace(problem(Tier::Bf16, Layout::NN, 1, 4096, 28672));
    let pl = plan::plan(&p, &ada, &Choice::default(), false).unwrap();
    assert_eq!(pl.entry, "gemm_bf16_nn_decode_n128w8");
    assert_eq!(pl.split.map(|s| s.splits), Some(4), "{pl:?}");
    // K no longer than N, or K too short for two slices: the direct walk.
    for (m, n, k) in [(1, 8192, 8192), (16, 4096, 4096), (1, 1024, 1536)] {
        let p = with_workspace(problem(Tier::Bf16, Layout::NN, m, n, k));
        let pl = plan::plan(&p, &H200, &Choice::default(), false).unwrap();
        assert!(
            pl.entry.contains("_nn_decode_n32w"),
            "{m}x{n}x{k}: {}",
            pl.entry
        );
        assert_eq!(pl.split, None, "{m}x{n}x{k}");
    }
    // A forced split on the ring walk is honoured; on the direct walk refused.
    let p = with_workspace(problem(Tier::Bf16, Layout::NN, 4, 4096, 4096));
    let ring = Choice {
        schedule: Some(Schedule::Decode(plan::DECODE_NN_RING_N128W8)),
        splits: Some(3),
        ..Choice::default()
    };
    let split = plan::plan(&p, &H200, &ring, false).unwrap().split.unwrap();
    assert_eq!((split.splits, split.k_tiles_per_slice), (3, 22));
    let direct = Choice {
        schedule: Some(Schedule::Decode(plan::DECODE_NN_N32W8)),
        ..ring
    };
    match plan::plan(&p, &H200, &direct, false) {
        Err(PlanError::Schedule { reason, .. }) => {
            assert!(reason.contains("decode ring walk split K"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// No split where the tiles already fill the GPU, where K is one k tile, for the decode kernel, or
/// for a forced `splits: Some(1)`.
#[test]
fn full_waves_short_k_and_decode_do_not_split() {
    let cases = [
        (Tier::Bf16, Layout::NN, 4096, 4096, 4096),
        (Tier::Bf16, Layout::NT, 2048, 2048, 16384),
        (Tier::Bf16, Layout::NN, 41, 721, 120),
        (Tier::Bf16, Layout::NN, 16, 4096, 4096),
        (Tier::Fp16, Layout::NT, 1, 128, 8192),
        (Tier::F32Pedantic, Layout::NN, 32, 32, 65536),
    ];
    for (tier, layout, m, n, k) in cases {
        let p = with_workspace(problem(tier, layout, m, n, k));
        let pl = plan::plan(&p, &H200_SM90A, &Choice::default(), false).unwrap();
        assert_eq!(
            pl.split,
            None,
            "{} {} {m}x{n}x{k}: {pl:?}",
            tier.name(),
            layout.name()
        );
    }
    let p = with_workspace(problem(Tier::Bf16, Layout::NN, 2, 134, 5733));
    let off = Choice {
        splits: Some(1),
        ..Choice::default()
    };
    assert_eq!(plan::plan(&p, &H200, &off, false).unwrap().split, None);
}

/// A forced split is honoured on mma.sync tiles (more slices than k tiles: one k tile each)
/// and refused with its reason elsewhere: another schedule, no workspace, zero slices, K = 0.
#[test]
fn forced_splits_are_honoured_or_refused_with_the_rule() {
    let forced = |splits, schedule| Choice {
        schedule,
        grid: None,
        splits: Some(splits),
    };
    let p = with_workspace(problem(Tier::Bf16, Layout::NN, 300, 200, 640));
    let small = Some(Schedule::Mma(plan::TILE_SMALL));
    let pl = plan::plan(&p, &H200, &forced(3, small), false).unwrap();
    let split = pl.split.unwrap();
    assert_eq!(
        (split.splits, split.k_tiles_per_slice),
        (3, 4),
        "640 = 10 k tiles of 64: 4 + 4 + 2"
    );
    let pl = plan::plan(&p, &H200, &forced(64, small), false).unwrap();
    assert_eq!(
        (
            pl.split.unwrap().splits,
            pl.split.unwrap().k_tiles_per_slice
        ),
        (10, 1)
    );

    let refusals: [(Problem, Choice, &str); 4] = [
        (
            with_workspace(problem(Tier::Bf16, Layout::NN, 300, 200, 640)),
            forced(2, Some(Schedule::Wgmma(plan::TILE_WGMMA))),
            "only the mma.sync tiles and the decode ring walk split K",
        ),
        (
            problem(Tier::Bf16, Layout::NN, 300, 200, 640),
            forced(2, small),
            "workspace of 480000 bytes",
        ),
        (
            with_workspace(problem(Tier::Bf16, Layout::NN, 300, 200, 640)),
            forced(0, small),
            "at least one slice",
        ),
        (
            with_workspace(Problem {
                lda: 1,
                ..problem(Tier::Bf16, Layout::NN, 300, 200, 0)
            }),
            forced(2, small),
            "nothing to split",
        ),
    ];
    for (p, choice, why) in refusals {
        let device = H200_SM90A;
        match plan::plan(&p, &device, &choice, false) {
            Err(PlanError::Schedule { reason, .. }) => assert!(reason.contains(why), "{reason}"),
            other => panic!("{choice:?} on {}x{}x{}: {other:?}", p.m, p.n, p.k),
        }
    }
}

/// The 16-bit operand pass: an operand off 16-byte chunks (odd leading dimension or base) is
/// copied into the workspace with rows in whole chunks where the element path would read enough of it to pay for the pass
/// (the random sweep's element-path shapes), and the GEMM is planned on the copy: vector flags
/// on, the TMA tile where it fills the GPU, a split's planes after the copies, decode weights
/// included.
#[test]
fn operands_off_16_byte_chunks_are_packed_where_the_pass_pays() {
    let vec = plan::flags::VEC_A | plan::flags::VEC_B;
    // 41x721x1923 NN: lda 1923, ldb 721 -> both copied (1928 and 728), then split.
    let p = with_workspace(problem(Tier::Bf16, Layout::NN, 41, 721, 1923));
    let pl = plan::plan(&p, &H200_SM90A, &Choice::default(), false).unwrap();
    let (a, b) = (pl.pack_a.unwrap(), pl.pack_b.unwrap());
    assert_eq!((a.rows, a.cols, a.ld, a.offset), (41, 1923, 1928, 0));
    assert_eq!(
        (b.rows, b.cols, b.ld, b.offset),
        (1923, 721, 728, 41 * 1928 * 2)
    );
    assert_eq!(pl.flags & vec, vec, "{pl:?}");
    let planes = pl.split.map_or(0, |s| s.workspace_bytes(41, 721));
    assert_eq!(pl.workspace_bytes, (41 * 1928 + 1923 * 728) * 2 + planes);
    assert_eq!(pl.packed_bytes(Tier::Bf16), (41 * 1928 + 1923 * 728) * 2);
    assert!(
        pl.stamp_fields().contains("pack_a=\"41x1923 ld=1928 at 0"),
        "{}",
        pl.stamp_fields()
    );

    // A large NT shape with odd leading dimensions takes the TMA tile on the copies.
    let mut big = problem(Tier::Fp16, Layout::NT, 562, 11682, 7450);
    (big.lda, big.ldb, big.ldc) = (7455, 7455, 11687);
    let pl = plan::plan(&with_workspace(big), &H200_SM90A, &Choice::default(), false).unwrap();
    assert_eq!(pl.schedule, Schedule::Tma(plan::TILE_TMA), "{pl:?}");
    assert_eq!((pl.pack_a.unwrap().ld, pl.pack_b.unwrap().ld), (7456, 7456));
    // Without a workspace: the element path, as before.
    let bare = plan::plan(&big, &H200_SM90A, &Choice::default(), false).unwrap();
    assert_eq!(
        (bare.pack_a, bare.pack_b, bare.flags & vec),
        (None, None, 0)
    );
    assert_eq!(bare.schedule, Schedule::Wgmma(plan::TILE_WGMMA));

    // A misaligned base with an aligned leading dimension is copied too.
    let mut shifted = problem(Tier::Bf16, Layout::TN, 300, 400, 500);
    shifted.a_addr = 2;
    let pl = plan::plan(&with_workspace(shifted), &H200, &Choice::default(), false).unwrap();
    assert_eq!((pl.pack_a.map(|a| a.ld), pl.pack_b), (Some(304), None));

    // Decode-sized weights off 16-byte chunks are copied too (the element path would stream
    // them at a fraction of the bandwidth), and the decode kernel reads the copies.
    let mut decode = problem(Tier::Bf16, Layout::NT, 8, 4096, 4096);
    decode.ldb = 4097;
    let pl = plan::plan(&with_workspace(decode), &H200, &Choice::default(), false).unwrap();
    assert_eq!(
        (pl.pack_a.map(|a| a.ld), pl.pack_b.map(|b| (b.rows, b.ld))),
        (None, Some((4096, 4096))),
        "{pl:?}"
    );
    assert!(matches!(pl.schedule, Schedule::Decode(_)), "{pl:?}");
    // So are large weights read by few rows (the sweep's 20 x 14797 x 3638, odd ld: 0.498x
    // of cuBLAS on the element path, run80).
    let mut wide = problem(Tier::Bf16, Layout::NN, 20, 14797, 3638);
    (wide.lda, wide.ldb, wide.ldc) = (3639, 14799, 14799);
    let pl = plan::plan(
        &with_workspace(wide),
        &H200_SM90A,
        &Choice::default(),
        false,
    )
    .unwrap();
    assert_eq!(
        (pl.pack_a.map(|a| a.ld), pl.pack_b.map(|b| b.ld)),
        (Some(3640), Some(14800)),
        "{pl:?}"
    );
    assert_eq!(pl.flags & vec, vec, "{pl:?}");

    // Tiny calls, where the pass's launch costs more than the element loads it saves
    // (run73), aligned operands, other tiers, and a workspace too small for the copy: nothing
    // copied.
    let mut tiny = with_workspace(problem(Tier::Bf16, Layout::TN, 550, 2, 1));
    tiny.lda = 551;
    let odd_small = with_workspace(problem(Tier::Bf16, Layout::NN, 20, 16, 186));
    for q in [tiny, odd_small] {
        let pl = plan::plan(&q, &H200_SM90A, &Choice::default(), false).unwrap();
        assert_eq!((pl.pack_a, pl.pack_b), (None, None), "{q:?}");
    }
    // K below PACK_MIN_K: each tile reads its operands in one or two k tiles, so nothing is
    // copied however large they are (the sweep's 1775 x 2235 x 8 TN, run96); one more k
    // element and both are.
    for (k, copied) in [
        (8, false),
        (plan::PACK_MIN_K - 1, false),
        (plan::PACK_MIN_K, true),
    ] {
        let q = with_workspace(problem(Tier::Bf16, Layout::TN, 1775, 2235, k));
        let pl = plan::plan(&q, &H200_SM90A, &Choice::default(), false).unwrap();
        assert_eq!(
            (pl.pack_a.is_some(), pl.pack_b.is_some()),
            (copied, copied),
            "{q:?}"
        );
    }
    let aligned = with_workspace(problem(Tier::Bf16, Layout::NN, 300, 400, 512));
    let mut tf32 = with_workspace(problem(Tier::Tf32, Layout::NN, 300, 400, 501));
    tf32.ldb += 1;
    let mut small = problem(Tier::Bf16, Layout::NN, 41, 721, 1923);
    small.workspace = Some(Workspace {
        addr: 0,
        bytes: 1024,
    });
    for q in [aligned, tf32, small] {
        let pl = plan::plan(&q, &H200_SM90A, &Choice::default(), false).unwrap();
        assert_eq!((pl.pack_a, pl.pack_b), (None, None), "{q:?}");
    }
}
