//! Order statistics over per-window samples: min, median, p95, max.

use serde::{Deserialize, Serialize};

/// Summary of one arm's window samples (microseconds per launch).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
    pub mean: f64,
}

/// The `q`-quantile (0..=1) of sorted samples, interpolating linearly between the two
/// nearest ranks (the common "type 7" definition), so medians of even counts are the
/// midpoint.
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Summary {
    /// `None` for an empty slice or one holding a NaN/infinite sample: a window that
    /// produced no finite time is a broken measurement, not a number to summarize.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(Summary {
            n: sorted.len(),
            min: sorted[0],
            p50: quantile_sorted(&sorted, 0.5),
            p95: quantile_sorted(&sorted, 0.95),
            max: sorted[sorted.len() - 1],
            mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_count_median_is_the_middle_sample() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((s.n, s.min, s.p50, s.max, s.mean), (5, 1.0, 3.0, 5.0, 3.0));
    }

    #[test]
    fn even_count_median_is_the_midpoint() {
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().p50, 2.5);
    }

    #[test]
    fn p95_interpolates_between_ranks() {
        // 21 samples 0..=20: position 0.95 * 20 = 19 exactly.
        let v: Vec<f64> = (0..21).map(f64::from).collect();
        assert_eq!(Summary::of(&v).unwrap().p95, 19.0);
        // 11 samples 0..=10: position 9.5, halfway between 9 and 10.
        let v: Vec<f64> = (0..11).map(f64::from).collect();
        assert_eq!(Summary::of(&v).unwrap().p95, 9.5);
    }

    #[test]
    fn single_sample_is_every_statistic() {
        let s = Summary::of(&[7.5]).unwrap();
        assert_eq!((s.min, s.p50, s.p95, s.max), (7.5, 7.5, 7.5, 7.5));
    }

    #[test]
    fn empty_or_non_finite_samples_have_no_summary() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        assert!(Summary::of(&[1.0, f64::INFINITY]).is_none());
    }
}
