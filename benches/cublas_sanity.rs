//! A sanity check of the harness against known numbers, in one run: the copy ceiling
//! (>= 90% of torch's 4.26 TB/s) next to cuBLAS bf16 8192^3 (within 5% of torch's 777
//! TFLOP/s, measured on a cool GPU: the SM clock and temperature are in every STAMP line).

mod harness;

use harness::gpu::copy::{size_label, CopyWorkload};
use harness::gpu::cublas::Cublas;
use harness::gpu::gemm::CublasGemm;
use harness::gpu::session::{self, Session};
use harness::host::gemm::{GemmTypes, RowMajorGemm};
use harness::host::reading::Reference;
use harness::host::rotation::Residency;
use std::process::ExitCode;

const COPY_REFERENCE_GBPS: f64 = 4260.0;
const CUBLAS_BF16_8192_TFLOPS: f64 = 777.0;
const CUBLAS_BF16_4096_TFLOPS: f64 = 711.0;

fn run(s: &mut Session<'_>) -> Result<(), String> {
    let (gpu, l2) = (s.gpu, s.l2_bytes);
    let copy_bytes = 1u64 << 30;
    let mut copy = CopyWorkload::new(gpu, copy_bytes, l2, Residency::Streamed, 0xC0FE)?;
    let copy_ref = Reference {
        label: "torch device copy 4.26 TB/s (H200)".into(),
        value: COPY_REFERENCE_GBPS,
    };
    s.measure(&size_label(copy_bytes), &mut copy, Some(copy_ref))?;
    drop(copy);

    let cublas = Cublas::open(&s.timer.stream)?;
    s.record
        .fact("cuBLAS", format!("{} from {}", cublas.version, cublas.path));
    let mut shapes = vec![(8192, CUBLAS_BF16_8192_TFLOPS)];
    if !s.options.quick {
        shapes.push((4096, CUBLAS_BF16_4096_TFLOPS));
    }
    for (n, tflops) in shapes {
        let shape = RowMajorGemm::new(n, n, n);
        let mut gemm = CublasGemm::new(
            &cublas,
            shape,
            GemmTypes::BF16,
            l2,
            Residency::Streamed,
            0x6E44,
        )?;
        let r = Reference {
            label: format!("torch cuBLAS bf16 {n}^3 {tflops} TFLOP/s (H200)"),
            value: tflops,
        };
        s.measure(&format!("{n}^3"), &mut gemm, Some(r))?;
    }

    let fraction = |label: &str| {
        s.readings()
            .iter()
            .find(|r| r.label == label && r.is_clean())
            .and_then(|r| r.fraction_of_reference())
    };
    let (copy_f, gemm_f) = (fraction(&size_label(copy_bytes)), fraction("8192^3"));
    let show = |f: Option<f64>| {
        f.map(|f| format!("{:.1}% of reference", f * 100.0))
            .unwrap_or_else(|| "no clean reading".into())
    };
    let (copy_detail, gemm_detail) = (show(copy_f), show(gemm_f));
    s.check(
        "copy ceiling >= 90% of 4.26 TB/s",
        copy_f.is_some_and(|f| f >= 0.90),
        copy_detail,
    );
    s.check(
        "cuBLAS bf16 8192^3 within 5% of 777 TFLOP/s (holds on a cool GPU; see the clocks)",
        gemm_f.is_some_and(|f| (f - 1.0).abs() <= 0.05),
        gemm_detail,
    );
    Ok(())
}

fn main() -> ExitCode {
    session::main("cublas_sanity", run)
}
