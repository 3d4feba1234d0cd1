//! Judging a candidate against a comparator from their window samples: the ratio of
//! medians, whether the distributions separate, and whether the protocol extends.

use super::stats::Summary;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Whether every window of one arm was faster than every window of the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Separation {
    /// The candidate's slowest window beat the comparator's fastest.
    CandidateFaster,
    /// The candidate's fastest window was slower than the comparator's slowest.
    CandidateSlower,
    /// The distributions overlap: the difference, if any, is within the noise.
    Overlap,
}

impl fmt::Display for Separation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Separation::CandidateFaster => "separated (candidate faster)",
            Separation::CandidateSlower => "separated (candidate slower)",
            Separation::Overlap => "overlap",
        })
    }
}

/// The verdict of one paired comparison (times: lower is better).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub candidate: Summary,
    pub comparator: Summary,
    /// Comparator median time over candidate median time: the candidate's speed relative to
    /// the comparator (1.25 = candidate 25% faster; 0.8 = candidate at 80% of its speed).
    pub speed_ratio: f64,
    pub separation: Separation,
}

impl Comparison {
    pub fn of(candidate: Summary, comparator: Summary) -> Comparison {
        let separation = if candidate.max < comparator.min {
            Separation::CandidateFaster
        } else if candidate.min > comparator.max {
            Separation::CandidateSlower
        } else {
            Separation::Overlap
        };
        Comparison {
            candidate,
            comparator,
            speed_ratio: comparator.p50 / candidate.p50,
            separation,
        }
    }
}

/// The protocol's extension rule: measure more windows only when the candidate beats the
/// comparator at both the median and the tail, so a claimed win rests on more evidence.
pub fn candidate_beats_at_p50_and_p95(candidate: &Summary, comparator: &Summary) -> bool {
    candidate.p50 < comparator.p50 && candidate.p95 < comparator.p95
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(v: &[f64]) -> Summary {
        Summary::of(v).unwrap()
    }

    #[test]
    fn speed_ratio_is_comparator_time_over_candidate_time() {
        let c = Comparison::of(summary(&[2.0, 2.0, 2.0]), summary(&[3.0, 3.0, 3.0]));
        assert_eq!(c.speed_ratio, 1.5);
    }

    #[test]
    fn disjoint_distributions_separate_in_the_right_direction() {
        let fast = summary(&[1.0, 1.1, 1.2]);
        let slow = summary(&[1.3, 1.4, 1.5]);
        assert_eq!(
            Comparison::of(fast, slow).separation,
            Separation::CandidateFaster
        );
        assert_eq!(
            Comparison::of(slow, fast).separation,
            Separation::CandidateSlower
        );
    }

    #[test]
    fn touching_or_overlapping_distributions_do_not_separate() {
        let a = summary(&[1.0, 1.1, 1.3]);
        let b = summary(&[1.3, 1.4, 1.5]);
        assert_eq!(Comparison::of(a, b).separation, Separation::Overlap);
        let c = summary(&[1.0, 2.0, 3.0]);
        let d = summary(&[1.5, 2.5]);
        assert_eq!(Comparison::of(c, d).separation, Separation::Overlap);
    }

    #[test]
    fn extension_needs_both_median_and_tail_ahead() {
        let comparator = summary(&[10.0, 10.0, 10.0, 10.0, 20.0]);
        let better_both = summary(&[9.0, 9.0, 9.0, 9.0, 9.5]);
        let better_median_worse_tail = summary(&[9.0, 9.0, 9.0, 9.0, 40.0]);
        let equal = comparator;
        assert!(candidate_beats_at_p50_and_p95(&better_both, &comparator));
        assert!(!candidate_beats_at_p50_and_p95(
            &better_median_worse_tail,
            &comparator
        ));
        assert!(!candidate_beats_at_p50_and_p95(&equal, &comparator));
    }
}
