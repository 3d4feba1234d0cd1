//! GPU gates of the GEMM family (docs/kernels/gemm.md):
//!
//! - parity with a float64 reference per tier, layout and schedule (every entry point is
//!   forced once), on tail shapes (M = 1, M/N/K off the tiles), with alpha, beta and bias, bf16
//!   / fp16 / f32 outputs, and on bases and leading dimensions that switch vector access off;
//!   tolerances in [`tolerance`] (relative Frobenius error, and the worst element relative to
//!   the largest reference value), every measured pair printed as a `PARITY` line;
//! - the pedantic tier bit-identical to the CPU's ascending fmaf chain, for both tiles and
//!   several grids (hence across configurations and launch geometry);
//! - poisoned outputs and padding: C starts as all-ones bits, every element is written, the
//!   padding columns of A, B and C and guard zones around every buffer are never touched (A
//!   and B padding holds NaN, which would reach the result if read);
//! - FNV-1a digests per tier and shape against tests/digests/gemm.txt (a missing key fails);
//!   repeat runs and CUDA-graph replay bit-identical;
//! - every route a cubin (no PTX fallback), bad input refused with an `Err`.
//!
//! `#[ignore]`d: run through the GPU bundle, which passes `--include-ignored`.
#![cfg(feature = "cust")]

mod common;
#[allow(dead_code)]
#[path = "../benches/harness/gpu/driver.rs"]
mod driver;
mod gemm_common;
mod gpu_common;
#[path = "gpu_common/guarded.rs"]
mod guarded;

use common::data::{Elem, SplitMix64};
use common::digest::{fnv1a64, hash_line, DigestFile};
use cubins::ops::gemm::{
    device_facts, gemm, gemm_plan, gemm_with_workspace, gemm_workspace_len, plan, wgmma_route,
    Choice, Dtype, GemmDesc, GemmInput, GemmLaunch, GemmOutput, Layout, Schedule, Tier,
};
use cubins::runtime::{Bf16, DeviceRead, Error, Gpu, F16};
use cust::stream::Stream;
use gemm_common::reference::{epilogue, gemm_f64, pedantic_f32, rel_frobenius};
use gpu_common::{driver_version, gpu, PROGRAMMATIC_DRIVER};
use guarded::{DeviceElem, Guarded};
use half::{bf16, f16};

// ------------------------------------------------------------------ element types

/// A host element type whose device type the GEMM takes.
trait HostElem: DeviceElem<Dev: GemmOutput> {}
impl<T: DeviceElem<Dev: GemmOutput>> HostElem for T {}

// ------------------------------------------------------------------ cases

/// One GEMM call: shape, leading dimensions (the stored row length plus `ld_extra`, rounded
/// up to a multiple of 8 elements when `align_ld`), base shift (elements, applied to A, B and
/// C alike), scalars, bias, and a forced choice.
#[derive(Debug, Clone, Copy)]
struct Case {
    layout: Layout,
    m: usize,
    n: usize,
    k: usize,
    ld_extra: usize,
    align_ld: bool,
    shift: usize,
    alpha: f32,
    beta: f32,
    bias: bool,
    choice: Choice,
    /// Lend the planner the workspace it asks for (`gemm_with_workspace`); else `gemm`.
    lend_workspace: bool,
}

impl Case {
    fn new(layout: Layout, m: usize, n: usize, k: usize) -> Case {
        Case {
            layout,
            m,
            n,
            k,
            ld_extra: 0,
            align_ld: true,
            shift: 0,
            alpha: 1.0,
            beta: 0.0,
            bias: false,
            choice: Choice::default(),
            lend_workspace: true,
        }
    }

    fn scalars(self, alpha: f32, beta: f32, bias: bool) -> Case {
        Case {
            alpha,
            beta,
            bias,
            ..self
        }
    }

    fn schedule(self, s: Schedule) -> Case {
        Case {
            choice: Choice {
                schedule: Some(s),
                ..self.choice
            },
            ..self
        }
    }

    /// The case in words. The digest cases seed their inputs from this text, so its format
    /// stays as recorded (a choice without a split count prints as it did before splits).
    fn describe(&self) -> String {
        let c = &self.choice;
        let choice = match c.splits {
            None => format!(
                "Choice {{ schedule: {:?}, grid: {:?} }}",
                c.schedule, c.grid
            ),
            Some(_) => format!("{c:?}"),
        };
        format!(
            "{} {}x{}x{} ld=({},{},{}) shift={} alpha={} beta={} bias={} choice={}",
            self.layout.name(),
            self.m,
            self.n,
            self.k,
            self.lda(),
            self.ldb(),
            self.ldc(),
            self.shift,
            self.alpha,
            self.beta,
            self.bias,
            choice
        )
    }

    /// Leading dimension of a stored row of `cols` elements.
    fn ld(&self, cols: usize) -> usize {
        let ld = cols + self.ld_extra;
        if self.align_ld {
            ld.div_ceil(8) * 8
        } else {
            ld
        }
        .max(1)
    }

    fn lda(&self) -> usize {
        self.ld(self.a_stored().1)
    }

    fn ldb(&self) -> usize {
        self.ld(self.b_stored().1)
    }

    fn ldc(&self) -> usize {
        self.ld(self.n)
    }

    fn a_stored(&self) -> (usize, usize) {
        if self.layout.a_k_major() {
            (self.m, self.k)
        } else {
            (self.k, self.m)
        }
    }

    fn b_stored(&self) -> (usize, usize) {
        if self.layout.b_k_major() {
            (self.n, self.k)
        } else {
            (self.k, self.n)
        }
    }
}

/// A row-major `rows x cols` matrix with leading dimension `ld`: random values in [-1, 1)
/// (rounded to T), padding poisoned.
fn matrix<T: Elem>(rng: &mut SplitMix64, rows: usize, cols: usize, ld: usize) -> Vec<T> {
    let mut v = vec![T::poison(); rows * ld];
    for r in 0..rows {
        for c in 0..cols {
            v[r * ld + c] = T::from_f64(rng.uniform(-1.0, 1.0));
        }
    }
    v
}

/// The inputs of a case, on the host.
struct Inputs<T: Elem, O: Elem> {
    a: Vec<T>,
    b: Vec<T>,
    c0: Vec<O>,
    bias: Vec<f32>,
}

fn inputs<T: Elem, O: Elem>(case: &Case, seed: u64) -> Inputs<T, O> {
    let mut rng = SplitMix64::new(seed);
    let (ar, ac) = case.a_stored();
    let (br, bc) = case.b_stored();
    let a = matrix::<T>(&mut rng, ar, ac, case.lda());
    let b = matrix::<T>(&mut rng, br, bc, case.ldb());
    // beta == 0: C starts as poison and must be fully overwritten (never read).
    let c0 = if case.beta != 0.0 {
        matrix::<O>(&mut rng, case.m, case.n, case.ldc())
    } else {
        vec![O::poison(); case.m * case.ldc()]
    };
    let bias = (0..case.n).map(|_| rng.uniform(-1.0, 1.0) as f32).collect();
    Inputs { a, b, c0, bias }
}

