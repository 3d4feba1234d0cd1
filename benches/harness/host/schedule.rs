//! The order of paired alternating windows: ABBA (or BAAB) so that slow drift in clocks
//! or temperature lands on both arms equally instead of reading as a difference.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One side of a paired comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arm {
    /// The kernel being judged.
    Candidate,
    /// What it is judged against (cuBLAS, the copy ceiling, a baseline build).
    Comparator,
}

/// Which arm opens the first pair. ABBA: candidate, comparator, comparator, candidate, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Order {
    Abba,
    Baab,
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Abba => "ABBA",
            Order::Baab => "BAAB",
        })
    }
}

impl Order {
    /// The two windows of pair `pair`, in the order they run. Pairs alternate which arm goes
    /// first, so each arm runs first in half the pairs and sits next to itself across pairs.
    pub fn pair(self, pair: usize) -> [Arm; 2] {
        let opens_with_candidate = (pair % 2 == 0) == (self == Order::Abba);
        if opens_with_candidate {
            [Arm::Candidate, Arm::Comparator]
        } else {
            [Arm::Comparator, Arm::Candidate]
        }
    }
}

/// Window counts of the paired protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairedPlan {
    /// Windows per arm always measured.
    pub base_windows: usize,
    /// Windows per arm once the candidate looks faster (both p50 and p95 lower).
    pub extended_windows: usize,
}

impl PairedPlan {
    /// 21 windows per arm, extended to 101 when the candidate beats the comparator.
    pub const STANDARD: PairedPlan = PairedPlan {
        base_windows: 21,
        extended_windows: 101,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use Arm::{Candidate as A, Comparator as B};

    fn sequence(order: Order, pairs: usize) -> Vec<Arm> {
        (0..pairs).flat_map(|p| order.pair(p)).collect()
    }

    #[test]
    fn abba_alternates_the_opening_arm() {
        assert_eq!(sequence(Order::Abba, 3), [A, B, B, A, A, B]);
    }

    #[test]
    fn baab_is_the_mirror_of_abba() {
        assert_eq!(sequence(Order::Baab, 3), [B, A, A, B, B, A]);
    }

    #[test]
    fn each_arm_opens_half_of_an_even_number_of_pairs() {
        let opened_by_a = (0..100).filter(|&p| Order::Abba.pair(p)[0] == A).count();
        assert_eq!(opened_by_a, 50);
    }

    #[test]
    fn the_standard_plan_is_21_then_101() {
        assert_eq!(
            (
                PairedPlan::STANDARD.base_windows,
                PairedPlan::STANDARD.extended_windows
            ),
            (21, 101)
        );
    }
}
