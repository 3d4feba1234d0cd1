//! The model's side of `cuda/include/cubins/gemm/fingerprints.cuh`: the same FNV-1a over the
//! same index functions on the same shapes, loop for loop.

use super::model::{
    a_ldmatrix_offset, a_word_offset, b_ldmatrix_offset, b_word_offset, copy_slot, decode_column,
    epilogue_quad, epilogue_slot, fma_owned, fma_run, raster_grouped, TileLayout,
};

struct Fnv(u32);

impl Fnv {
    fn new() -> Fnv {
        Fnv(2_166_136_261)
    }
    fn add(&mut self, v: usize) {
        for b in (v as u32).to_le_bytes() {
            self.0 ^= u32::from(b);
            self.0 = self.0.wrapping_mul(16_777_619);
        }
    }
}

pub fn layouts() -> u32 {
    let mut f = Fnv::new();
    for (rows, cpr) in [
        (128, 4),
        (256, 4),
        (32, 16),
        (32, 32),
        (64, 8),
        (128, 8),
        (32, 8),
    ] {
        for r in 0..rows {
            for c in 0..cpr {
                f.add(TileLayout::Swizzled.chunk(r, c, rows, cpr));
            }
        }
    }
    for (rows, cpr) in [(32, 32), (32, 16)] {
        for r in 0..rows {
            for c in 0..cpr {
                f.add(TileLayout::Padded.chunk(r, c, rows, cpr));
            }
        }
    }
    f.0
}

fn add_ldmatrix(f: &mut Fnv, epc: usize, trans_too: bool, outer: usize, bk: usize) {
    let mma_k = if epc == 8 { 16 } else { 8 };
    let sw = TileLayout::Swizzled;
    for x0 in (0..outer).step_by(16) {
        for kk in (0..bk).step_by(mma_k) {
            for lane in 0..32 {
                f.add(a_ldmatrix_offset(sw, true, epc, lane, x0, kk, outer, bk));
                f.add(b_ldmatrix_offset(sw, true, epc, lane, x0, kk, outer, bk));
                if trans_too {
                    f.add(a_ldmatrix_offset(sw, false, epc, lane, x0, kk, outer, bk));
                    f.add(b_ldmatrix_offset(sw, false, epc, lane, x0, kk, outer, bk));
                }
            }
        }
    }
}

pub fn fragments() -> u32 {
    let mut f = Fnv::new();
    add_ldmatrix(&mut f, 8, true, 128, 32);
    add_ldmatrix(&mut f, 8, true, 256, 32);
    add_ldmatrix(&mut f, 8, true, 64, 64);
    add_ldmatrix(&mut f, 4, false, 128, 16);
    add_ldmatrix(&mut f, 4, false, 64, 32);
    for (outer, bk) in [(128, 16), (64, 32)] {
        for x0 in (0..outer).step_by(16) {
            for kk in (0..bk).step_by(8) {
                for lane in 0..32 {
                    for r in 0..4 {
                        f.add(a_word_offset(lane, r, x0, kk, outer / 4));
                        f.add(b_word_offset(lane, r, x0, kk, outer / 4));
                    }
                }
            }
        }
    }
    f.0
}

pub fn copies() -> u32 {
    let mut f = Fnv::new();
    let tiles = [
        (256, 128, 4, false),
        (256, 32, 16, false),
        (256, 256, 4, false),
        (256, 32, 32, false),
        (128, 64, 8, false),
        (256, 128, 8, false),
        (256, 32, 32, true),
        (128, 64, 8, true),
        (128, 32, 16, true),
        (256, 16, 32, true),
    ];
    for (threads, rows, cpr, padded) in tiles {
        let layout = if padded {
            TileLayout::Padded
        } else {
            TileLayout::Swizzled
        };
        for i in 0..rows * cpr / threads {
            for tid in 0..threads {
                let (row, col, offset) = copy_slot(layout, i, tid, threads, rows, cpr);
                f.add(row);
                f.add(col);
                f.add(offset);
            }
        }
    }
    f.0
}

pub fn ownership() -> u32 {
    let mut f = Fnv::new();
    for (tm, tn) in [(1, 1), (9, 5), (17, 3), (33, 64), (8, 8)] {
        for bid in 0..tm * tn {
            let (m, n) = raster_grouped(bid, tm, tn, 8);
            f.add(m);
            f.add(n);
        }
    }
    for i in 0..2 {
        for r in 0..16 {
            f.add(decode_column(true, i, r));
            f.add(decode_column(false, i, r));
        }
    }
    for (tile, per) in [(128, 8), (64, 4)] {
        for t in 0..16 {
            for i in 0..per {
                f.add(fma_owned(i, t, tile, per));
            }
        }
    }
    for lane in 0..32 {
        for ni in 0..8 {
            for r in 0..4 {
                let (row, col) = epilogue_slot(lane, ni, r);
                f.add(row);
                f.add(col);
            }
        }
    }
    for warp_n in [32, 64] {
        for idx in 0..16 * warp_n / 4 {
            let (row, col) = epilogue_quad(idx, warp_n);
            f.add(row);
            f.add(col);
        }
    }
    for (runs, per) in [(2, 4), (32, 4), (4, 4), (16, 4)] {
        for tid in 0..256 {
            let (line, first) = fma_run(tid, runs, per);
            f.add(line);
            f.add(first);
        }
    }
    f.0
}
