//! The copy ceiling: this build's `copy_vec16` at several sizes, paired in alternating
//! windows against the driver's device-to-device copy (`cuMemcpyDtoDAsync`) in the same
//! process, GB/s counting bytes read plus written. The faster of the two is the ceiling the
//! fused bench judges against (`Session::copy_ceiling`); the kernel must keep up with the
//! driver. With `--baseline-artifacts DIR`, each size is also timed in paired windows against
//! another build's `copy_vec16`.

mod harness;

use harness::gpu::baseline::BaselineKernel;
use harness::gpu::copy::{size_label, CopyWorkload};
use harness::gpu::session::{self, Session};
use harness::host::plot::Guide;
use harness::host::rotation::Residency;
use std::process::ExitCode;

/// The bar: `copy_vec16` at this fraction of the driver's copy or faster, at every size of at
/// least [`CHECKED_BYTES`] (below it launch latency is a visible share of a copy).
const MIN_SPEED_RATIO: f64 = 0.98;
const CHECKED_BYTES: u64 = 64 << 20;

fn run(s: &mut Session<'_>) -> Result<(), String> {
    let sizes: &[u64] = if s.options.quick {
        &[64 << 20, 1 << 30]
    } else {
        &[16 << 20, 64 << 20, 256 << 20, 1 << 30]
    };
    let (gpu, l2) = (s.gpu, s.l2_bytes);
    let mut worst: Option<(f64, String)> = None;
    for (i, &bytes) in sizes.iter().enumerate() {
        let seed = 0xC0FE + i as u64;
        let mut kernel = CopyWorkload::new(gpu, bytes, l2, Residency::Streamed, seed)?;
        let mut driver = CopyWorkload::driver(gpu, bytes, l2, Residency::Streamed, seed)?;
        s.compare(&size_label(bytes), &mut kernel, &mut driver)?;
        let r = s.readings().last().ok_or("no reading")?;
        let ratio = match (&r.comparator, r.is_clean()) {
            (Some(c), true) => c.comparison.speed_ratio,
            _ => 0.0,
        };
        if bytes >= CHECKED_BYTES && worst.as_ref().map_or(true, |(w, _)| ratio < *w) {
            worst = Some((ratio, size_label(bytes)));
        }
    }
    let (ratio, at) = worst.ok_or("no size of at least 64 MiB was measured")?;
    s.check(
        format!(
            "copy_vec16 >= {MIN_SPEED_RATIO:.2}x the driver's device copy at every size >= {}",
            size_label(CHECKED_BYTES)
        ),
        ratio >= MIN_SPEED_RATIO,
        format!("slowest clean reading {ratio:.3}x at {at}"),
    );
    s.record.chart_guides = vec![
        Guide {
            value: MIN_SPEED_RATIO,
            label: format!("{MIN_SPEED_RATIO:.2}x the driver's copy"),
        },
        Guide {
            value: 1.0,
            label: "the driver's copy".into(),
        },
    ];

    if let Some(baseline) = s.baseline()? {
        let arch = gpu.route("copy_vec16").map_err(|e| e.to_string())?.arch;
        for (i, &bytes) in sizes.iter().enumerate() {
            let kernel = BaselineKernel::load(&baseline, "copy", arch, "copy_vec16")?;
            let mut old = CopyWorkload::baseline(
                gpu,
                kernel,
                bytes,
                l2,
                Residency::Streamed,
                0xB0FE + i as u64,
            )?;
            let mut new =
                CopyWorkload::new(gpu, bytes, l2, Residency::Streamed, 0xB0FE + i as u64)?;
            s.compare(
                &format!("{} vs baseline", size_label(bytes)),
                &mut new,
                &mut old,
            )?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    session::main("copy_ceiling", run)
}
