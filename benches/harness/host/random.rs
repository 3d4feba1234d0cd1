//! Deterministic random inputs (never zeros): a SplitMix64 stream turned into words or
//! floats in [-1, 1) for every storage type a bench uses.

use half::{bf16, f16};

// SplitMix64: tiny, fast and good enough to keep inputs away from constant patterns that
// hardware could compress or short-circuit.
pub use super::splitmix::SplitMix64;

impl SplitMix64 {
    /// Uniform in [-1, 1), from the top 24 bits so every value is exact in f32.
    pub fn next_unit_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }
}

/// Random 32-bit words, none of them zero.
pub fn words(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| (rng.next_u64() as u32).max(1)).collect()
}

pub fn f32s(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| rng.next_unit_f32()).collect()
}

pub fn bf16s(n: usize, seed: u64) -> Vec<bf16> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| bf16::from_f32(rng.next_unit_f32()))
        .collect()
}

pub fn f16s(n: usize, seed: u64) -> Vec<f16> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| f16::from_f32(rng.next_unit_f32())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        assert_eq!(words(64, 7), words(64, 7));
        assert_ne!(words(64, 7), words(64, 8));
    }

    #[test]
    fn words_are_never_zero_and_not_constant() {
        let w = words(10_000, 1);
        assert!(w.iter().all(|&x| x != 0));
        assert!(w.iter().any(|&x| x != w[0]));
    }

    #[test]
    fn floats_are_in_range_finite_and_spread() {
        let v = f32s(10_000, 3);
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = v.iter().sum::<f32>() / v.len() as f32;
        assert!(mean.abs() < 0.05, "mean {mean}");
        assert!(v.iter().any(|&x| x < -0.9) && v.iter().any(|&x| x > 0.9));
        assert!(bf16s(1000, 3)
            .iter()
            .all(|x| x.to_f32().is_finite() && x.to_f32().abs() <= 1.0));
        assert!(f16s(1000, 3)
            .iter()
            .all(|x| x.to_f32().is_finite() && x.to_f32().abs() <= 1.0));
        assert!(bf16s(1000, 3).iter().filter(|x| x.to_f32() == 0.0).count() < 10);
    }
}