/// What a case produced: C (m x n, padding stripped after checking it is untouched) and the
/// launch record.
struct Ran<O> {
    c: Vec<O>,
    launch: GemmLaunch,
}

fn run<T: HostElem, O: HostElem>(
    gpu: &Gpu,
    stream: &Stream,
    tier: Tier,
    case: &Case,
    x: &Inputs<T, O>,
) -> Result<Ran<O>, Error>
where
    T::Dev: GemmInput,
{
    let a = Guarded::new(&x.a, case.shift);
    let b = Guarded::new(&x.b, case.shift);
    let c = Guarded::new(&x.c0, case.shift);
    let bias = Guarded::<f32>::new(&x.bias, 0);
    let desc = GemmDesc {
        choice: case.choice,
        ..GemmDesc::new(case.layout, case.m, case.n, case.k)
            .with_scalars(case.alpha, case.beta)
            .with_leading_dims(case.lda(), case.ldb(), case.ldc())
    };
    let bias_view = bias.view();
    // The planner gets the workspace it asks for (TF32 on wgmma, copies of operands off
    // 16-byte chunks, split K), guarded, unless the case runs without one.
    let ws_len = gemm_workspace_len(gpu, tier, &desc)?;
    let workspace =
        (ws_len > 0 && case.lend_workspace).then(|| Guarded::<f32>::poisoned(ws_len, 0));
    let (av, bv, mut cv) = (a.view(), b.view(), c.view());
    let bias_arg: Option<&dyn DeviceRead<f32, Stream>> = case.bias.then_some(&bias_view);
    let launch = match &workspace {
        Some(w) => gemm_with_workspace(
            gpu,
            stream,
            &desc.with_tier(tier),
            &av,
            &bv,
            &mut cv,
            bias_arg,
            &mut w.view(),
        )?,
        None => gemm(
            gpu,
            stream,
            &desc.with_tier(tier),
            &av,
            &bv,
            &mut cv,
            bias_arg,
        )?,
    };
    stream.synchronize().expect("the kernel ran to completion");
    let what = format!("{} {}", launch.plan.entry, case.describe());
    // The length is planned for 16-byte aligned buffers: a shifted base may leave a copy
    // out for want of room, never use more.
    let lent = workspace.as_ref().map_or(0, |_| ws_len as u64 * 4);
    assert!(
        launch.plan.workspace_bytes <= lent,
        "{what}: the plan used more workspace than it was lent"
    );
    if case.shift == 0 {
        assert_eq!(
            launch.plan.workspace_bytes, lent,
            "{what}: the plan used another workspace than it asked for"
        );
    }
    assert!(
        !gpu.route(&launch.plan.entry).unwrap().is_fallback(),
        "{what}: took the PTX fallback"
    );
    if let Some(w) = &workspace {
        assert!(
            !gpu.route(plan::TF32_PREPARE_ENTRY).unwrap().is_fallback(),
            "{what}: the operand pass took the PTX fallback"
        );
        // Every workspace float the plan uses written (the passes zero-pad their rows), none
        // past it.
        let used = (launch.plan.workspace_bytes / 4) as usize;
        let body = w.read(&format!("{what}: workspace"));
        if let Some(i) = body[..used].iter().position(|v| v.is_poison()) {
            panic!("{what}: workspace float {i} of the {used} the plan uses was never written");
        }
        assert!(
            body[used..].iter().all(|v| v.is_poison()),
            "{what}: a write landed in the workspace past what the plan uses"
        );
    }
    for (name, g, want) in [("A", &a, &x.a), ("B", &b, &x.b)] {
        assert!(
            T::bytes(&g.read(&what)) == T::bytes(want),
            "{what}: input {name} changed"
        );
    }
    let all = c.read(&what);
    let ldc = case.ldc();
    let mut out = Vec::with_capacity(case.m * case.n);
    for r in 0..case.m {
        out.extend_from_slice(&all[r * ldc..r * ldc + case.n]);
        assert!(
            all[r * ldc + case.n..(r + 1) * ldc]
                .iter()
                .all(|v| v.is_poison()),
            "{what}: row {r}: a write landed in C's padding"
        );
    }
    if case.beta == 0.0 {
        if let Some(i) = out.iter().position(|v| v.is_poison()) {
            panic!(
                "{what}: C ({}, {}) was never written",
                i / case.n,
                i % case.n
            );
        }
    }
    Ok(Ran { c: out, launch })
}

/// The float64 reference of a case: alpha * op(A) op(B) + beta * C + bias.
fn reference<T: Elem, O: Elem>(case: &Case, x: &Inputs<T, O>) -> Vec<f64> {
    let f = |v: &[T]| -> Vec<f64> {
        v.iter()
            .map(|e| if e.is_poison() { f64::NAN } else { e.to_f64() })
            .collect()
    };
    let acc = gemm_f64(
        (case.layout.a_k_major(), case.layout.b_k_major()),
        case.m,
        case.n,
        case.k,
        &f(&x.a),
        case.lda(),
        &f(&x.b),
        case.ldb(),
    );
    let ldc = case.ldc();
    (0..case.m * case.n)
        .map(|i| {
            let (r, col) = (i / case.n, i % case.n);
            let mut v = f64::from(case.alpha) * acc[i];
            if case.beta != 0.0 {
                v += f64::from(case.beta) * x.c0[r * ldc + col].to_f64();
            }
            if case.bias {
                v += f64::from(x.bias[col]);
            }
            v
        })
        .collect()
}

// ------------------------------------------------------------------ parity

/// Allowed error of a tier writing `out`: (relative Frobenius, worst element relative to the
/// largest reference value). The reference uses the exact (already rounded) inputs, so the
/// error is the output rounding (unit roundoff u: 2^-8 bf16, 2^-11 fp16; RMS about u/sqrt(3),
/// worst u), the tf32 rounding of the inputs (2^-11 per operand, in the kernel only), and f32
/// accumulation in another order. Each bound is several times the expected error and far
/// below what a wrong element, tile or index gives (an error of the size of the values).
fn tolerance(tier: Tier, out: Dtype) -> (f64, f64) {
    match (tier, out) {
        (Tier::Bf16, Dtype::Bf16) => (1e-2, 2.0f64.powi(-7)),
        (Tier::Fp16, Dtype::F16) => (2e-3, 2.0f64.powi(-10)),
        (Tier::Bf16 | Tier::Fp16, _) => (1e-4, 1e-3),
        (Tier::Tf32, _) => (1e-3, 4e-3),
        (Tier::F32Pedantic, _) => (1e-5, 1e-4),
    }
}

