//! The copy ceiling: this build's `copy_vec16` at several sizes, GB/s counting bytes read plus
//! written, as a fraction of the device copy torch measured on the H200 (4.26 TB/s). With
//! `--baseline-artifacts DIR`, each size is also timed in paired windows against another
//! build's `copy_vec16`.

mod harness;

use harness::gpu::baseline::BaselineKernel;
use harness::gpu::copy::{size_label, CopyWorkload};
use harness::gpu::session::{self, Session};
use harness::host::plot::Guide;
use harness::host::reading::Reference;
use harness::host::rotation::Residency;
use std::process::ExitCode;

/// torch's device-to-device copy on the H200, read plus written (docs/benchmarking.md).
const REFERENCE_GBPS: f64 = 4260.0;
/// The bar for the harness: the copy ceiling reaches 90% of that reference.
const MIN_FRACTION: f64 = 0.90;

fn reference() -> Reference {
    Reference {
        label: "torch device copy 4.26 TB/s (H200)".into(),
        value: REFERENCE_GBPS,
    }
}

fn run(s: &mut Session<'_>) -> Result<(), String> {
    let sizes: &[u64] = if s.options.quick {
        &[64 << 20, 1 << 30]
    } else {
        &[16 << 20, 64 << 20, 256 << 20, 1 << 30]
    };
    let (gpu, l2) = (s.gpu, s.l2_bytes);
    for (i, &bytes) in sizes.iter().enumerate() {
        let mut w = CopyWorkload::new(gpu, bytes, l2, Residency::Streamed, 0xC0FE + i as u64)?;
        s.measure(&size_label(bytes), &mut w, Some(reference()))?;
    }
    let best = s
        .readings()
        .iter()
        .filter(|r| r.is_clean())
        .filter_map(|r| r.fraction_of_reference())
        .fold(0.0, f64::max);
    s.check(
        format!(
            "copy ceiling >= {:.0}% of {}",
            MIN_FRACTION * 100.0,
            reference().label
        ),
        best >= MIN_FRACTION,
        format!("best clean reading {:.1}%", best * 100.0),
    );
    s.record.chart_guides = vec![
        Guide {
            value: MIN_FRACTION,
            label: "90% of reference".into(),
        },
        Guide {
            value: 1.0,
            label: "reference".into(),
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
