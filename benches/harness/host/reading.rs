//! One reading: a STAMPed measurement of a candidate, alone or paired with a comparator,
//! with its raw window samples, the derived throughput and anything that makes it suspect.

use super::compare::Comparison;
use super::schedule::Order;
use super::stamp::Stamp;
use super::stats::Summary;
use serde::{Deserialize, Serialize};

/// The work one launch does, for throughput figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Work {
    /// Bytes read plus bytes written.
    Bytes(u64),
    /// Floating-point operations (2*M*N*K for a GEMM).
    Flops(u64),
}

impl Work {
    /// Throughput at `us` microseconds per launch: GB/s (10^9 bytes) or TFLOP/s.
    pub fn throughput(&self, us: f64) -> f64 {
        match *self {
            Work::Bytes(b) => b as f64 / us / 1e3,
            Work::Flops(f) => f as f64 / us / 1e6,
        }
    }

    pub fn unit(&self) -> &'static str {
        match self {
            Work::Bytes(_) => "GB/s",
            Work::Flops(_) => "TFLOP/s",
        }
    }
}

/// A fixed number to judge against (a ceiling measured elsewhere, in the unit of the work).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub label: String,
    pub value: f64,
}

/// Why a reading must not be quoted as a result. Kept in the evidence, never dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Flag {
    /// The route was the PTX JIT fallback, not a cubin for this device.
    Fallback,
    /// The run measured the wrong thing: wrong shape, wrong output, a failed check.
    Wrong(String),
}

/// The comparator arm of a paired reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparatorArm {
    pub stamp: Stamp,
    pub samples_us: Vec<f64>,
    pub comparison: Comparison,
    pub order: Order,
    /// The protocol extended from 21 to 101 windows (the candidate beat it at p50 and p95).
    pub extended: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// Row label (the shape or size, as the table and plot show it).
    pub label: String,
    pub stamp: Stamp,
    pub stamp_line: String,
    /// Microseconds per launch, one per window, in measurement order.
    pub samples_us: Vec<f64>,
    pub summary: Summary,
    pub launches_per_window: usize,
    pub work: Option<Work>,
    pub comparator: Option<ComparatorArm>,
    pub reference: Option<Reference>,
    pub flags: Vec<Flag>,
}

impl Reading {
    /// Candidate throughput at its median.
    pub fn throughput(&self) -> Option<f64> {
        self.work.map(|w| w.throughput(self.summary.p50))
    }

    /// Comparator throughput at its median.
    pub fn comparator_throughput(&self) -> Option<f64> {
        let c = self.comparator.as_ref()?;
        Some(self.work?.throughput(c.comparison.comparator.p50))
    }

    /// Candidate throughput over the fixed reference (0.93 = 93% of it).
    pub fn fraction_of_reference(&self) -> Option<f64> {
        Some(self.throughput()? / self.reference.as_ref()?.value)
    }

    /// What the plot and the `run-bench` table lead with: the speed ratio against the
    /// comparator when there is one, else the fraction of the reference.
    pub fn headline_ratio(&self) -> Option<f64> {
        match &self.comparator {
            Some(c) => Some(c.comparison.speed_ratio),
            None => self.fraction_of_reference(),
        }
    }

    pub fn is_clean(&self) -> bool {
        self.flags.is_empty()
    }

    pub fn mark_wrong(&mut self, why: impl Into<String>) {
        self.flags.push(Flag::Wrong(why.into()));
    }

    /// Flags the reading when either arm ran a PTX fallback route.
    pub fn flag_fallback_routes(&mut self) {
        let comparator_fell_back = self
            .comparator
            .as_ref()
            .is_some_and(|c| c.stamp.route.is_fallback());
        if (self.stamp.route.is_fallback() || comparator_fell_back)
            && !self.flags.contains(&Flag::Fallback)
        {
            self.flags.push(Flag::Fallback);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{reading, stamp};
    use super::*;

    #[test]
    fn throughput_units() {
        // 2 MB in 1 us = 2000 GB/s; 2e12 flop in 1e6 us = 2 TFLOP/s.
        assert_eq!(Work::Bytes(2_000_000).throughput(1.0), 2000.0);
        assert_eq!(Work::Flops(2_000_000_000_000).throughput(1e6), 2.0);
    }

    #[test]
    fn headline_prefers_the_comparator_then_the_reference() {
        let paired = reading("a", &[1.0, 1.0], Some(&[2.0, 2.0]));
        assert_eq!(paired.headline_ratio(), Some(2.0));
        let mut alone = reading("b", &[1.0, 1.0], None);
        assert_eq!(alone.headline_ratio(), None);
        alone.reference = Some(Reference {
            label: "ref".into(),
            value: 4000.0,
        });
        assert_eq!(alone.headline_ratio(), Some(0.5));
    }

    #[test]
    fn marking_a_reading_wrong_keeps_it_but_flags_it() {
        let mut r = reading("a", &[1.0], None);
        assert!(r.is_clean());
        r.mark_wrong("output mismatch at 17");
        assert_eq!(r.flags, vec![Flag::Wrong("output mismatch at 17".into())]);
        assert!(!r.is_clean());
    }

    #[test]
    fn fallback_routes_of_either_arm_flag_the_reading_once() {
        let mut r = reading("a", &[1.0], Some(&[1.0]));
        r.flag_fallback_routes();
        assert!(r.is_clean());
        r.comparator.as_mut().unwrap().stamp = stamp("k", true);
        r.flag_fallback_routes();
        r.flag_fallback_routes();
        assert_eq!(r.flags, vec![Flag::Fallback]);
    }
}