/// Checks `got` against `want` within the tier's tolerance; prints the measured errors (a
/// `PARITY` line per case, for calibration) and, on failure, where the bad elements are.
fn check_parity<O: Elem>(what: &str, tier: Tier, out: Dtype, n: usize, got: &[O], want: &[f64]) {
    let got: Vec<f64> = got.iter().map(|v| v.to_f64()).collect();
    let (tol_frob, tol_elem) = tolerance(tier, out);
    let frob = rel_frobenius(&got, want);
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    let errs: Vec<f64> = got
        .iter()
        .zip(want)
        .map(|(g, w)| {
            if g.is_finite() {
                (g - w).abs() / scale
            } else {
                f64::INFINITY
            }
        })
        .collect();
    let worst = errs.iter().cloned().fold(0.0f64, f64::max);
    println!("PARITY {what}: frobenius {frob:.3e} (tol {tol_frob:.1e}), worst element {worst:.3e} (tol {tol_elem:.1e})");
    if frob <= tol_frob && worst <= tol_elem {
        return;
    }
    let bad: Vec<usize> = (0..errs.len()).filter(|&i| errs[i] > tol_elem).collect();
    let mut rows: Vec<usize> = bad.iter().map(|i| i / n).collect();
    let mut cols: Vec<usize> = bad.iter().map(|i| i % n).collect();
    rows.dedup();
    cols.sort_unstable();
    cols.dedup();
    let examples: Vec<String> = bad
        .iter()
        .take(8)
        .map(|&i| format!("({}, {}) got {} want {}", i / n, i % n, got[i], want[i]))
        .collect();
    panic!(
        "{what}: frobenius {frob:.3e} (tol {tol_frob:.1e}), worst element {worst:.3e} (tol {tol_elem:.1e}); \
         {} of {} elements out of tolerance, in {} rows (first: {:?}) and {} columns (first: {:?}); e.g. {}",
        bad.len(),
        errs.len(),
        rows.len(),
        &rows[..rows.len().min(12)],
        cols.len(),
        &cols[..cols.len().min(12)],
        examples.join("; ")
    );
}

fn parity_case<T: HostElem, O: HostElem>(
    gpu: &Gpu,
    stream: &Stream,
    tier: Tier,
    case: &Case,
    seed: u64,
) -> GemmLaunch
where
    T::Dev: GemmInput,
{
    let x = inputs::<T, O>(case, seed);
    let ran = run::<T, O>(gpu, stream, tier, case, &x)
        .unwrap_or_else(|e| panic!("{} {}: {e}", tier.name(), case.describe()));
    let what = format!("{} {}", ran.launch.plan.entry, case.describe());
    check_parity(
        &what,
        tier,
        O::Dev::DTYPE,
        case.n,
        &ran.c,
        &reference(case, &x),
    );
    ran.launch
}

/// Tail shapes for a schedule: off every tile edge, and M = 1.
fn tail_shapes(s: &Schedule) -> Vec<(usize, usize, usize)> {
    match s {
        // Tensor maps need leading dimensions in whole 16-byte chunks, so every side is a
        // multiple of 8 here, off the tile edges; the last shape has more tiles (13 x 12)
        // than the H200 has SMs, so persistent CTAs walk two.
        Schedule::Tma(t) => {
            let (bm, bn, bk) = (t.bm as usize, t.bn as usize, t.bk as usize);
            vec![
                (bm + 8, bn + 24, 3 * bk + 8),
                (8, 2 * bn - 8, 8),
                (bm * 12 + 8, bn * 11 + 8, 2 * bk),
            ]
        }
        Schedule::Wgmma(t) => {
            let (bm, bn, bk) = (t.bm() as usize, t.bn as usize, t.bk as usize);
            vec![
                (bm + 3, bn + 9, 3 * bk + 5),
                (1, 2 * bn - 7, bk - 1),
                (bm * 2, bn, 5 * bk),
            ]
        }
        Schedule::Mma(t) => {
            let (bm, bn, bk) = (t.bm as usize, t.bn as usize, t.bk as usize);
            vec![
                (bm + 3, bn + 9, 3 * bk + 5),
                (1, 2 * bn - 7, bk - 1),
                (bm * 2, bn, 2 * bk),
            ]
        }
        Schedule::Decode(d) => {
            // M = 1, 3, 8 (one n8 tile of rows), 9, 16 (two); N off the block's columns
            // (multiples of 4 for NN); K = 8 (one lane group of one step) and 4104 (a partial
            // last step) with more column blocks than the stagger's 16, 32 or 128 offsets.
            let bn = d.bn as usize;
            vec![
                (1, 2 * bn + 4, 8),
                (3, 131 * bn + 12, 4104),
                (8, 3 * bn - 4, 520),
                (9, bn + 4, 72),
                (16, 4096, 1024),
            ]
        }
        Schedule::Fma(t) => {
            let (bm, bn, bk) = (t.bm as usize, t.bn as usize, t.bk as usize);
            vec![
                (bm + 3, bn + 9, 5 * bk + 3),
                (1, 2 * bn - 7, bk - 1),
                (bm * 2, bn, 2 * bk),
            ]
        }
    }
}

