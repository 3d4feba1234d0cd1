//! Readings and stamps for the host-side tests.

use super::compare::Comparison;
use super::reading::{ComparatorArm, Reading, Work};
use super::schedule::Order;
use super::stamp::{Clock, ClockSource, Geometry, Route, Stamp};
use super::stats::Summary;

pub fn stamp(kernel: &str, fallback: bool) -> Stamp {
    let clock = Clock {
        mhz: Some(1980),
        source: ClockSource::Nvml,
        temperature_c: None,
    };
    Stamp {
        kernel: kernel.into(),
        route: Route::Artifact {
            arch: "sm_90".into(),
            kind: if fallback { "PTX" } else { "cubin" }.into(),
            sha256: "ab".repeat(32),
            fallback,
            origin: "embedded".into(),
        },
        toolkit: "13.0.88".into(),
        geometry: Some(Geometry {
            grid: [1, 1, 1],
            block: [256, 1, 1],
            dynamic_smem_bytes: 0,
        }),
        dtype: "bf16".into(),
        shape: "n=1".into(),
        comparator: "none".into(),
        gpu: "test GPU".into(),
        sm_clock_start: clock,
        sm_clock_end: clock,
        timing: "eager".into(),
    }
}

/// A reading of 2 MB per launch with the given samples and optional comparator samples.
pub fn reading(label: &str, samples: &[f64], comparator: Option<&[f64]>) -> Reading {
    let summary = Summary::of(samples).unwrap();
    let stamp = stamp("k", false);
    Reading {
        label: label.into(),
        stamp_line: stamp.to_string(),
        stamp: stamp.clone(),
        samples_us: samples.to_vec(),
        summary,
        launches_per_window: 4,
        work: Some(Work::Bytes(2_000_000)),
        comparator: comparator.map(|c| ComparatorArm {
            stamp: stamp.clone(),
            samples_us: c.to_vec(),
            comparison: Comparison::of(summary, Summary::of(c).unwrap()),
            order: Order::Abba,
            extended: false,
        }),
        reference: None,
        flags: vec![],
    }
}
