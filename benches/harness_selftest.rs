//! A test of the harness itself on the GPU. The same kernel as A and B must give a speed
//! ratio within 1% of 1.0 with overlapping distributions (eager launches and graph replay);
//! and as a positive control, a copy of half the size must read about 2x faster and
//! separate. Exits non-zero when any of that fails.

mod harness;

use harness::gpu::copy::CopyWorkload;
use harness::gpu::session::{self, Session};
use harness::host::compare::Separation;
use harness::host::rotation::Residency;
use std::process::ExitCode;

const SAME_KERNEL_TOLERANCE: f64 = 0.01;

fn same_kernel(s: &mut Session<'_>, label: &str, bytes: u64, graph: bool) -> Result<(), String> {
    let (gpu, l2) = (s.gpu, s.l2_bytes);
    let mut a = CopyWorkload::new(gpu, bytes, l2, Residency::Streamed, 0xA)?;
    let mut b = CopyWorkload::new(gpu, bytes, l2, Residency::Streamed, 0xB)?;
    let eager = s.timer.graph;
    s.timer.graph = graph;
    let result = s.compare(label, &mut a, &mut b);
    s.timer.graph = eager;
    result?;
    let r = s.readings().last().expect("compare pushed a reading");
    let c = r.comparator.as_ref().expect("a paired reading").comparison;
    let clean = r.is_clean();
    s.check(
        format!("{label}: speed ratio within 1% of 1.0"),
        clean && (c.speed_ratio - 1.0).abs() <= SAME_KERNEL_TOLERANCE,
        format!(
            "{:.4}x{}",
            c.speed_ratio,
            if clean { "" } else { ", reading flagged" }
        ),
    );
    s.check(
        format!("{label}: no separation"),
        c.separation == Separation::Overlap,
        c.separation.to_string(),
    );
    Ok(())
}

fn run(s: &mut Session<'_>) -> Result<(), String> {
    same_kernel(s, "copy_vec16 256 MiB A/A eager", 256 << 20, false)?;
    same_kernel(s, "copy_vec16 64 MiB A/A graph", 64 << 20, true)?;

    let (gpu, l2) = (s.gpu, s.l2_bytes);
    let mut half = CopyWorkload::new(gpu, 128 << 20, l2, Residency::Streamed, 0xC)?;
    let mut full = CopyWorkload::new(gpu, 256 << 20, l2, Residency::Streamed, 0xD)?;
    s.compare(
        "copy_vec16 128 MiB vs 256 MiB (control)",
        &mut half,
        &mut full,
    )?;
    let c = s
        .readings()
        .last()
        .expect("compare pushed a reading")
        .comparator
        .as_ref()
        .expect("paired")
        .comparison;
    s.check(
        "control: half the bytes reads 1.8x-2.2x faster",
        (1.8..=2.2).contains(&c.speed_ratio),
        format!("{:.3}x", c.speed_ratio),
    );
    s.check(
        "control: distributions separate",
        c.separation == Separation::CandidateFaster,
        c.separation.to_string(),
    );
    Ok(())
}

fn main() -> ExitCode {
    session::main("harness_selftest", run)
}