/// Every entry point of `tier`, forced, on its tail shapes; outputs alternate between the
/// input type and f32, and one shape per schedule runs with alpha, beta and bias.
fn parity_every_schedule<T: HostElem, O: HostElem>(gpu: &Gpu, tier: Tier)
where
    T::Dev: GemmInput,
{
    let stream = gpu.stream().unwrap();
    let wgmma = wgmma_route(gpu).unwrap();
    let class = device_facts(gpu, tier).unwrap().smem_class;
    for layout in Layout::ALL {
        for s in plan::schedules(tier, layout, class) {
            if matches!(s, Schedule::Wgmma(_) | Schedule::Tma(_)) && !wgmma {
                println!(
                    "SKIP {} {}: this route holds the wgmma stubs (no sm_90a cubin on this device)",
                    plan::entry_name(tier, layout, &s),
                    gpu.route(&plan::entry_name(tier, layout, &s)).unwrap()
                );
                continue;
            }
            for (i, (m, n, k)) in tail_shapes(&s).into_iter().enumerate() {
                let mut case = Case::new(layout, m, n, k).schedule(s);
                if i == 1 {
                    case = case.scalars(0.75, -0.5, true);
                }
                let seed = (m * 131 + n * 7 + k) as u64;
                let launch = if i % 2 == 0 {
                    parity_case::<T, O>(gpu, &stream, tier, &case, seed)
                } else {
                    parity_case::<T, f32>(gpu, &stream, tier, &case, seed)
                };
                assert_eq!(launch.plan.schedule, s);
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn parity_bf16_every_entry_point() {
    parity_every_schedule::<bf16, bf16>(&gpu(), Tier::Bf16);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn parity_fp16_every_entry_point() {
    parity_every_schedule::<f16, f16>(&gpu(), Tier::Fp16);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn parity_tf32_every_entry_point() {
    parity_every_schedule::<f32, f32>(&gpu(), Tier::Tf32);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn parity_pedantic_every_entry_point() {
    parity_every_schedule::<f32, f32>(&gpu(), Tier::F32Pedantic);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn selector_shapes_take_the_planned_kernel_and_match() {
    // The selector's own choice at sizes that pick each kind of schedule on this device.
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let device = device_facts(&gpu, Tier::Bf16).unwrap();
    for layout in Layout::ALL {
        for (m, n, k) in [
            (2048, 2048, 512),
            (1024, 1024, 512),
            (512, 768, 384),
            (8, 4096, 4096),
            (96, 1024, 1024),
        ] {
            let case = Case::new(layout, m, n, k);
            let launch = parity_case::<bf16, bf16>(&gpu, &stream, Tier::Bf16, &case, 7);
            assert_eq!(
                launch.plan.schedule,
                plan::select(&launch.problem, &device),
                "{}",
                case.describe()
            );
            if m <= 16 && layout != Layout::TN {
                assert!(
                    matches!(launch.plan.schedule, Schedule::Decode(_)),
                    "{}",
                    case.describe()
                );
            }
            // The kernels that wait on the grid dependency (decode, mma.sync) launch as
            // programmatic dependents where sm_90 code runs on a CUDA 12.3+ driver.
            let waits = matches!(launch.plan.schedule, Schedule::Decode(_) | Schedule::Mma(_));
            let route = gpu.route(&launch.plan.entry).unwrap();
            assert_eq!(
                launch.programmatic,
                waits && route.code_cc >= 90 && driver_version() >= PROGRAMMATIC_DRIVER,
                "{}: {route}",
                case.describe()
            );
            // Where the sm_90a cubin runs, the largest shape takes the TMA tile.
            if m == 2048 {
                assert_eq!(
                    matches!(launch.plan.schedule, Schedule::Tma(_)),
                    device.wgmma,
                    "{}",
                    case.describe()
                );
            }
            println!("{}", launch.stamp(&gpu).unwrap());
        }
        parity_case::<f16, f32>(
            &gpu,
            &stream,
            Tier::Fp16,
            &Case::new(layout, 1024, 1024, 512),
            8,
        );
        parity_case::<f32, f32>(
            &gpu,
            &stream,
            Tier::Tf32,
            &Case::new(layout, 1024, 1024, 512),
            9,
        );
        // With the workspace `run` lends, TF32 takes the TMA kernel after the operand pass
        // where the sm_90a cubin runs (K = 512 fills its ring), and mma.sync elsewhere.
        let tf32 = parity_case::<f32, f32>(
            &gpu,
            &stream,
            Tier::Tf32,
            &Case::new(layout, 2048, 2048, 512),
            11,
        );
        assert_eq!(
            (
                matches!(tf32.plan.schedule, Schedule::Tma(_)),
                tf32.plan.prepare.is_some()
            ),
            (device.wgmma, device.wgmma)
        );
        println!("{}", tf32.stamp(&gpu).unwrap());
        parity_case::<f32, f32>(
            &gpu,
            &stream,
            Tier::F32Pedantic,
            &Case::new(layout, 512, 512, 512),
            10,
        );
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn decode_shapes_take_the_decode_kernel() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    for layout in [Layout::NT, Layout::NN] {
        for m in [1, 8, 16] {
            let case = Case::new(layout, m, 4096, 4096);
            let l = parity_case::<bf16, bf16>(&gpu, &stream, Tier::Bf16, &case, m as u64);
            assert!(
                matches!(l.plan.schedule, Schedule::Decode(_)),
                "{}",
                case.describe()
            );
            // The fast launch is live where it can be: sm_90 code on a CUDA 12.3+ driver
            // launches the decode kernel as a programmatic dependent (the driver's version
            // read here, not through the runtime's own answer).
            let route = gpu.route(&l.plan.entry).unwrap();
            let expected = route.code_cc >= 90 && driver_version() >= PROGRAMMATIC_DRIVER;
            assert_eq!(
                gpu.programmatic_launch(),
                driver_version() >= PROGRAMMATIC_DRIVER
            );
            assert_eq!(l.programmatic, expected, "{}: {route}", case.describe());
            let stamp = l.stamp(&gpu).unwrap();
            assert_eq!(
                stamp.contains("launch=programmatic-dependent"),
                expected,
                "{stamp}"
            );
            println!("{stamp}");
            let l = parity_case::<f16, f16>(
                &gpu,
                &stream,
                Tier::Fp16,
                &case.scalars(1.0, 0.5, true),
                m as u64,
            );
            assert!(
                matches!(l.plan.schedule, Schedule::Decode(_)),
                "{}",
                case.describe()
            );
        }
    }
    // NN wide enough for the ring walk, with N and K tails (N % 128 = 8, K % 64 = 40) and
    // alpha, beta and bias.
    for m in [1, 5, 16] {
        let case = Case::new(Layout::NN, m, 28680, 1000).scalars(0.75, 0.5, true);
        let l = parity_case::<bf16, bf16>(&gpu, &stream, Tier::Bf16, &case, m as u64);
        assert!(
            l.plan.entry.ends_with("_nn_decode_n128w8"),
            "{}",
            l.plan.entry
        );
        println!("{}", l.stamp(&gpu).unwrap());
        let l = parity_case::<f16, f32>(&gpu, &stream, Tier::Fp16, &case, m as u64 + 1);
        assert!(
            l.plan.entry.ends_with("_nn_decode_n128w8"),
            "{}",
            l.plan.entry
        );
    }
    // NN with K longer than N: the ring walk with K split over its blocks (N % 128 = 4,
    // K % 64 = 40), the reduce pass applying alpha, beta and bias.
    for m in [1, 5, 16] {
        let case = Case::new(Layout::NN, m, 4100, 8232).scalars(0.75, 0.5, true);
        let l = parity_case::<bf16, bf16>(&gpu, &stream, Tier::Bf16, &case, m as u64 + 7);
        assert!(
            l.plan.entry.ends_with("_nn_decode_n128w8") && l.plan.split.is_some(),
            "{}: {:?}",
            l.plan.entry,
            l.plan.split
        );
        println!("{}", l.stamp(&gpu).unwrap());
        let l = parity_case::<f16, f32>(&gpu, &stream, Tier::Fp16, &case, m as u64 + 8);
        assert!(l.plan.split.is_some(), "{}", l.plan.entry);
    }
}

/// Shifted bases and odd leading dimensions: without a workspace every operand is read
/// element by element; with one, the 16-bit tiers copy operands with an odd leading dimension
/// into it (rows in whole 16-byte chunks) and read the copies with vector access where the
/// pass pays (300 x 500 x 1100), and keep the element path where it does not (70 x 90 x 77;
/// 200 x 300 x 8, one k tile). C is stored as f32 and as the input type.
fn parity_unaligned<T: HostElem>(gpu: &Gpu, tier: Tier)
where
    T::Dev: GemmInput,
{
    let stream = gpu.stream().unwrap();
    let vec = plan::flags::VEC_A | plan::flags::VEC_B;
    let packs = matches!(tier, Tier::Bf16 | Tier::Fp16);
    for layout in Layout::ALL {
        // ld_extra keeps every leading dimension off a 16-byte multiple for 2- and 4-byte
        // elements alike (77 + 3 = 80 would make a bf16 row 160 bytes: aligned).
        for (shift, ld_extra) in [(1, 0), (0, 1), (3, 5)] {
            for (lend_workspace, (m, n, k)) in [false, true]
                .into_iter()
                .flat_map(|l| [(l, (70, 90, 77)), (l, (300, 500, 1100)), (l, (200, 300, 8))])
            {
                let case = Case {
                    shift,
                    ld_extra,
                    align_ld: false,
                    lend_workspace,
                    ..Case::new(layout, m, n, k)
                }
                .scalars(1.0, 1.0, true);
                let launch = parity_case::<T, f32>(gpu, &stream, tier, &case, 5 + shift as u64);
                // C in the input type too (2-byte elements at odd ldc and shifted bases).
                let narrow = parity_case::<T, T>(gpu, &stream, tier, &case, 6 + shift as u64);
                assert_eq!(
                    narrow.plan.schedule,
                    launch.plan.schedule,
                    "{}",
                    case.describe()
                );
                let what = format!("{} lend_workspace={lend_workspace}", case.describe());
                let copied = launch.plan.pack_a.is_some() && launch.plan.pack_b.is_some();
                if lend_workspace && packs && shift == 0 && m == 300 {
                    assert!(copied, "{what}: operands not copied: {launch}");
                    assert_eq!(launch.plan.flags & vec, vec, "{what}: {launch}");
                    println!("PACK {what}: {}", launch.stamp(gpu).unwrap());
                } else if m == 70 || k == 8 {
                    assert!(
                        launch.plan.pack_a.is_none() && launch.plan.pack_b.is_none(),
                        "{what}: {launch}"
                    );
                }
                if !lend_workspace || m == 70 || k == 8 {
                    assert_eq!(
                        launch.plan.flags & vec,
                        0,
                        "{what}: vector access on unaligned operands"
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn unaligned_operands_are_copied_or_read_by_element_and_match() {
    let gpu = gpu();
    parity_unaligned::<bf16>(&gpu, Tier::Bf16);
    parity_unaligned::<f16>(&gpu, Tier::Fp16);
    parity_unaligned::<f32>(&gpu, Tier::Tf32);
    parity_unaligned::<f32>(&gpu, Tier::F32Pedantic);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn k_zero_and_empty_shapes() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    // K = 0: C = beta * C + bias, for every kernel kind.
    for (tier, layout, m) in [
        (Tier::Bf16, Layout::NN, 300),
        (Tier::Bf16, Layout::NT, 4),
        (Tier::Tf32, Layout::TN, 70),
        (Tier::F32Pedantic, Layout::NN, 70),
    ] {
        let case = Case::new(layout, m, 72, 0).scalars(1.0, 0.5, true);
        match tier {
            Tier::Bf16 => parity_case::<bf16, f32>(&gpu, &stream, tier, &case, 1),
            _ => parity_case::<f32, f32>(&gpu, &stream, tier, &case, 1),
        };
    }
    // TF32 on wgmma with K = 0: no operand pass and no workspace, only the epilogue.
    if wgmma_route(&gpu).unwrap() {
        let case = Case::new(Layout::TN, 70, 300, 0)
            .scalars(1.0, 0.5, true)
            .schedule(Schedule::Wgmma(plan::TILE_WGMMA_TF32));
        let launch = parity_case::<f32, f32>(&gpu, &stream, Tier::Tf32, &case, 2);
        assert_eq!(launch.plan.workspace_bytes, 0);
    }
    // M = 0 or N = 0: nothing launched, nothing written.
    for (m, n) in [(0, 64), (64, 0)] {
        let case = Case::new(Layout::NN, m, n, 64);
        assert!(case.ldb() >= 1 && case.ldc() >= 1);
        let x = inputs::<bf16, bf16>(&case, 3);
        let ran = run::<bf16, bf16>(&gpu, &stream, Tier::Bf16, &case, &x).unwrap();
        assert_eq!(ran.launch.plan.grid, 0);
    }
}

// ------------------------------------------------------------------ tf32 rounding

/// f32 -> tf32 as `cvt.rna.tf32.f32` rounds a finite value: to nearest, ties away from zero.
fn rna_tf32(v: f32) -> f32 {
    f32::from_bits(v.to_bits().wrapping_add(0x1000) & !0x1fff)
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn tf32_rounds_operands_to_nearest_on_every_route() {
    // K = 1: C = rna(a) rna(b) exactly (11-bit significands multiply exactly in f32), so the
    // bits show how each kernel rounded its operands. wgmma alone would truncate them; the
    // operand pass must make it round like the mma.sync kernels.
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let mut schedules = vec![Schedule::Mma(plan::TILE_TF32_SMALL)];
    if wgmma_route(&gpu).unwrap() {
        schedules.push(Schedule::Wgmma(plan::TILE_WGMMA_TF32));
        schedules.push(Schedule::Tma(plan::TILE_TMA_TF32));
    }
    for layout in Layout::ALL {
        for &s in &schedules {
            let case = Case::new(layout, 130, 300, 1).schedule(s);
            let x = inputs::<f32, f32>(&case, 17);
            let ran = run::<f32, f32>(&gpu, &stream, Tier::Tf32, &case, &x).unwrap();
            // K = 1: A's stored element (m, 0) or (0, m) is at m * lda or m; likewise B.
            let a_at = |m: usize| {
                x.a[if layout.a_k_major() {
                    m * case.lda()
                } else {
                    m
                }]
            };
            let b_at = |n: usize| {
                x.b[if layout.b_k_major() {
                    n * case.ldb()
                } else {
                    n
                }]
            };
            for i in 0..case.m * case.n {
                let (m, n) = (i / case.n, i % case.n);
                let want = rna_tf32(a_at(m)) * rna_tf32(b_at(n));
                assert_eq!(
                    ran.c[i].to_bits(),
                    want.to_bits(),
                    "{} {}: C ({m}, {n}) = {} but rna(a) rna(b) = {want} (a = {}, b = {})",
                    ran.launch.plan.entry,
                    case.describe(),
                    ran.c[i],
                    a_at(m),
                    b_at(n)
                );
            }
        }
    }
}

// ------------------------------------------------------------------ pedantic bits

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn pedantic_bits_match_the_cpu_for_every_tile_and_grid() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    for layout in Layout::ALL {
        for (m, n, k) in [(1, 1, 1), (131, 70, 37), (200, 300, 513), (64, 128, 16)] {
            let base = Case::new(layout, m, n, k).scalars(1.25, -0.75, true);
            let x = inputs::<f32, f32>(&base, (m + n + k) as u64);
            // The CPU: per output, fmaf over k ascending from +0, then the shared epilogue.
            let acc = pedantic_f32(
                (layout.a_k_major(), layout.b_k_major()),
                m,
                n,
                k,
                &x.a,
                base.lda(),
                &x.b,
                base.ldb(),
            );
            let ldc = base.ldc();
            let want: Vec<u32> = (0..m * n)
                .map(|i| {
                    let old = x.c0[(i / n) * ldc + i % n];
                    epilogue(acc[i], base.alpha, base.beta, old, Some(x.bias[i % n])).to_bits()
                })
                .collect();
            for s in plan::schedules(Tier::F32Pedantic, layout, plan::SmemClass::Kb228) {
                for grid in [None, Some(1), Some(7), Some(1000)] {
                    let case = Case {
                        choice: Choice {
                            schedule: Some(s),
                            grid,
                            splits: None,
                        },
                        ..base
                    };
                    let ran = run::<f32, f32>(&gpu, &stream, Tier::F32Pedantic, &case, &x).unwrap();
                    let got: Vec<u32> = ran.c.iter().map(|v| v.to_bits()).collect();
                    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                        panic!(
                            "{} grid {:?} {}: C ({}, {}) is {:#010x}, the CPU's fmaf chain gives {:#010x}",
                            ran.launch.plan.entry,
                            grid,
                            case.describe(),
                            i / n,
                            i % n,
                            got[i],
                            want[i]
                        );
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------------ digests

/// The warp-specialized TMA kernel sums K in the wgmma kernel's order and shares its
/// epilogue: forced on the same inputs (tails in M, N and K, alpha, beta and a bias, 16-bit
/// and f32 outputs; TF32 after its operand pass), the two give the same bits, in every layout.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn tma_and_wgmma_kernels_give_the_same_bits() {
    fn both<T: HostElem, O: HostElem>(gpu: &Gpu, stream: &Stream, tier: Tier, layout: Layout)
    where
        T::Dev: GemmInput,
    {
        // Plain scalars into the input type take the staged epilogue (TMA stores clipping the
        // tails), into f32 the short store on whole tiles; the others the general one.
        for case in [
            Case::new(layout, 304, 520, 200),
            Case::new(layout, 304, 520, 200).scalars(0.75, -0.5, true),
        ] {
            same_bits::<T, O>(gpu, stream, tier, case);
        }
    }
    fn same_bits<T: HostElem, O: HostElem>(gpu: &Gpu, stream: &Stream, tier: Tier, case: Case)
    where
        T::Dev: GemmInput,
    {
        let x = inputs::<T, O>(&case, fnv1a64(case.describe().as_bytes()));
        let (tma_tile, wgmma_tile) = match tier {
            Tier::Tf32 => (plan::TILE_TMA_TF32, plan::TILE_WGMMA_TF32),
            _ => (plan::TILE_TMA, plan::TILE_WGMMA),
        };
        let tma = run::<T, O>(
            gpu,
            stream,
            tier,
            &case.schedule(Schedule::Tma(tma_tile)),
            &x,
        )
        .unwrap();
        let wgmma = run::<T, O>(
            gpu,
            stream,
            tier,
            &case.schedule(Schedule::Wgmma(wgmma_tile)),
            &x,
        )
        .unwrap();
        assert_eq!(tma.launch.plan.schedule, Schedule::Tma(tma_tile));
        // The plain call into the input type leaves through the staging and TMA stores.
        let plain = case.alpha == 1.0 && case.beta == 0.0 && !case.bias && O::NAME == T::NAME;
        let staged = tma.launch.plan.flags & cubins::params::CUBINS_GEMM_TMA_C != 0;
        assert_eq!(staged, plain, "{tier:?} {}: TMA_C", case.describe());
        let (a, b) = (O::bytes(&tma.c), O::bytes(&wgmma.c));
        let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        assert_eq!(
            differing,
            0,
            "{tier:?} {}: {differing} of {} bytes differ",
            case.describe(),
            a.len()
        );
        println!(
            "BITS {tier:?} {} out {}: {} bytes identical on {} and {}; {}",
            case.describe(),
            O::NAME,
            a.len(),
            tma.launch.plan.entry,
            wgmma.launch.plan.entry,
            tma.launch.stamp(gpu).unwrap()
        );
    }
    let gpu = gpu();
    if !wgmma_route(&gpu).unwrap() {
        println!("SKIP: this route holds the TMA and wgmma stubs (no sm_90a cubin on this device)");
        return;
    }
    let stream = gpu.stream().unwrap();
    for layout in Layout::ALL {
        both::<bf16, bf16>(&gpu, &stream, Tier::Bf16, layout);
        both::<bf16, f32>(&gpu, &stream, Tier::Bf16, layout);
        both::<f16, f16>(&gpu, &stream, Tier::Fp16, layout);
        both::<f32, f32>(&gpu, &stream, Tier::Tf32, layout);
    }
}

const DIGEST_FILE: &str = "tests/digests/gemm.txt";

/// The wgmma tile of `tier` forced on a shape off its tile in M, N and K, with a bias
/// (digests and repeat runs; only where the route runs it).
fn wgmma_tail_case(tier: Tier, layout: Layout) -> Case {
    let tile = if tier == Tier::Tf32 {
        plan::TILE_WGMMA_TF32
    } else {
        plan::TILE_WGMMA
    };
    Case::new(layout, 300, 520, 200)
        .scalars(1.0, 0.0, true)
        .schedule(Schedule::Wgmma(tile))
}

/// The digest cases: per tier, every layout on a full-tile shape, a tail shape and (16-bit)
/// a decode shape, with the selector's schedule. Each yields (key, C bytes).
fn digest_outputs(gpu: &Gpu) -> Vec<(String, Vec<u8>)> {
    fn one<T: HostElem, O: HostElem>(
        gpu: &Gpu,
        stream: &Stream,
        tier: Tier,
        case: &Case,
    ) -> (String, Vec<u8>)
    where
        T::Dev: GemmInput,
    {
        let seed = fnv1a64(case.describe().as_bytes());
        let x = inputs::<T, O>(case, seed);
        let ran = run::<T, O>(gpu, stream, tier, case, &x).unwrap();
        let arch = gpu.route(&ran.launch.plan.entry).unwrap().arch;
        // One TF32 wgmma entry point serves every layout (after the operand pass): the key
        // names the caller's layout too.
        let entry = match ran.launch.plan.prepare {
            Some(_) => format!("{}({})", ran.launch.plan.entry, case.layout.name()),
            None => ran.launch.plan.entry.clone(),
        };
        // A split's slice count depends on the SMs, and sets the sum order: the key names it.
        let split = match ran.launch.plan.split {
            Some(s) => format!("+split{}", s.splits),
            None => String::new(),
        };
        let key = format!(
            "{entry}@{arch}:{}x{}x{}/{}{}{split}",
            case.m,
            case.n,
            case.k,
            O::NAME,
            if case.bias { "+bias" } else { "" }
        );
        (key, O::bytes(&ran.c))
    }
    let stream = gpu.stream().unwrap();
    let mut out = Vec::new();
    for layout in Layout::ALL {
        let shapes = [(256, 512, 256), (77, 190, 131), (1, 64, 40)];
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            let case = Case::new(layout, m, n, k).scalars(1.0, 0.0, i == 1);
            out.push(one::<bf16, bf16>(gpu, &stream, Tier::Bf16, &case));
            out.push(one::<bf16, f32>(gpu, &stream, Tier::Bf16, &case));
            out.push(one::<f16, f16>(gpu, &stream, Tier::Fp16, &case));
            out.push(one::<f32, f32>(gpu, &stream, Tier::Tf32, &case));
            out.push(one::<f32, f32>(gpu, &stream, Tier::F32Pedantic, &case));
        }
        if layout != Layout::TN {
            let case = Case::new(layout, 16, 512, 1024);
            out.push(one::<bf16, bf16>(gpu, &stream, Tier::Bf16, &case));
            out.push(one::<f16, f16>(gpu, &stream, Tier::Fp16, &case));
        }
        // NN decode wide enough for the ring walk (ceil(N / 128) >= the SMs of any Hopper).
        if layout == Layout::NN {
            let case = Case::new(layout, 8, 28672, 512).scalars(1.0, 0.0, true);
            out.push(one::<bf16, bf16>(gpu, &stream, Tier::Bf16, &case));
            out.push(one::<f16, f16>(gpu, &stream, Tier::Fp16, &case));
            // K longer than N: the ring walk split over K, then the reduce pass.
            let case = Case::new(layout, 8, 1024, 8192).scalars(1.0, 0.0, true);
            out.push(one::<bf16, bf16>(gpu, &stream, Tier::Bf16, &case));
            out.push(one::<f16, f16>(gpu, &stream, Tier::Fp16, &case));
        }
        // The wgmma tile, forced on a tail shape, where the route runs it.
        if wgmma_route(gpu).unwrap() {
            let case = wgmma_tail_case(Tier::Bf16, layout);
            out.push(one::<bf16, bf16>(gpu, &stream, Tier::Bf16, &case));
            out.push(one::<f16, f32>(gpu, &stream, Tier::Fp16, &case));
            let case = wgmma_tail_case(Tier::Tf32, layout);
            out.push(one::<f32, f32>(gpu, &stream, Tier::Tf32, &case));
            // TF32 on the TMA tile after the same pass: with the bias (stores from the
            // registers) and plain (staged, TMA stores of f32).
            let tma = Schedule::Tma(plan::TILE_TMA_TF32);
            for case in [
                case.schedule(tma),
                Case::new(layout, 300, 520, 200).schedule(tma),
            ] {
                out.push(one::<f32, f32>(gpu, &stream, Tier::Tf32, &case));
            }
        }
    }
    out
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn digests_match_the_record() {
    let gpu = gpu();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DIGEST_FILE);
    // The bundle runs the test binary away from the source tree: the file is compiled in.
    const TEXT: &str = include_str!("digests/gemm.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| TEXT.to_string());
    let file = DigestFile::parse(&text).unwrap_or_else(|e| panic!("{DIGEST_FILE}: {e}"));
    let mut errors = Vec::new();
    for (key, bytes) in digest_outputs(&gpu) {
        if let Err(e) = file.check(&key, fnv1a64(&bytes), DIGEST_FILE) {
            errors.push(e);
        }
    }
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

/// Prints the digest lines to record in tests/digests/gemm.txt (run with `--ignored`; the
/// recording needs a GPU: each line is one output of one entry point on one arch).
#[test]
#[ignore = "recorder: prints HASH lines for tests/digests/gemm.txt; needs a GPU"]
fn record_gemm_digests() {
    let gpu = gpu();
    for (key, bytes) in digest_outputs(&gpu) {
        println!("{}", hash_line(&key, fnv1a64(&bytes)));
    }
}

// ------------------------------------------------------------------ repeat and graph replay

/// Runs a GEMM eagerly twice and as a CUDA graph replayed twice, C poisoned before each:
/// all give the same bits.
fn repeat_and_graph<T: HostElem, O: HostElem>(gpu: &Gpu, tier: Tier, case: &Case)
where
    T::Dev: GemmInput,
{
    let stream = gpu.stream().unwrap();
    let x = inputs::<T, O>(case, 99);
    let a = Guarded::new(&x.a, 0);
    let b = Guarded::new(&x.b, 0);
    let mut c = Guarded::new(&x.c0, 0);
    let bias = Guarded::<f32>::new(&x.bias, 0);
    let desc = GemmDesc {
        choice: case.choice,
        ..GemmDesc::new(case.layout, case.m, case.n, case.k)
            .with_scalars(case.alpha, case.beta)
            .with_leading_dims(case.lda(), case.ldb(), case.ldc())
    };
    let ws_len = gemm_workspace_len(gpu, tier, &desc).unwrap();
    let workspace = Guarded::<f32>::poisoned(ws_len.max(1), 0);
    let (av, bv, cv, biasv, wv) = (a.view(), b.view(), c.view(), bias.view(), workspace.view());
    let enqueue = |s: &Stream| -> Result<(), Error> {
        let launch = gemm_with_workspace(
            gpu,
            s,
            &desc.with_tier(tier),
            &av,
            &bv,
            &mut cv.index(..),
            Some(&biasv),
            &mut wv.index(..),
        )?;
        if let Some(forced) = case.choice.schedule {
            assert_eq!(launch.plan.schedule, forced);
        }
        Ok(())
    };
    let what = format!("{} {}", tier.name(), case.describe());
    let mut runs = Vec::new();
    for mode in ["eager", "eager again", "graph replay"] {
        c.upload(&x.c0);
        if mode == "graph replay" {
            let graph = driver::GraphExec::capture(stream.as_inner(), || {
                enqueue(&stream).map_err(|e| e.to_string())
            })
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            graph.launch(stream.as_inner()).unwrap();
            graph.launch(stream.as_inner()).unwrap();
        } else {
            enqueue(&stream).unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        stream.synchronize().unwrap();
        runs.push(O::bytes(&c.read(&what)));
    }
    assert!(
        runs[1] == runs[0],
        "{what}: a second eager run gave other bits"
    );
    assert!(
        runs[2] == runs[0],
        "{what}: CUDA-graph replay gave other bits"
    );
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn repeat_runs_and_graph_replay_give_the_same_bits() {
    let gpu = gpu();
    for layout in Layout::ALL {
        let case = Case::new(layout, 300, 260, 200).scalars(1.0, 0.0, true);
        repeat_and_graph::<bf16, bf16>(&gpu, Tier::Bf16, &case);
        repeat_and_graph::<f16, f32>(&gpu, Tier::Fp16, &case);
        repeat_and_graph::<f32, f32>(&gpu, Tier::Tf32, &case);
        repeat_and_graph::<f32, f32>(&gpu, Tier::F32Pedantic, &case);
    }
    if wgmma_route(&gpu).unwrap() {
        for layout in Layout::ALL {
            repeat_and_graph::<bf16, bf16>(&gpu, Tier::Bf16, &wgmma_tail_case(Tier::Bf16, layout));
            repeat_and_graph::<f32, f32>(&gpu, Tier::Tf32, &wgmma_tail_case(Tier::Tf32, layout));
        }
    }
    // The decode kernels' shared-memory reduction too: each variant the selector takes
    // (NT and NN, M = 1 and 16 at N = 4096; N = 8192 takes the 8-warp kernel, NN at N = 28672
    // the ring walk; NN 8 x 4096 x 16384 the ring walk split over K).
    for layout in [Layout::NT, Layout::NN] {
        for (m, n) in [(1, 4096), (16, 4096), (1, 8192), (16, 28672)] {
            repeat_and_graph::<bf16, bf16>(&gpu, Tier::Bf16, &Case::new(layout, m, n, 4096));
        }
    }
    repeat_and_graph::<bf16, bf16>(&gpu, Tier::Bf16, &Case::new(Layout::NN, 8, 4096, 16384));
}

/// Split K (small M x N, long K): the selector splits where the workspace is lent, in every
/// layout and output type, with alpha, beta and bias, on aligned and element-path operands;
/// forced splits on the TF32 mma.sync tile and past the k tiles; each against float64, and
/// repeat runs and graph replay bit-identical (the planes are summed in slice order).
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn split_k_matches_float64_and_repeats_bit_for_bit() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let split_of = |l: &GemmLaunch, what: &str| {
        let split = l
            .plan
            .split
            .unwrap_or_else(|| panic!("{what}: not split: {}", l));
        println!("SPLIT {what}: {l}");
        split
    };
    for layout in Layout::ALL {
        for (i, (m, n, k)) in [(41, 721, 1923), (2, 134, 5733), (100, 300, 8000)]
            .into_iter()
            .enumerate()
        {
            let mut case = Case::new(layout, m, n, k);
            if i == 1 {
                case = Case {
                    ld_extra: 3,
                    align_ld: false,
                    ..case.scalars(0.75, -0.5, true)
                };
            }
            let seed = (m * 31 + n * 7 + k) as u64;
            let l = parity_case::<bf16, bf16>(&gpu, &stream, Tier::Bf16, &case, seed);
            split_of(&l, &case.describe());
            let l = parity_case::<bf16, f32>(
                &gpu,
                &stream,
                Tier::Bf16,
                &case.scalars(1.5, 0.25, true),
                seed,
            );
            split_of(&l, &case.describe());
            let l = parity_case::<f16, f16>(&gpu, &stream, Tier::Fp16, &case, seed);
            split_of(&l, &case.describe());
        }
    }
    let forced = |case: Case, schedule, splits| Case {
        choice: Choice {
            schedule: Some(schedule),
            grid: None,
            splits: Some(splits),
        },
        ..case
    };
    let tf32 = forced(
        Case::new(Layout::TN, 77, 190, 1100),
        Schedule::Mma(plan::TILE_TF32_SMALL),
        5,
    );
    let l = parity_case::<f32, f32>(&gpu, &stream, Tier::Tf32, &tf32.scalars(1.0, 0.5, true), 7);
    assert_eq!(split_of(&l, &tf32.describe()).splits, 5);
    let many = forced(
        Case::new(Layout::NT, 33, 65, 1000),
        Schedule::Mma(plan::TILE_SMALL),
        32,
    );
    let l = parity_case::<bf16, bf16>(&gpu, &stream, Tier::Bf16, &many, 8);
    assert_eq!(
        split_of(&l, &many.describe()).splits,
        1000usize.div_ceil(64) as u32
    );

    for layout in Layout::ALL {
        repeat_and_graph::<bf16, bf16>(&gpu, Tier::Bf16, &Case::new(layout, 41, 721, 1923));
        repeat_and_graph::<f16, f32>(&gpu, Tier::Fp16, &Case::new(layout, 2, 134, 5733));
    }
}

// ------------------------------------------------------------------ refusals

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn bad_input_is_refused_before_launch() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    // A and B hold more than a 64 x 64 problem needs, so a short C is what fails.
    let a = gpu_common::uploaded(&vec![Bf16::default(); 128 * 128]).unwrap();
    let b = gpu_common::uploaded(&vec![Bf16::default(); 128 * 128]).unwrap();
    let mut c = gpu_common::uploaded(&vec![Bf16::default(); 64 * 64]).unwrap();
    let mut c16 = gpu_common::uploaded(&vec![F16::default(); 64 * 64]).unwrap();
    let f = gpu_common::uploaded(&vec![0f32; 64 * 64]).unwrap();
    let mut fc = gpu_common::uploaded(&vec![0f32; 64 * 64]).unwrap();
    let d = GemmDesc::new(Layout::NN, 64, 64, 64);
    let refused = |r: Result<GemmLaunch, Error>, what: &str, needle: &str| {
        let e = r.err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(e.to_string().contains(needle), "{what}: {e}");
    };
    let short = a.index(..64 * 63);
    assert!(gemm_plan(&gpu, &stream, &d, &a, &b, &c, None).is_ok());
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_tier(Tier::Bf16),
            &short,
            &b,
            &mut c,
            None,
        ),
        "short A",
        "`a`",
    );
    refused(
        gemm(
            &gpu,
            &stream,
            &GemmDesc::new(Layout::NN, 65, 64, 64),
            &a,
            &b,
            &mut c,
            None,
        ),
        "short C",
        "`c`",
    );
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_leading_dims(63, 64, 64),
            &a,
            &b,
            &mut c,
            None,
        ),
        "lda < K",
        "leading dimensions",
    );
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_tier(Tier::Fp16),
            &a,
            &b,
            &mut c,
            None,
        ),
        "bf16 inputs to the fp16 tier",
        "tier's type",
    );
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_tier(Tier::Bf16),
            &a,
            &b,
            &mut c16,
            None,
        ),
        "f16 output of the bf16 tier",
        "output of the input type",
    );
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_tier(Tier::Tf32),
            &f,
            &f,
            &mut c16,
            None,
        ),
        "f16 output of tf32",
        "output of the input type",
    );
    let short_bias = f.index(..63);
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_tier(Tier::Tf32),
            &f,
            &f,
            &mut fc,
            Some(&short_bias),
        ),
        "short bias",
        "`bias`",
    );
    // C overlapping an input.
    let (fa, mut fc_alias) = (f.index(..), f.index(..));
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_tier(Tier::Tf32),
            &fa,
            &f,
            &mut fc_alias,
            None,
        ),
        "C = A",
        "overlap",
    );
    refused(
        gemm(
            &gpu,
            &stream,
            &GemmDesc::new(Layout::TN, 8, 64, 64)
                .with_schedule(Schedule::Decode(plan::DECODE_NT_N32W8)),
            &a,
            &b,
            &mut c,
            None,
        ),
        "decode on TN",
        "forced schedule",
    );
    refused(
        gemm(
            &gpu,
            &stream,
            &d.with_grid(3).with_tier(Tier::Tf32),
            &f,
            &f,
            &mut fc,
            None,
        ),
        "grid on tf32",
        "forced schedule",
    );
    // TF32 on wgmma: off the sm_90a route there is none to size a workspace for; on it, a
    // workspace short by one float, or one overlapping an operand.
    let wgmma_tf32 = d.with_schedule(Schedule::Wgmma(plan::TILE_WGMMA_TF32));
    if !wgmma_route(&gpu).unwrap() {
        let e = gemm_workspace_len(&gpu, Tier::Tf32, &wgmma_tf32).unwrap_err();
        assert!(e.to_string().contains("forced schedule"), "{e}");
        return;
    }
    let need = gemm_workspace_len(&gpu, Tier::Tf32, &wgmma_tf32).unwrap();
    assert_eq!(need, (64 + 64) * 64);
    let ws = gpu_common::uploaded(&vec![0f32; 2 * need]).unwrap();
    refused(
        gemm_with_workspace(
            &gpu,
            &stream,
            &wgmma_tf32.with_tier(Tier::Tf32),
            &f,
            &f,
            &mut fc,
            None,
            &mut ws.index(..need - 1),
        ),
        "short workspace",
        "forced schedule",
    );
    let a_in_ws = ws.index(..64 * 64);
    refused(
        gemm_with_workspace(
            &gpu,
            &stream,
            &wgmma_tf32.with_tier(Tier::Tf32),
            &a_in_ws,
            &f,
            &mut fc,
            None,
            &mut ws.index(..),
        ),
        "workspace over A",
        "overlap",
    );
}
