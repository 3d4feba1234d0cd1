//! How many buffer sets a workload rotates through and how many launches make a window, so
//! that timings measure DRAM, not a warm L2, unless a bench asks for cache residency.

use serde::Serialize;

/// Whether a bench measures data streamed from memory or data already in L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Residency {
    /// Rotate distinct buffer sets so every window touches more than 4x the L2.
    Streamed,
    /// One buffer set, reused: the bench measures cache-resident behaviour on purpose.
    CacheResident,
    /// As `Streamed`, but at most this many sets: launches that move less than 4x the L2 over
    /// this many bytes stay L2-resident (the rule a comparator must share to be compared).
    StreamedAtMost(usize),
}

/// Each window touches more than this many L2 sizes when streaming.
pub const L2_MULTIPLE: u64 = 4;

/// Launches per window never exceed this, however short a launch is.
pub const MAX_LAUNCHES_PER_WINDOW: usize = 20_000;

/// The rotation a workload allocates and the timer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RotationPlan {
    /// Distinct buffer sets; launch `i` of a window uses set `i % sets`.
    pub sets: usize,
    /// Bytes one launch reads plus writes.
    pub bytes_per_launch: u64,
}

impl RotationPlan {
    /// Enough sets that one pass over them touches strictly more than 4x the L2.
    pub fn new(bytes_per_launch: u64, l2_bytes: u64, residency: Residency) -> RotationPlan {
        let bytes = bytes_per_launch.max(1);
        let sets = match residency {
            Residency::CacheResident => 1,
            Residency::Streamed => (L2_MULTIPLE * l2_bytes / bytes + 1) as usize,
            Residency::StreamedAtMost(max) => {
                ((L2_MULTIPLE * l2_bytes / bytes + 1) as usize).clamp(1, max.max(1))
            }
        };
        RotationPlan {
            sets,
            bytes_per_launch,
        }
    }

    /// Launches per window: at least one pass over every set, at least enough launches to
    /// fill `target_window_us` at the warm-up's estimate, and a whole number of passes so
    /// every set is used equally often.
    pub fn launches_per_window(&self, estimated_launch_us: f64, target_window_us: f64) -> usize {
        let for_time = if estimated_launch_us > 0.0 && estimated_launch_us.is_finite() {
            (target_window_us / estimated_launch_us).ceil().max(1.0) as usize
        } else {
            1
        };
        let wanted = for_time
            .max(self.sets)
            .min(MAX_LAUNCHES_PER_WINDOW.max(self.sets));
        wanted.div_ceil(self.sets) * self.sets
    }

    /// Bytes the rotation allocates in total.
    pub fn footprint_bytes(&self) -> u64 {
        self.sets as u64 * self.bytes_per_launch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L2: u64 = 60 << 20;

    #[test]
    fn small_launches_rotate_past_four_l2_sizes() {
        let plan = RotationPlan::new(8 << 20, L2, Residency::Streamed);
        assert_eq!(plan.sets, 31); // 240 MiB / 8 MiB = 30, plus one to exceed it
        assert!(plan.footprint_bytes() > L2_MULTIPLE * L2);
        assert!(((plan.sets - 1) as u64 * plan.bytes_per_launch) <= L2_MULTIPLE * L2);
    }

    #[test]
    fn launches_larger_than_four_l2_sizes_need_one_set() {
        assert_eq!(RotationPlan::new(1 << 30, L2, Residency::Streamed).sets, 1);
    }

    #[test]
    fn a_capped_rotation_streams_large_launches_and_caps_small_ones() {
        let at_most = Residency::StreamedAtMost(256);
        assert_eq!(RotationPlan::new(8 << 20, L2, at_most).sets, 31);
        assert_eq!(RotationPlan::new(3 << 10, L2, at_most).sets, 256);
        assert_eq!(RotationPlan::new(1 << 30, L2, at_most).sets, 1);
    }

    #[test]
    fn cache_resident_benches_reuse_one_set() {
        assert_eq!(
            RotationPlan::new(1 << 10, L2, Residency::CacheResident).sets,
            1
        );
    }

    #[test]
    fn a_window_covers_every_set_a_whole_number_of_times() {
        let plan = RotationPlan::new(8 << 20, L2, Residency::Streamed);
        // Slow launches: one pass over the 31 sets is already longer than the target.
        assert_eq!(plan.launches_per_window(1000.0, 2000.0), 31);
        // Fast launches: 2000 / 3 = 667 launches, rounded up to 22 passes of 31.
        assert_eq!(plan.launches_per_window(3.0, 2000.0), 682);
    }

    #[test]
    fn window_length_is_capped_and_survives_a_broken_estimate() {
        let plan = RotationPlan::new(1 << 30, L2, Residency::Streamed);
        assert_eq!(
            plan.launches_per_window(1e-6, 2000.0),
            MAX_LAUNCHES_PER_WINDOW
        );
        assert_eq!(plan.launches_per_window(0.0, 2000.0), 1);
        assert_eq!(plan.launches_per_window(f64::NAN, 2000.0), 1);
    }
}
