//! Storage dtypes as the tests see them, deterministic inputs (splitmix64), and the
//! error metric the parity gates use.

use half::{bf16, f16};

/// A storage dtype of the kernels: bf16, f16 or f32 (computed in f32 on the GPU, in f64 here).
pub trait Elem: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// `bf16`, `f16`, `f32`: the suffix of the entry points and of digest keys.
    const NAME: &'static str;
    /// Parity tolerance: max |got - ref| over a row, relative to the row's max |ref|.
    /// The output's own rounding is at most half an ulp of the row's largest value
    /// (2^-9 for bf16, 2^-11 for f16, 2^-24 for f32); the bounds leave room for the fp32
    /// arithmetic and stay far below what a wrong element, index or reduction gives.
    const TOLERANCE: f64;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
    /// Little-endian bytes of a slice (what digests and uploads see).
    fn bytes(values: &[Self]) -> Vec<u8>;
    /// A value whose bits are all ones (a NaN in each dtype): what outputs hold before a
    /// kernel runs, so an element the kernel failed to write is detected.
    fn poison() -> Self;
    fn is_poison(self) -> bool;
}

/// The two 16-bit storage types differ only in name and tolerance.
macro_rules! half_elem {
    ($t:ty, $name:literal, $tol:expr) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            const TOLERANCE: f64 = $tol;
            fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }
            fn from_f64(v: f64) -> Self {
                <$t>::from_f64(v)
            }
            fn bytes(values: &[Self]) -> Vec<u8> {
                values
                    .iter()
                    .flat_map(|v| v.to_bits().to_le_bytes())
                    .collect()
            }
            fn poison() -> Self {
                <$t>::from_bits(u16::MAX)
            }
            fn is_poison(self) -> bool {
                self.to_bits() == u16::MAX
            }
        }
    };
}

half_elem!(bf16, "bf16", 8e-3);
half_elem!(f16, "f16", 1e-3);

impl Elem for f32 {
    const NAME: &'static str = "f32";
    const TOLERANCE: f64 = 1e-5;
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn bytes(values: &[Self]) -> Vec<u8> {
        values
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect()
    }
    fn poison() -> Self {
        f32::from_bits(u32::MAX)
    }
    fn is_poison(self) -> bool {
        self.to_bits() == u32::MAX
    }
}

/// Rounds through the storage dtype (what a store and a load give).
pub fn round_to<T: Elem>(v: f64) -> f64 {
    T::from_f64(v).to_f64()
}

pub fn to_f64<T: Elem>(values: &[T]) -> Vec<f64> {
    values.iter().map(|v| v.to_f64()).collect()
}

/// splitmix64: a fixed seed gives the same inputs on every machine and run.
// A binary that also includes the bench harness or tests/gpu_common holds a second, private
// copy of the same file: same stream, no shared state.
#[allow(clippy::duplicate_mod)]
#[path = "../../benches/harness/host/splitmix.rs"]
mod splitmix;
pub use splitmix::SplitMix64;

impl SplitMix64 {
    /// Uniform in [lo, hi), from the top 53 bits.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// `n` values uniform in [lo, hi), rounded to the storage dtype.
    pub fn fill<T: Elem>(&mut self, n: usize, lo: f64, hi: f64) -> Vec<T> {
        (0..n).map(|_| T::from_f64(self.uniform(lo, hi))).collect()
    }
}

/// The parity metric: over each row of `cols` values, max |got - want| divided by the
/// row's max |want| (a row of zeros is measured absolutely). Returns the worst row's ratio
/// and where it happened, (row, col).
pub fn max_row_relative_error(got: &[f64], want: &[f64], cols: usize) -> (f64, (usize, usize)) {
    max_row_scaled_error(got, want, cols, None)
}

/// [`max_row_relative_error`] with an explicit scale per row where the row's max |want| is
/// the wrong yardstick: an output that is a difference of larger terms (RMSNorm's dx) is only
/// as exact as those terms, so its error is measured against their magnitude.
pub fn max_row_scaled_error(
    got: &[f64],
    want: &[f64],
    cols: usize,
    row_scale: Option<&[f64]>,
) -> (f64, (usize, usize)) {
    assert_eq!(got.len(), want.len(), "output length");
    assert!(cols > 0 && want.len() % cols == 0, "whole rows");
    let mut worst = (0.0f64, (0, 0));
    for (r, (g_row, w_row)) in got.chunks(cols).zip(want.chunks(cols)).enumerate() {
        let own = w_row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scale = row_scale.map_or(own, |s| own.max(s[r]));
        let scale = if scale > 0.0 { scale } else { 1.0 };
        for (c, (g, w)) in g_row.iter().zip(w_row).enumerate() {
            // NaN in `got` (a poisoned or broken element) must count as the worst error.
            let e = if g.is_nan() != w.is_nan() {
                f64::INFINITY
            } else {
                (g - w).abs() / scale
            };
            if e > worst.0 || (e.is_nan() && !worst.0.is_nan()) {
                worst = (e, (r, c));
            }
        }
    }
    worst
}

/// Panics with a readable message when `got` is outside the dtype's tolerance of `want`.
pub fn assert_close<T: Elem>(
    what: &str,
    got: &[T],
    want: &[f64],
    cols: usize,
    row_scale: Option<&[f64]>,
) {
    let got = to_f64(got);
    let (err, (r, c)) = max_row_scaled_error(&got, want, cols, row_scale);
    assert!(
        err <= T::TOLERANCE,
        "{what} ({}): row {r} col {c}: got {}, reference {}; error {err:.3e} of the row's scale exceeds {:.1e}",
        T::NAME,
        got[r * cols + c],
        want[r * cols + c],
        T::TOLERANCE
    );
}
