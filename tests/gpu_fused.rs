//! GPU gates of the fused kernels (RMSNorm, LayerNorm, softmax, SwiGLU, RoPE;
//! docs/kernels/fused.md; LayerNorm's in `gpu_fused/layernorm.rs`):
//!
//! - parity with the float64 references (tests/common/reference.rs) within the per-dtype
//!   tolerance of tests/common/data.rs, over edge shapes (row length 1, 7, 4095, 4096,
//!   4097; one row; many rows), rows longer than a resident tile, and bases that are not
//!   16-byte aligned (all tensors shifted alike: the vector walk with a head; one tensor
//!   shifted: the elementwise walk);
//! - poisoned outputs (all bits set) fully overwritten, guard zones around every buffer
//!   untouched;
//! - FNV-1a digests at fixed shapes against tests/digests/fused.txt (a missing key fails);
//! - repeat runs and CUDA-graph replay bit-identical to the first run;
//! - bad input refused with an `Err` before launch.
//!
//! `#[ignore]`d: run through the GPU bundle, which passes `--include-ignored`.
#![cfg(feature = "cust")]

mod common;
#[allow(dead_code)]
#[path = "../benches/harness/gpu/driver.rs"]
mod driver;
mod gpu_common;
#[path = "gpu_common/guarded.rs"]
mod guarded;
#[path = "gpu_fused/layernorm.rs"]
mod layernorm;

use common::data::{assert_close, to_f64, Elem, SplitMix64};
use common::digest::{fnv1a64, hash_line, DigestFile};
use common::reference;
use cubins::ops::rmsnorm::{
    fwd_cluster_geometry, rmsnorm, rmsnorm_backward, rmsnorm_backward_plan, rmsnorm_residual,
    rmsnorm_residual_into, runs_clusters, BwdEntry, RmsNormBwdOptions, RmsNormOptions,
};
use cubins::ops::rope::{rope, Pairing, RopeShape};
use cubins::ops::softmax::{softmax, softmax_backward};
use cubins::ops::swiglu::{swiglu, swiglu_interleaved};
use cubins::ops::{Launched, Threads};
use cubins::runtime::launchers::Dtype;
use cubins::runtime::{Bf16, DeviceWrite, Error, Gpu, RoutePolicy};
use cust::stream::Stream;
use gpu_common::{driver_version, gpu, gpu_with, PROGRAMMATIC_DRIVER};
use guarded::{DeviceElem, Guarded};
use half::{bf16, f16};

// ------------------------------------------------------------------ device buffers

/// A host storage type whose device type every fused launcher takes.
trait GpuElem: DeviceElem<Dev: Dtype> {}
impl<T: DeviceElem<Dev: Dtype>> GpuElem for T {}

fn sync(stream: &Stream) {
    stream.synchronize().expect("the kernel ran to completion");
}

// ------------------------------------------------------------------ cases

/// Where a case puts its tensors: every input and output shifted by `shift` elements, and
/// the first output by `out_shift` more (breaking the shared alignment: elementwise walk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    shift: usize,
    out_shift: usize,
    threads: Threads,
}

const ALIGNED: Layout = Layout {
    shift: 0,
    out_shift: 0,
    threads: Threads::Auto,
};

impl Layout {
    fn describe(&self) -> String {
        format!(
            "shift={} out_shift={} threads={:?}",
            self.shift, self.out_shift, self.threads
        )
    }
}

/// Row shapes every row op is checked on: row lengths 1, 7, 4095, 4096, 4097; one row and
/// many rows; a long row (streamed for f32 forward and every backward); short rows that
/// share warps.
const ROW_SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (3, 7),
    (1, 4096),
    (5, 4095),
    (2, 4097),
    (67, 512),
    (1000, 33),
    (2, 40000),
    // Rows whose RMSNorm backward block would hold its SM alone on sm_90 (bf16 at 32768, f32
    // at 16384): the cluster kernel takes them there (more in CLUSTER_SHAPES_*).
    (5, 32768),
    (3, 16384),
    // Rows the forward norms and softmax spread up to a wave of threads (1024 x 2048 bf16: 128
    // threads a row; 4000 x 768: 32, four rows a block).
    (1024, 2048),
    (4000, 768),
    // The forward norms' warp walk (16-bit, aligned rows of whole chunks): 49 chunks over the
    // 32 threads the spread gives 50 rows, so 17 threads hold a second chunk.
    (50, 392),
    // Too many rows to spread (a 16-thread budget on 132 SMs): 66 chunks take the warp walk
    // over 16 threads for RMSNorm, over 32 for LayerNorm (widened from the selector's 16), the
    // short walk over 64 for the residual forms.
    WARP_WIDENED,
];

/// Rows of whole chunks that LayerNorm's forward widens to the warp walk's 32 threads and the
/// residual forms to the short walk's 64.
const WARP_WIDENED: (usize, usize) = (9000, 528);

/// Layouts every row op is checked on, at (3, 4097) and (4, 4096).
const LAYOUTS: &[Layout] = &[
    Layout {
        shift: 1,
        out_shift: 0,
        threads: Threads::Auto,
    },
    Layout {
        shift: 3,
        out_shift: 0,
        threads: Threads::Auto,
    },
    Layout {
        shift: 0,
        out_shift: 1,
        threads: Threads::Auto,
    },
    // 32 threads x 8 chunks hold 2048 bf16 columns: 4097 is streamed in tiles.
    Layout {
        shift: 0,
        out_shift: 0,
        threads: Threads::PerRow(32),
    },
    Layout {
        shift: 1,
        out_shift: 0,
        threads: Threads::PerRow(64),
    },
];

fn for_each_case(mut f: impl FnMut((usize, usize), Layout)) {
    for &shape in ROW_SHAPES {
        f(shape, ALIGNED);
    }
    for &layout in LAYOUTS {
        for shape in [(3, 4097), (4, 4096)] {
            f(shape, layout);
        }
    }
}

fn seed(tag: &str, dtype: &str, rows: usize, cols: usize) -> u64 {
    fnv1a64(format!("{tag}/{dtype}/{rows}x{cols}").as_bytes())
}

/// One output of a case: its name, elements, float64 reference, row length, and the
/// per-row error scale where the row's max |reference| is not the right one.
struct Output<T> {
    name: &'static str,
    got: Vec<T>,
    want: Vec<f64>,
    cols: usize,
    row_scale: Option<Vec<f64>>,
}

fn out<T>(name: &'static str, got: Vec<T>, want: Vec<f64>, cols: usize) -> Output<T> {
    Output {
        name,
        got,
        want,
        cols,
        row_scale: None,
    }
}

/// What a case produced: its outputs and the launches.
struct Outcome<T> {
    outputs: Vec<Output<T>>,
    launched: Vec<Launched>,
}

impl<T: GpuElem> Outcome<T> {
    fn assert_close(&self, what: &str) {
        for o in &self.outputs {
            assert_close::<T>(
                &format!("{what} {}", o.name),
                &o.got,
                &o.want,
                o.cols,
                o.row_scale.as_deref(),
            );
        }
    }

    /// A second run of the same case gave the same bits in every output.
    fn assert_same_bits(&self, again: &Outcome<T>, what: &str) {
        for (a, b) in self.outputs.iter().zip(&again.outputs) {
            assert!(
                T::bytes(&a.got) == T::bytes(&b.got),
                "{what}: {} differs between two runs",
                a.name
            );
        }
    }

    fn digest(&self) -> u64 {
        fnv1a64(
            &self
                .outputs
                .iter()
                .flat_map(|o| T::bytes(&o.got))
                .collect::<Vec<u8>>(),
        )
    }
}

const EPS: f32 = 1e-6;

fn rmsnorm_case<T: GpuElem>(gpu: &Gpu, (rows, cols): (usize, usize), layout: Layout) -> Outcome<T> {
    let mut rng = SplitMix64::new(seed("rmsnorm", T::NAME, rows, cols));
    let x: Vec<T> = rng.fill(rows * cols, -2.0, 2.0);
    let w: Vec<T> = rng.fill(cols, 0.5, 1.5);
    let (xd, wd) = (
        Guarded::new(&x, layout.shift),
        Guarded::new(&w, layout.shift),
    );
    let yd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let stream = gpu.stream().unwrap();
    let opts = RmsNormOptions {
        eps: EPS,
        threads: layout.threads,
    };
    let launched = rmsnorm(
        gpu,
        &stream,
        &xd.view(),
        &wd.view(),
        &mut yd.view(),
        rows,
        cols,
        &opts,
    )
    .unwrap_or_else(|e| panic!("rmsnorm {rows}x{cols} {}: {e}", layout.describe()));
    sync(&stream);
    let want = reference::rmsnorm(&to_f64(&x), &to_f64(&w), cols, f64::from(EPS));
    Outcome {
        outputs: vec![out("y", yd.output("rmsnorm y"), want, cols)],
        launched: vec![launched],
    }
}

/// The fused residual add; `in_place`: residual updated in its own buffer.
fn rmsnorm_residual_case<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
    in_place: bool,
) -> Outcome<T> {
    let mut rng = SplitMix64::new(seed("rmsnorm_residual", T::NAME, rows, cols));
    let x: Vec<T> = rng.fill(rows * cols, -2.0, 2.0);
    let res: Vec<T> = rng.fill(rows * cols, -2.0, 2.0);
    let w: Vec<T> = rng.fill(cols, 0.5, 1.5);
    let (xd, wd) = (
        Guarded::new(&x, layout.shift),
        Guarded::new(&w, layout.shift),
    );
    let yd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let stream = gpu.stream().unwrap();
    let opts = RmsNormOptions {
        eps: EPS,
        threads: layout.threads,
    };
    let (launched, res_out) = if in_place {
        let rd = Guarded::new(&res, layout.shift);
        let l = rmsnorm_residual(
            gpu,
            &stream,
            &xd.view(),
            &mut rd.view(),
            &wd.view(),
            &mut yd.view(),
            rows,
            cols,
            &opts,
        );
        (l, rd)
    } else {
        let rin = Guarded::new(&res, layout.shift);
        let rout = Guarded::<T>::poisoned(rows * cols, layout.shift);
        let l = rmsnorm_residual_into(
            gpu,
            &stream,
            &xd.view(),
            &rin.view(),
            &mut rout.view(),
            &wd.view(),
            &mut yd.view(),
            rows,
            cols,
            &opts,
        );
        sync(&stream);
        assert_eq!(rin.read("residual_in"), res, "residual_in is read-only");
        (l, rout)
    };
    let launched = launched
        .unwrap_or_else(|e| panic!("rmsnorm_residual {rows}x{cols} {}: {e}", layout.describe()));
    sync(&stream);
    let h = reference::residual_add(&to_f64(&x), &to_f64(&res), common::data::round_to::<T>);
    let y = reference::rmsnorm(&h, &to_f64(&w), cols, f64::from(EPS));
    Outcome {
        outputs: vec![
            out("residual", res_out.output("residual out"), h, cols),
            out("y", yd.output("rmsnorm_residual y"), y, cols),
        ],
        launched: vec![launched],
    }
}

fn rmsnorm_backward_case<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
    blocks: Option<u32>,
) -> Outcome<T> {
    let mut rng = SplitMix64::new(seed("rmsnorm_bwd", T::NAME, rows, cols));
    let x: Vec<T> = rng.fill(rows * cols, -2.0, 2.0);
    let w: Vec<T> = rng.fill(cols, 0.5, 1.5);
    let dy: Vec<T> = rng.fill(rows * cols, -1.0, 1.0);
    let (xd, wd, dyd) = (
        Guarded::new(&x, layout.shift),
        Guarded::new(&w, layout.shift),
        Guarded::new(&dy, layout.shift),
    );
    let dxd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let dwd = Guarded::<T>::poisoned(cols, layout.shift);
    let opts = RmsNormBwdOptions {
        eps: EPS,
        threads: layout.threads,
        blocks,
    };
    let plan = rmsnorm_backward_plan::<T::Dev>(gpu, rows, cols, &opts).unwrap();
    let ws = gpu_common::uploaded(&vec![f32::NAN; plan.workspace_len()]).unwrap();
    let stream = gpu.stream().unwrap();
    let launched = rmsnorm_backward(
        gpu,
        &stream,
        &xd.view(),
        &wd.view(),
        &dyd.view(),
        &mut dxd.view(),
        &mut dwd.view(),
        &mut ws.index(..),
        rows,
        cols,
        &opts,
    )
    .unwrap_or_else(|e| panic!("rmsnorm_backward {rows}x{cols} {}: {e}", layout.describe()));
    sync(&stream);
    let want =
        reference::rmsnorm_backward(&to_f64(&x), &to_f64(&w), &to_f64(&dy), cols, f64::from(EPS));
    Outcome {
        outputs: vec![
            Output {
                row_scale: Some(want.dx_term_scale),
                ..out("dx", dxd.output("dx"), want.dx, cols)
            },
            out("dw", dwd.output("dw"), want.dw, cols),
        ],
        launched: launched.iter().cloned().collect(),
    }
}

fn softmax_case<T: GpuElem>(gpu: &Gpu, (rows, cols): (usize, usize), layout: Layout) -> Outcome<T> {
    let mut rng = SplitMix64::new(seed("softmax", T::NAME, rows, cols));
    let x: Vec<T> = rng.fill(rows * cols, -8.0, 8.0);
    let xd = Guarded::new(&x, layout.shift);
    let yd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let stream = gpu.stream().unwrap();
    let launched = softmax(
        gpu,
        &stream,
        &xd.view(),
        &mut yd.view(),
        rows,
        cols,
        layout.threads,
    )
    .unwrap_or_else(|e| panic!("softmax {rows}x{cols} {}: {e}", layout.describe()));
    sync(&stream);
    let want = reference::softmax(&to_f64(&x), cols);
    Outcome {
        outputs: vec![out("y", yd.output("softmax y"), want, cols)],
        launched: vec![launched],
    }
}

fn softmax_backward_case<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
) -> Outcome<T> {
    let mut rng = SplitMix64::new(seed("softmax_bwd", T::NAME, rows, cols));
    // y: a stored softmax output (the backward's input), dy: random.
    let logits: Vec<f64> = (0..rows * cols).map(|_| rng.uniform(-4.0, 4.0)).collect();
    let y: Vec<T> = reference::softmax(&logits, cols)
        .into_iter()
        .map(T::from_f64)
        .collect();
    let dy: Vec<T> = rng.fill(rows * cols, -1.0, 1.0);
    let (yd, dyd) = (
        Guarded::new(&y, layout.shift),
        Guarded::new(&dy, layout.shift),
    );
    let dxd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let stream = gpu.stream().unwrap();
    let launched = softmax_backward(
        gpu,
        &stream,
        &yd.view(),
        &dyd.view(),
        &mut dxd.view(),
        rows,
        cols,
        layout.threads,
    )
    .unwrap_or_else(|e| panic!("softmax_backward {rows}x{cols} {}: {e}", layout.describe()));
    sync(&stream);
    let want = reference::softmax_backward(&to_f64(&y), &to_f64(&dy), cols);
    Outcome {
        outputs: vec![out("dx", dxd.output("softmax dx"), want, cols)],
        launched: vec![launched],
    }
}

fn swiglu_case<T: GpuElem>(gpu: &Gpu, (rows, cols): (usize, usize), layout: Layout) -> Outcome<T> {
    let mut rng = SplitMix64::new(seed("swiglu", T::NAME, rows, cols));
    let g: Vec<T> = rng.fill(rows * cols, -6.0, 6.0);
    let u: Vec<T> = rng.fill(rows * cols, -2.0, 2.0);
    let (gd, ud) = (
        Guarded::new(&g, layout.shift),
        Guarded::new(&u, layout.shift),
    );
    let od = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let stream = gpu.stream().unwrap();
    let launched = swiglu(gpu, &stream, &gd.view(), &ud.view(), &mut od.view())
        .unwrap_or_else(|e| panic!("swiglu {rows}x{cols} {}: {e}", layout.describe()));
    sync(&stream);
    let want = reference::swiglu(&to_f64(&g), &to_f64(&u));
    Outcome {
        outputs: vec![out("out", od.output("swiglu out"), want, cols)],
        launched: vec![launched],
    }
}

fn swiglu_interleaved_case<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
) -> Outcome<T> {
    let mut rng = SplitMix64::new(seed("swiglu_interleaved", T::NAME, rows, cols));
    let gu: Vec<T> = rng.fill(rows * 2 * cols, -6.0, 6.0);
    let gud = Guarded::new(&gu, layout.shift);
    let od = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let stream = gpu.stream().unwrap();
    let launched = swiglu_interleaved(
        gpu,
        &stream,
        &gud.view(),
        &mut od.view(),
        rows,
        cols,
        layout.threads,
    )
    .unwrap_or_else(|e| {
        panic!(
            "swiglu_interleaved {rows}x{cols} {}: {e}",
            layout.describe()
        )
    });
    sync(&stream);
    let (g, u) = reference::split_gate_up(&to_f64(&gu), cols);
    let want = reference::swiglu(&g, &u);
    Outcome {
        outputs: vec![out("out", od.output("swiglu_interleaved out"), want, cols)],
        launched: vec![launched],
    }
}

fn rope_case<T: GpuElem>(
    gpu: &Gpu,
    shape: RopeShape,
    pairing: Pairing,
    layout: Layout,
) -> Outcome<T> {
    let RopeShape {
        tokens,
        q_heads,
        k_heads,
        head_dim,
        rotary_dim,
    } = shape;
    let tag = format!("rope_{}", pairing.name());
    let mut rng = SplitMix64::new(seed(&tag, T::NAME, tokens * (q_heads + k_heads), head_dim));
    let q: Vec<T> = rng.fill(tokens * q_heads * head_dim, -2.0, 2.0);
    let k: Vec<T> = rng.fill(tokens * k_heads * head_dim, -2.0, 2.0);
    let (cos, sin) = reference::rope_table(tokens, rotary_dim, 10000.0);
    let cos: Vec<T> = cos.into_iter().map(T::from_f64).collect();
    let sin: Vec<T> = sin.into_iter().map(T::from_f64).collect();
    let (qd, kd) = (
        Guarded::new(&q, layout.shift + layout.out_shift),
        Guarded::new(&k, layout.shift),
    );
    let (cd, sd) = (
        Guarded::new(&cos, layout.shift),
        Guarded::new(&sin, layout.shift),
    );
    let stream = gpu.stream().unwrap();
    let mut kv = kd.view();
    let k_arg: Option<&mut dyn DeviceWrite<T::Dev, Stream>> =
        if k_heads > 0 { Some(&mut kv) } else { None };
    let launched = rope(
        gpu,
        &stream,
        pairing,
        &mut qd.view(),
        k_arg,
        &cd.view(),
        &sd.view(),
        shape,
    )
    .unwrap_or_else(|e| panic!("rope {shape:?} {pairing:?} {}: {e}", layout.describe()));
    sync(&stream);
    let ref_pairing = match pairing {
        Pairing::Neox => reference::Pairing::Neox,
        Pairing::Gptj => reference::Pairing::Gptj,
    };
    let (cf, sf) = (to_f64(&cos), to_f64(&sin));
    let rope_ref = |x: &[T], heads| {
        reference::rope(
            &to_f64(x),
            &cf,
            &sf,
            heads,
            head_dim,
            rotary_dim,
            ref_pairing,
        )
    };
    let want_q = rope_ref(&q, q_heads);
    let mut outputs = vec![out("q", qd.output("rope q"), want_q, head_dim)];
    if k_heads > 0 {
        let want_k = rope_ref(&k, k_heads);
        outputs.push(out("k", kd.output("rope k"), want_k, head_dim));
    }
    Outcome {
        outputs,
        launched: vec![launched],
    }
}

const ROPE_SHAPES: &[RopeShape] = &[
    RopeShape::new(1, 1, 0, 2),
    RopeShape::new(3, 4, 2, 64),
    RopeShape::new(5, 32, 8, 128),
    RopeShape::new(2, 3, 1, 80),
    RopeShape::new(7, 2, 2, 6),
    RopeShape::new(129, 5, 3, 256),
    // Partial rotary: half of each head (vector walk), a quarter of 80 (elementwise: 10 pairs
    // are not whole chunks), 2 of 6.
    RopeShape::new(5, 32, 8, 128).with_rotary_dim(64),
    RopeShape::new(3, 4, 1, 80).with_rotary_dim(20),
    RopeShape::new(7, 2, 2, 6).with_rotary_dim(2),
    // Few tokens of many heads: the heads spread over head groups (grid.y).
    RopeShape::new(1, 512, 128, 64),
    RopeShape::new(2, 96, 8, 80),
];

const ROPE_LAYOUTS: &[Layout] = &[
    ALIGNED,
    Layout {
        shift: 1,
        out_shift: 0,
        threads: Threads::Auto,
    },
    Layout {
        shift: 0,
        out_shift: 1,
        threads: Threads::Auto,
    },
];

// ------------------------------------------------------------------ parity

fn parity_rows<T: GpuElem>(gpu: &Gpu) {
    for_each_case(|shape, layout| {
        let what = |op: &str| format!("{op} {}x{} {}", shape.0, shape.1, layout.describe());
        rmsnorm_case::<T>(gpu, shape, layout).assert_close(&what("rmsnorm"));
        rmsnorm_residual_case::<T>(gpu, shape, layout, true)
            .assert_close(&what("rmsnorm_residual in place"));
        rmsnorm_residual_case::<T>(gpu, shape, layout, false)
            .assert_close(&what("rmsnorm_residual into"));
        softmax_case::<T>(gpu, shape, layout).assert_close(&what("softmax"));
        softmax_backward_case::<T>(gpu, shape, layout).assert_close(&what("softmax_backward"));
        swiglu_case::<T>(gpu, shape, layout).assert_close(&what("swiglu"));
        swiglu_interleaved_case::<T>(gpu, shape, layout).assert_close(&what("swiglu_interleaved"));
    });
}

/// Backward rows that outnumber the SMs, whose automatic blocks pack several row groups
/// (a tail column at 2050, a row group of 16 threads at 33); at 4096 and 3003 columns
/// (tail columns) groups of 128 and 96 threads that step apart, each reducing behind its
/// own named barrier.
const PACKED_SHAPES: &[(usize, usize)] = &[
    (1024, 768),
    (533, 2050),
    (300, 4096),
    (1000, 3003),
    (4000, 33),
];

fn parity_backward<T: GpuElem>(gpu: &Gpu) {
    let mut check = |shape: (usize, usize), layout: Layout| {
        // The dw sum's order depends on the block count: automatic, and a fixed 3.
        for blocks in [None, Some(3)] {
            let what = format!(
                "rmsnorm_backward {}x{} {} blocks={blocks:?}",
                shape.0,
                shape.1,
                layout.describe()
            );
            rmsnorm_backward_case::<T>(gpu, shape, layout, blocks).assert_close(&what);
        }
    };
    for_each_case(&mut check);
    for &shape in PACKED_SHAPES {
        check(shape, ALIGNED);
    }
}

fn parity_rope<T: GpuElem>(gpu: &Gpu) {
    for &shape in ROPE_SHAPES {
        for &layout in ROPE_LAYOUTS {
            for pairing in [Pairing::Neox, Pairing::Gptj] {
                let what = format!("rope {shape:?} {pairing:?} {}", layout.describe());
                rope_case::<T>(gpu, shape, pairing, layout).assert_close(&what);
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn row_ops_match_the_reference_bf16() {
    parity_rows::<bf16>(&gpu());
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn row_ops_match_the_reference_f16() {
    parity_rows::<f16>(&gpu());
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn row_ops_match_the_reference_f32() {
    parity_rows::<f32>(&gpu());
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn rmsnorm_backward_matches_the_reference() {
    let gpu = gpu();
    parity_backward::<bf16>(&gpu);
    parity_backward::<f16>(&gpu);
    parity_backward::<f32>(&gpu);
}

// ------------------------------------------------------------------ one-launch backward

/// Backward shapes one launch takes (automatic threads and ranges): one row of any length
/// (one range), and up to 16 rows short enough to share one block, a row group of 32 or 16
/// threads each (bf16 and f16: up to 1024 columns; f32: 512), with a tail (1000, 33) and
/// one row group short of a full block (15).
const ONE_LAUNCH_SHAPES_16: &[(usize, usize)] =
    &[(16, 768), (5, 1000), (2, 1024), (15, 33), (1, 8192)];
const ONE_LAUNCH_SHAPES_F32: &[(usize, usize)] =
    &[(16, 512), (5, 500), (2, 384), (15, 33), (1, 8192)];

fn one_launch_shapes<T: GpuElem>() -> &'static [(usize, usize)] {
    if std::mem::size_of::<T>() == 4 {
        ONE_LAUNCH_SHAPES_F32
    } else {
        ONE_LAUNCH_SHAPES_16
    }
}

fn parity_one_launch_backward<T: GpuElem>(gpu: &Gpu) {
    let layouts = [
        ALIGNED,
        Layout {
            shift: 1,
            out_shift: 0,
            threads: Threads::Auto,
        },
    ];
    for &shape in one_launch_shapes::<T>() {
        for layout in layouts {
            let what = |op: &str| {
                format!(
                    "{op} {}x{} {} {}",
                    shape.0,
                    shape.1,
                    T::NAME,
                    layout.describe()
                )
            };
            let rms = rmsnorm_backward_case::<T>(gpu, shape, layout, None);
            let ln = layernorm::layernorm_backward_case::<T>(gpu, shape, layout, None)
                .expect("short rows' accumulators fit shared memory");
            // One row per range: the partial-row sum in a second launch where rows > 1.
            let rms_ranges = rmsnorm_backward_case::<T>(gpu, shape, layout, Some(shape.0 as u32));
            let ln_ranges =
                layernorm::layernorm_backward_case::<T>(gpu, shape, layout, Some(shape.0 as u32))
                    .expect("short rows' accumulators fit shared memory");
            for (op, one, ranges) in [
                ("rmsnorm_backward", &rms, &rms_ranges),
                ("layernorm_backward", &ln, &ln_ranges),
            ] {
                one.assert_close(&what(op));
                let stamps: Vec<String> = one.launched.iter().map(|l| l.to_string()).collect();
                println!("{}: {stamps:?}", what(op));
                // One block, unless LayerNorm's two sums of 16 row groups pass the GPU's
                // shared memory (sm_86, sm_89, sm_120: 99 KB a block).
                let smem = u64::from(cubins::ops::layernorm::accumulator_bytes::<T::Dev>(
                    shape.1,
                    shape.0 as u32,
                ));
                let fits = smem + 1024 <= u64::from(gpu.device().limits.max_smem_per_block_optin);
                if op == "rmsnorm_backward" || fits {
                    assert_eq!(one.launched.len(), 1, "{}: one launch", what(op));
                }
                // A fixed range per row keeps the workspace and the partial-row sum.
                ranges.assert_close(&what(&format!("{op} a range per row")));
                assert_eq!(
                    ranges.launched.len(),
                    if shape.0 > 1 { 2 } else { 1 },
                    "{}: a range per row",
                    what(op)
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn backward_norms_of_few_short_rows_take_one_launch() {
    let gpu = gpu();
    parity_one_launch_backward::<bf16>(&gpu);
    parity_one_launch_backward::<f16>(&gpu);
    parity_one_launch_backward::<f32>(&gpu);
}

// ------------------------------------------------------------------ cluster backward

/// Shapes the RMSNorm backward takes the cluster kernel for on sm_90 (bf16, f16): clusters
/// left with fewer rows than others, one row, halves below 512 threads (20000: 320 per CTA),
/// a tail column in the second half (20001), an odd chunk count (16392: the first half one
/// chunk wider).
const CLUSTER_SHAPES_16: &[(usize, usize)] =
    &[(5, 32768), (1, 32768), (131, 20000), (2, 20001), (7, 16392)];
/// The same for f32 (4 columns per chunk: halves of up to 8192 columns).
const CLUSTER_SHAPES_F32: &[(usize, usize)] = &[(3, 16384), (1, 16384), (66, 12000), (2, 9001)];

fn cluster_shapes<T: GpuElem>() -> &'static [(usize, usize)] {
    if std::mem::size_of::<T>() == 4 {
        CLUSTER_SHAPES_F32
    } else {
        CLUSTER_SHAPES_16
    }
}

/// Layouts of the cluster cases, backward and forward: aligned; every base shifted (the
/// backward's halves element by element, the forward's runs on the vector walk with a head);
/// the output alone shifted (the forward's rank 0 walks the row element by element, the other
/// ranks add zeros); and a fixed 1024 threads per row, which keeps the whole-row kernel.
const CLUSTER_LAYOUTS: &[Layout] = &[
    ALIGNED,
    Layout {
        shift: 1,
        out_shift: 0,
        threads: Threads::Auto,
    },
    Layout {
        shift: 0,
        out_shift: 1,
        threads: Threads::Auto,
    },
    Layout {
        shift: 0,
        out_shift: 0,
        threads: Threads::PerRow(1024),
    },
];

/// The entry point the backward must launch for this shape and layout on this GPU.
fn expected_backward<T: GpuElem>(gpu: &Gpu, layout: Layout) -> &'static str {
    let name = format!("rmsnorm_bwd_{}", T::NAME);
    let route = gpu.route(&name).unwrap();
    if runs_clusters(&route) && layout.threads == Threads::Auto {
        "rmsnorm_bwd_cluster_"
    } else {
        "rmsnorm_bwd_"
    }
}

fn parity_cluster_backward<T: GpuElem>(gpu: &Gpu) {
    for &shape in cluster_shapes::<T>() {
        for &layout in CLUSTER_LAYOUTS {
            let fixed = RmsNormBwdOptions {
                threads: layout.threads,
                ..Default::default()
            };
            if rmsnorm_backward_plan::<T::Dev>(gpu, shape.0, shape.1, &fixed).is_err() {
                continue; // 1024 fixed threads: beyond the 512 of builds other than sm_90
            }
            for blocks in [None, Some(3)] {
                let what = format!(
                    "rmsnorm_backward {}x{} {} {} blocks={blocks:?}",
                    shape.0,
                    shape.1,
                    T::NAME,
                    layout.describe()
                );
                let first = rmsnorm_backward_case::<T>(gpu, shape, layout, blocks);
                first.assert_close(&what);
                let kernel = first.launched[0].kernel;
                let expected = expected_backward::<T>(gpu, layout);
                assert!(
                    kernel.starts_with(expected) && kernel.ends_with(T::NAME),
                    "{what}: launched {kernel}, expected {expected}{}",
                    T::NAME
                );
                // Fixed summation order: a second run gives the same dx and dw bits.
                let again = rmsnorm_backward_case::<T>(gpu, shape, layout, blocks);
                first.assert_same_bits(&again, &what);
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn rmsnorm_backward_cluster_kernel_matches_the_reference() {
    let gpu = gpu();
    parity_cluster_backward::<bf16>(&gpu);
    parity_cluster_backward::<f16>(&gpu);
    parity_cluster_backward::<f32>(&gpu);
}

/// The cluster kernel takes wide rows on an sm_90 cubin only, and says so in its stamp; the
/// PTX fallback (a stub that traps there) and narrower rows keep the whole-row kernel.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn rmsnorm_backward_takes_the_cluster_kernel_only_where_it_applies() {
    let gpu = gpu();
    let opts = RmsNormBwdOptions::default();
    let on_sm90 = runs_clusters(&gpu.route("rmsnorm_bwd_bf16").unwrap());
    let wide = rmsnorm_backward_plan::<Bf16>(&gpu, 4096, 32768, &opts).unwrap();
    println!("4096x32768: {:?} {}", wide.entry, wide.describe::<Bf16>());
    if on_sm90 {
        assert_eq!(wide.entry, BwdEntry::ClusterHalves);
        assert_eq!(wide.config().grid[0], 2 * wide.blocks);
        assert_eq!(wide.walk::<Bf16>(), "cluster2");
        // Two CTAs of 512 threads share each SM: one wave is as many clusters as SMs.
        assert_eq!(
            wide.blocks as usize,
            4096usize.div_ceil(wide.rows_per_block as usize)
        );
        assert!(wide.blocks <= gpu.device().sm_count, "{wide:?}");
    } else {
        assert_eq!(wide.entry, BwdEntry::WholeRow);
    }
    let narrow = rmsnorm_backward_plan::<Bf16>(&gpu, 4096, 16384, &opts).unwrap();
    assert_eq!(narrow.entry, BwdEntry::WholeRow);
    let fixed = RmsNormBwdOptions {
        threads: Threads::PerRow(1024),
        ..opts
    };
    let whole = rmsnorm_backward_plan::<Bf16>(&gpu, 4096, 32768, &fixed).unwrap();
    assert_eq!(whole.entry, BwdEntry::WholeRow);
    // The stamp of a launch names the kernel and the walk.
    let case = rmsnorm_backward_case::<bf16>(&gpu, (5, 32768), ALIGNED, None);
    let stamp = case.launched[0].stamp(&gpu).unwrap();
    println!("{stamp}");
    assert_eq!(on_sm90, stamp.contains("walk=cluster2"), "{stamp}");
    let jit = gpu_with(RoutePolicy::ForcePtx);
    let ptx = rmsnorm_backward_plan::<Bf16>(&jit, 4096, 32768, &opts).unwrap();
    assert_eq!(ptx.entry, BwdEntry::WholeRow, "PTX fallback");
}

// ------------------------------------------------------------------ cluster forward

/// Shapes the forward norms split over a cluster of 8 CTAs on sm_90: as many rows as give
/// every CTA an SM of the H100's and H200's 132 (16 x 8), the shortest bf16 rows it takes,
/// with a tail (10247: 96 threads a CTA; the head and tail columns with rank 0), a tail
/// column with an odd chunk count (20001), and the widest CTAs (65536: 512 threads in bf16
/// and f16, 1024 in f32).
const FWD_CLUSTER_SHAPES: &[(usize, usize)] = &[(16, 32768), (1, 10247), (2, 20001), (3, 65536)];

/// Whether a forward norm of this shape and layout launches a cluster kernel on this GPU.
fn forward_takes_clusters<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
) -> bool {
    let route = gpu
        .route(&format!("rmsnorm_fwd_cluster_{}", T::NAME))
        .unwrap();
    let sms = gpu.device().sm_count;
    runs_clusters(&route)
        && fwd_cluster_geometry::<T::Dev>(
            &cubins::ops::rmsnorm::FWD,
            rows,
            cols,
            sms,
            layout.threads,
        )
        .is_some()
}

/// The forward norms' cases at one shape and layout: RMSNorm, its residual add in place and
/// into another buffer, LayerNorm and its residual add.
fn forward_norm_cases<T: GpuElem>(
    gpu: &Gpu,
    shape: (usize, usize),
    layout: Layout,
) -> Vec<(&'static str, Outcome<T>)> {
    vec![
        ("rmsnorm", rmsnorm_case::<T>(gpu, shape, layout)),
        (
            "rmsnorm_residual in place",
            rmsnorm_residual_case::<T>(gpu, shape, layout, true),
        ),
        (
            "rmsnorm_residual into",
            rmsnorm_residual_case::<T>(gpu, shape, layout, false),
        ),
        (
            "layernorm",
            layernorm::layernorm_case::<T>(gpu, shape, layout),
        ),
        (
            "layernorm_residual into",
            layernorm::layernorm_residual_case::<T>(gpu, shape, layout, false),
        ),
    ]
}

fn parity_cluster_forward<T: GpuElem>(gpu: &Gpu) {
    for &shape in FWD_CLUSTER_SHAPES {
        for &layout in CLUSTER_LAYOUTS {
            let clusters = forward_takes_clusters::<T>(gpu, shape, layout);
            let first = forward_norm_cases::<T>(gpu, shape, layout);
            let again = forward_norm_cases::<T>(gpu, shape, layout);
            for ((op, a), (_, b)) in first.iter().zip(&again) {
                let what = format!(
                    "{op} {}x{} {} {}",
                    shape.0,
                    shape.1,
                    T::NAME,
                    layout.describe()
                );
                a.assert_close(&what);
                let l = &a.launched[0];
                assert_eq!(
                    l.kernel.contains("_cluster_"),
                    clusters,
                    "{what}: launched {l}"
                );
                assert_eq!(l.choice.contains("walk=cluster"), clusters, "{what}: {l}");
                // The exchange adds the CTAs' sums in rank order: a second run, the same bits.
                a.assert_same_bits(b, &what);
            }
        }
    }
}

/// On an sm_90 cubin, a few long rows take the cluster forward (and say so in the stamp);
/// more rows than the clusters' CTAs have SMs, fixed threads and the PTX fallback (a stub
/// that traps there) keep the whole-row kernel. Outputs against float64 and repeatable, in
/// every dtype.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn forward_norms_split_few_long_rows_over_clusters() {
    let gpu = gpu();
    let on_sm90 = runs_clusters(&gpu.route("rmsnorm_fwd_cluster_bf16").unwrap());
    println!("routes run clusters: {on_sm90}");
    parity_cluster_forward::<bf16>(&gpu);
    parity_cluster_forward::<f16>(&gpu);
    parity_cluster_forward::<f32>(&gpu);
    let sms = gpu.device().sm_count as usize;
    let case = rmsnorm_case::<bf16>(&gpu, (sms / 8, 32768), ALIGNED);
    let stamp = case.launched[0].stamp(&gpu).unwrap();
    println!("{stamp}");
    assert_eq!(
        on_sm90,
        stamp.contains("ctas_per_row=8 walk=cluster"),
        "{stamp}"
    );
    assert!(!stamp.contains("launch=programmatic-dependent"), "{stamp}");
    let many = rmsnorm_case::<bf16>(&gpu, (sms / 8 + 1, 32768), ALIGNED);
    assert_eq!(
        many.launched[0].kernel, "rmsnorm_fwd_bf16",
        "{}",
        many.launched[0]
    );
    let jit = gpu_with(RoutePolicy::ForcePtx);
    let ptx = rmsnorm_case::<bf16>(&jit, (2, 32768), ALIGNED);
    ptx.assert_close("rmsnorm 2x32768 on the PTX route");
    assert_eq!(
        ptx.launched[0].kernel, "rmsnorm_fwd_bf16",
        "PTX fallback: {}",
        ptx.launched[0]
    );
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn rope_matches_the_reference() {
    let gpu = gpu();
    parity_rope::<bf16>(&gpu);
    parity_rope::<f16>(&gpu);
    parity_rope::<f32>(&gpu);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn the_fast_path_is_taken() {
    let gpu = gpu();
    for case in [
        rmsnorm_case::<bf16>(&gpu, (64, 4096), ALIGNED),
        softmax_case::<bf16>(&gpu, (64, 4096), ALIGNED),
        swiglu_interleaved_case::<bf16>(&gpu, (64, 4096), ALIGNED),
    ] {
        for l in &case.launched {
            let stamp = l.stamp(&gpu).unwrap();
            println!("{stamp}");
            assert!(!gpu.route(l.kernel).unwrap().is_fallback(), "{stamp}");
            assert!(
                stamp.contains("walk=resident") || l.kernel.starts_with("swiglu"),
                "{stamp}"
            );
        }
    }
    let rope_case = rope_case::<bf16>(&gpu, ROPE_SHAPES[2], Pairing::Neox, ALIGNED);
    assert!(
        rope_case.launched[0].choice.contains("walk=vector"),
        "{}",
        rope_case.launched[0]
    );
}

/// The forward norms' 16-bit aligned rows of up to 32 threads take the warp walk where their
/// route has it (code built before Blackwell), LayerNorm's widened to the threads it needs;
/// the residual forms never do, and widen to the short walk's 2 chunks a thread instead.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn forward_norms_take_the_warp_walk() {
    let gpu = gpu();
    for (name, case) in forward_norm_cases::<bf16>(&gpu, WARP_WIDENED, ALIGNED) {
        let l = &case.launched[0];
        let stamp = l.stamp(&gpu).unwrap();
        println!("{stamp}");
        let before_blackwell = gpu.route(l.kernel).unwrap().code_cc < 100;
        let residual = name.contains("residual");
        assert_eq!(
            stamp.contains("walk=warp"),
            !residual && before_blackwell,
            "{name}: {stamp}"
        );
        if before_blackwell {
            // 66 chunks: RMSNorm's warp walk holds them over 16 threads, LayerNorm's over 32;
            // the residual forms' short walk over 64 (33 threads rounded to warps).
            let threads = match name {
                _ if residual => 64,
                "layernorm" => 32,
                _ => 16,
            };
            let want = format!("threads_per_row={threads} ");
            assert!(stamp.contains(&want), "{name}: {stamp}");
        }
    }
    for (_, case) in forward_norm_cases::<f32>(&gpu, WARP_WIDENED, ALIGNED) {
        let stamp = case.launched[0].stamp(&gpu).unwrap();
        assert!(!stamp.contains("walk=warp"), "f32: {stamp}");
    }
}

/// Every row kernel but the cluster backward launches as a programmatic dependent of the
/// stream's previous kernel wherever its route allows it (sm_90 code on a driver that
/// launches them: the driver's version read here, not through the runtime's answer), and its
/// STAMP line says so; the outputs still match float64 (each kernel waits on the grid
/// dependency before touching memory).
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn row_kernels_launch_as_programmatic_dependents() {
    let gpu = gpu();
    let driver_launches = driver_version() >= PROGRAMMATIC_DRIVER;
    assert_eq!(gpu.programmatic_launch(), driver_launches);
    let shape = (5, 4096);
    let cases = [
        rmsnorm_case::<bf16>(&gpu, shape, ALIGNED),
        rmsnorm_residual_case::<bf16>(&gpu, shape, ALIGNED, true),
        rmsnorm_backward_case::<bf16>(&gpu, shape, ALIGNED, None),
        softmax_case::<bf16>(&gpu, shape, ALIGNED),
        softmax_backward_case::<bf16>(&gpu, shape, ALIGNED),
        swiglu_case::<bf16>(&gpu, shape, ALIGNED),
        swiglu_interleaved_case::<bf16>(&gpu, shape, ALIGNED),
        rope_case::<bf16>(&gpu, ROPE_SHAPES[2], Pairing::Neox, ALIGNED),
        layernorm::layernorm_case::<bf16>(&gpu, shape, ALIGNED),
        layernorm::layernorm_residual_case::<bf16>(&gpu, shape, ALIGNED, false),
        layernorm::layernorm_backward_case::<bf16>(&gpu, shape, ALIGNED, None)
            .expect("a whole-row backward"),
    ];
    let mut checked = 0;
    for case in &cases {
        case.assert_close("programmatic");
        for l in &case.launched {
            let stamp = l.stamp(&gpu).unwrap();
            println!("{stamp}");
            let route = gpu.route(l.kernel).unwrap();
            let expected = route.code_cc >= 90 && driver_launches && !l.kernel.contains("cluster");
            assert_eq!(l.config.programmatic_dependent, expected, "{stamp}");
            assert_eq!(
                stamp.contains("launch=programmatic-dependent"),
                expected,
                "{stamp}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 13, "{checked} launches checked");
}

// ------------------------------------------------------------------ digests

/// Every digest the gate checks: key and bits. Shapes are fixed; so is everything that
/// decides the bits (inputs, launch geometry, the dw block count).
fn digests(gpu: &Gpu) -> Vec<(String, u64)> {
    fn add<T: GpuElem>(gpu: &Gpu, out: &mut Vec<(String, u64)>) {
        let key = |o: &Outcome<T>, shape: &str| {
            let l = &o.launched[0];
            format!("{}@{}:{shape}", l.kernel, gpu.route(l.kernel).unwrap().arch)
        };
        // 5 x 2048: few rows the backward norms and softmax's forward spread a chunk a thread.
        for shape in [(67, 4097), (64, 4096), (1024, 2048), (50, 392), (5, 2048)] {
            let s = format!("{}x{}", shape.0, shape.1);
            let cases = [
                rmsnorm_case::<T>(gpu, shape, ALIGNED),
                rmsnorm_residual_case::<T>(gpu, shape, ALIGNED, true),
                rmsnorm_backward_case::<T>(gpu, shape, ALIGNED, Some(16)),
                layernorm::layernorm_case::<T>(gpu, shape, ALIGNED),
                layernorm::layernorm_residual_case::<T>(gpu, shape, ALIGNED, true),
                layernorm::layernorm_backward_case::<T>(gpu, shape, ALIGNED, Some(16))
                    .expect("4097 columns' accumulators fit shared memory"),
                softmax_case::<T>(gpu, shape, ALIGNED),
                softmax_backward_case::<T>(gpu, shape, ALIGNED),
                swiglu_case::<T>(gpu, shape, ALIGNED),
                swiglu_interleaved_case::<T>(gpu, shape, ALIGNED),
            ];
            for c in &cases {
                out.push((key(c, &s), c.digest()));
            }
        }
        // Forward rows LayerNorm widens to the warp walk's 32 threads (RMSNorm's take 16), and
        // the residual forms to the short walk's 64.
        let s = format!("{}x{}", WARP_WIDENED.0, WARP_WIDENED.1);
        for c in [
            rmsnorm_case::<T>(gpu, WARP_WIDENED, ALIGNED),
            layernorm::layernorm_case::<T>(gpu, WARP_WIDENED, ALIGNED),
            rmsnorm_residual_case::<T>(gpu, WARP_WIDENED, ALIGNED, true),
            layernorm::layernorm_residual_case::<T>(gpu, WARP_WIDENED, ALIGNED, true),
        ] {
            out.push((key(&c, &s), c.digest()));
        }
        // Backward rows one launch takes: few short rows in one block, one long row.
        for &shape in [one_launch_shapes::<T>()[0], one_launch_shapes::<T>()[4]].iter() {
            let s = format!("{}x{}", shape.0, shape.1);
            let ln = layernorm::layernorm_backward_case::<T>(gpu, shape, ALIGNED, None)
                .expect("short rows' accumulators fit shared memory");
            for c in [rmsnorm_backward_case::<T>(gpu, shape, ALIGNED, None), ln] {
                out.push((key(&c, &s), c.digest()));
            }
        }
        // Backward rows wide enough that sm_90 cubins split each over a 2-CTA cluster.
        let wide = if std::mem::size_of::<T>() == 4 {
            (3, 16384)
        } else {
            (5, 32768)
        };
        let c = rmsnorm_backward_case::<T>(gpu, wide, ALIGNED, Some(2));
        out.push((key(&c, &format!("{}x{}", wide.0, wide.1)), c.digest()));
        // LayerNorm backward rows past a resident tile (512 threads x 4 chunks): streamed.
        let long = if std::mem::size_of::<T>() == 4 {
            (3, 12000)
        } else {
            (3, 20000)
        };
        let c = layernorm::layernorm_backward_case::<T>(gpu, long, ALIGNED, Some(2))
            .expect("the long rows' accumulators fit shared memory");
        out.push((key(&c, &format!("{}x{}", long.0, long.1)), c.digest()));
        // LayerNorm backward rows past a block's shared memory: cluster halves where the
        // route runs them (refused elsewhere: no digest).
        let widest = (3, 32768);
        if let Some(c) = layernorm::layernorm_backward_case::<T>(gpu, widest, ALIGNED, Some(2)) {
            out.push((key(&c, &format!("{}x{}", widest.0, widest.1)), c.digest()));
        }
        // Few long rows, which sm_90 cubins split over an 8-CTA cluster in the forward norms.
        for (op, c) in forward_norm_cases::<T>(gpu, wide, ALIGNED) {
            if op != "rmsnorm_residual into" {
                out.push((key(&c, &format!("{}x{}", wide.0, wide.1)), c.digest()));
            }
        }
        for pairing in [Pairing::Neox, Pairing::Gptj] {
            for shape in [ROPE_SHAPES[5], ROPE_SHAPES[6]] {
                let c = rope_case::<T>(gpu, shape, pairing, ALIGNED);
                let mut s = format!(
                    "{}x{}+{}x{}",
                    shape.tokens, shape.q_heads, shape.k_heads, shape.head_dim
                );
                if shape.rotary_dim != shape.head_dim {
                    s += &format!("r{}", shape.rotary_dim);
                }
                out.push((key(&c, &s), c.digest()));
            }
        }
    }
    let mut out = Vec::new();
    add::<bf16>(gpu, &mut out);
    add::<f16>(gpu, &mut out);
    add::<f32>(gpu, &mut out);
    out
}

fn digest_file() -> (DigestFile, &'static str) {
    const PATH: &str = "tests/digests/fused.txt";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PATH);
    // The bundle runs the test binary away from the source tree: the file is compiled in.
    const TEXT: &str = include_str!("digests/fused.txt");
    let file = std::fs::read_to_string(&path)
        .ok()
        .unwrap_or_else(|| TEXT.to_string());
    (
        DigestFile::parse(&file).unwrap_or_else(|e| panic!("{PATH}: {e}")),
        PATH,
    )
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn digests_match_the_record() {
    let gpu = gpu();
    let (file, path) = digest_file();
    let problems: Vec<String> = digests(&gpu)
        .into_iter()
        .filter_map(|(key, got)| file.check(&key, got, path).err())
        .collect();
    for p in &problems {
        eprintln!("{p}");
    }
    assert!(
        problems.is_empty(),
        "{} digest(s) missing or different (lines above)",
        problems.len()
    );
}

/// Prints the `HASH` lines to record in tests/digests/fused.txt (run with `--ignored`).
#[test]
#[ignore = "recorder: prints HASH lines for tests/digests/fused.txt; needs a GPU"]
fn record_fused_digests() {
    let gpu = gpu();
    let all = digests(&gpu);
    assert!(!all.is_empty());
    for (key, digest) in &all {
        println!("{}", hash_line(key, *digest));
    }
}

// ------------------------------------------------------------------ repeat and graph replay

/// Runs `enqueue` eagerly twice and once more as a replayed CUDA graph, resetting the
/// outputs to poison before each; all three must give the same bits.
fn check_repeat_and_graph<T: GpuElem>(
    gpu: &Gpu,
    what: &str,
    outputs: &mut [&mut Guarded<T>],
    enqueue: &dyn Fn(&Stream) -> Result<(), Error>,
) {
    let stream = gpu.stream().unwrap();
    let mut runs: Vec<Vec<Vec<T>>> = Vec::new();
    for mode in ["eager", "eager again", "graph replay"] {
        for o in outputs.iter_mut() {
            let poison = vec![T::poison(); o.len()];
            o.upload(&poison);
        }
        if mode == "graph replay" {
            let graph = driver::GraphExec::capture(stream.as_inner(), || {
                enqueue(&stream).map_err(|e| e.to_string())
            })
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            graph.launch(stream.as_inner()).unwrap();
            // Replay twice: a graph must be replayable.
            graph.launch(stream.as_inner()).unwrap();
        } else {
            enqueue(&stream).unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        sync(&stream);
        runs.push(outputs.iter().map(|o| o.output(what)).collect());
    }
    for (i, mode) in ["eager again", "graph replay"].iter().enumerate() {
        for (o, (a, b)) in runs[0].iter().zip(&runs[i + 1]).enumerate() {
            let differ = T::bytes(a) != T::bytes(b);
            assert!(
                !differ,
                "{what} ({}): output {o} of the {mode} run differs from the first run's bits",
                T::NAME
            );
        }
    }
}

fn repeat_and_graph<T: GpuElem>(gpu: &Gpu) {
    let (rows, cols) = (37, 4097);
    let mut rng = SplitMix64::new(0xF00D);
    let x = Guarded::new(&rng.fill::<T>(rows * cols, -2.0, 2.0), 0);
    let w = Guarded::new(&rng.fill::<T>(cols, 0.5, 1.5), 0);
    let dy = Guarded::new(&rng.fill::<T>(rows * cols, -1.0, 1.0), 0);
    let mut y = Guarded::<T>::poisoned(rows * cols, 0);
    let mut y2 = Guarded::<T>::poisoned(rows * cols, 0);
    // The interleaved SwiGLU reads x as [rows, 2 * half] and writes [rows, half].
    let half = cols / 2;
    let mut gated = Guarded::<T>::poisoned(rows * half, 0);
    let opts = RmsNormOptions::default();
    let bwd = RmsNormBwdOptions::default();
    let plan = rmsnorm_backward_plan::<T::Dev>(gpu, rows, cols, &bwd).unwrap();
    let ws = gpu_common::uploaded(&vec![0f32; plan.workspace_len()]).unwrap();

    let (xv, wv, dyv, yv, y2v) = (x.view(), w.view(), dy.view(), y.view(), y2.view());
    check_repeat_and_graph::<T>(gpu, "rmsnorm", &mut [&mut y], &|s| {
        rmsnorm(gpu, s, &xv, &wv, &mut yv.index(..), rows, cols, &opts).map(|_| ())
    });
    // Few short rows too: one launch writes dx and dw.
    for (what, (r, c)) in [
        ("rmsnorm_backward", (rows, cols)),
        ("rmsnorm_backward in one launch", (16, 768)),
    ] {
        let (mut dx, mut dw) = (
            Guarded::<T>::poisoned(r * c, 0),
            Guarded::<T>::poisoned(c, 0),
        );
        let (dxv, dwv) = (dx.view(), dw.view());
        check_repeat_and_graph::<T>(gpu, what, &mut [&mut dx, &mut dw], &|s| {
            let mut wsv = ws.index(..);
            let (mut dx, mut dw) = (dxv.index(..), dwv.index(..));
            rmsnorm_backward(
                gpu, s, &xv, &wv, &dyv, &mut dx, &mut dw, &mut wsv, r, c, &bwd,
            )
            .map(|_| ())
        });
    }
    check_repeat_and_graph::<T>(gpu, "softmax + backward", &mut [&mut y, &mut y2], &|s| {
        softmax(gpu, s, &xv, &mut yv.index(..), rows, cols, Threads::Auto)?;
        softmax_backward(
            gpu,
            s,
            &yv,
            &dyv,
            &mut y2v.index(..),
            rows,
            cols,
            Threads::Auto,
        )
        .map(|_| ())
    });
    let gatedv = gated.view();
    check_repeat_and_graph::<T>(gpu, "swiglu", &mut [&mut y, &mut gated], &|s| {
        swiglu(gpu, s, &xv, &dyv, &mut yv.index(..))?;
        swiglu_interleaved(
            gpu,
            s,
            &xv,
            &mut gatedv.index(..),
            rows,
            half,
            Threads::Auto,
        )
        .map(|_| ())
    });
    // A few long rows: the cluster forward on sm_90 cubins.
    let (few, long) = (2, 20001);
    let xl = Guarded::new(&rng.fill::<T>(few * long, -2.0, 2.0), 0);
    let wl = Guarded::new(&rng.fill::<T>(long, 0.5, 1.5), 0);
    let mut yl = Guarded::<T>::poisoned(few * long, 0);
    let (xlv, wlv, ylv) = (xl.view(), wl.view(), yl.view());
    check_repeat_and_graph::<T>(gpu, "rmsnorm, few long rows", &mut [&mut yl], &|s| {
        rmsnorm(gpu, s, &xlv, &wlv, &mut ylv.index(..), few, long, &opts).map(|_| ())
    });
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn repeat_runs_and_graph_replay_give_the_same_bits() {
    let gpu = gpu();
    repeat_and_graph::<bf16>(&gpu);
    repeat_and_graph::<f16>(&gpu);
    repeat_and_graph::<f32>(&gpu);
    // RoPE works in place: each run starts from the same input.
    let shape = RopeShape::new(33, 8, 2, 128);
    let mut rng = SplitMix64::new(0xBEEF);
    let q0: Vec<bf16> = rng.fill(33 * 8 * 128, -2.0, 2.0);
    let (cos, sin) = reference::rope_table(33, 128, 10000.0);
    let cos = Guarded::new(&cos.into_iter().map(bf16::from_f64).collect::<Vec<_>>(), 0);
    let sin = Guarded::new(&sin.into_iter().map(bf16::from_f64).collect::<Vec<_>>(), 0);
    let mut q = Guarded::new(&q0, 0);
    let mut k = Guarded::new(&q0[..33 * 2 * 128], 0);
    let stream = gpu.stream().unwrap();
    let mut results = Vec::new();
    for replay in [false, false, true] {
        q.upload(&q0);
        k.upload(&q0[..33 * 2 * 128]);
        let (qv, kv, cv, sv) = (q.view(), k.view(), cos.view(), sin.view());
        let run = |s: &Stream| {
            rope(
                &gpu,
                s,
                Pairing::Neox,
                &mut qv.index(..),
                Some(&mut kv.index(..)),
                &cv,
                &sv,
                shape,
            )
            .map(|_| ())
        };
        if replay {
            let graph = driver::GraphExec::capture(stream.as_inner(), || {
                run(&stream).map_err(|e| e.to_string())
            })
            .unwrap();
            graph.launch(stream.as_inner()).unwrap();
        } else {
            run(&stream).unwrap();
        }
        sync(&stream);
        results.push((q.output("rope q"), k.output("rope k")));
    }
    assert!(
        results[1] == results[0] && results[2] == results[0],
        "rope: a repeat or the graph replay changed bits"
    );
}

// ------------------------------------------------------------------ bad input

fn refused(what: &str, r: Result<impl std::fmt::Debug, Error>, needle: &str) {
    match r {
        Ok(v) => panic!("{what}: launched ({v:?}) instead of refusing"),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains(needle),
                "{what}: the error `{msg}` does not mention `{needle}`"
            );
            assert!(
                matches!(e, Error::Launch(_)),
                "{what}: {e:?} is not a launch refusal"
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn bad_input_is_refused_before_launch() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let x = Guarded::<bf16>::new(&[bf16::ONE; 64], 0);
    let w = Guarded::<bf16>::new(&[bf16::ONE; 8], 0);
    let y = Guarded::<bf16>::poisoned(64, 0);
    let opts = RmsNormOptions::default();
    let (xv, wv) = (x.view(), w.view());
    refused(
        "zero columns",
        rmsnorm(&gpu, &stream, &xv, &wv, &mut y.view(), 8, 0, &opts),
        "column",
    );
    refused(
        "short x",
        rmsnorm(&gpu, &stream, &xv, &wv, &mut y.view(), 9, 8, &opts),
        "`x`",
    );
    refused(
        "short w",
        rmsnorm(
            &gpu,
            &stream,
            &xv,
            &wv.index(..4),
            &mut y.view(),
            8,
            8,
            &opts,
        ),
        "`w`",
    );
    refused(
        "y overlaps x",
        rmsnorm(&gpu, &stream, &xv, &wv, &mut xv.index(..), 8, 8, &opts),
        "overlap",
    );
    let bad_eps = RmsNormOptions {
        eps: f32::NAN,
        ..opts
    };
    refused(
        "NaN eps",
        rmsnorm(&gpu, &stream, &xv, &wv, &mut y.view(), 8, 8, &bad_eps),
        "eps",
    );
    let bad_threads = RmsNormOptions {
        threads: Threads::PerRow(48),
        ..opts
    };
    refused(
        "48 threads",
        rmsnorm(&gpu, &stream, &xv, &wv, &mut y.view(), 8, 8, &bad_threads),
        "threads per row",
    );
    refused(
        "softmax in place",
        softmax(&gpu, &stream, &xv, &mut xv.index(..), 8, 8, Threads::Auto),
        "overlap",
    );
    refused(
        "interleaved: short gate_up",
        swiglu_interleaved(
            &gpu,
            &stream,
            &xv.index(..63),
            &mut y.view(),
            4,
            8,
            Threads::Auto,
        ),
        "`gate_up`",
    );
    let ws = gpu_common::uploaded(&[0f32; 4]).unwrap();
    let dw = Guarded::<bf16>::poisoned(8, 0);
    refused(
        "backward: short workspace",
        rmsnorm_backward(
            &gpu,
            &stream,
            &xv,
            &wv,
            &xv,
            &mut y.view(),
            &mut dw.view(),
            &mut ws.index(..),
            8,
            8,
            // Two ranges of a row each: a workspace (one range, or the default's one block,
            // has none).
            &RmsNormBwdOptions {
                threads: Threads::PerRow(64),
                blocks: Some(2),
                ..Default::default()
            },
        ),
        "`workspace`",
    );
    let t = Guarded::<bf16>::new(&[bf16::ONE; 8], 0);
    // q is y; no k buffer.
    let rope_q = |pairing, shape| {
        rope(
            &gpu,
            &stream,
            pairing,
            &mut y.view(),
            None,
            &t.view(),
            &t.view(),
            shape,
        )
    };
    refused(
        "odd head_dim",
        rope_q(Pairing::Neox, RopeShape::new(1, 1, 0, 7)),
        "even",
    );
    refused(
        "rotary_dim past head_dim",
        rope_q(Pairing::Neox, RopeShape::new(1, 1, 0, 4).with_rotary_dim(6)),
        "at most head_dim",
    );
    refused(
        "k_heads without k",
        rope_q(Pairing::Gptj, RopeShape::new(1, 1, 1, 8)),
        "k buffer",
    );
    // Nothing ran: the outputs still hold the poison everywhere.
    sync(&stream);
    assert!(
        y.read("y").iter().all(|v| v.is_poison()),
        "a refused launch wrote its output"
    );
}

/// The backward's plan (blocks, so the workspace size and the dweight bits) must not depend
/// on whether the kernel already ran at that shared-memory size: the occupancy query that
/// sizes the grid must see the raised dynamic shared memory limit the launch will set.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn rmsnorm_backward_plan_does_not_change_after_a_launch() {
    let gpu = gpu();
    let opts = RmsNormBwdOptions::default();
    // The whole-row kernel, and (on sm_90) the cluster kernel.
    for (rows, cols) in [(8192, 14336), (4096, 32768)] {
        let before = rmsnorm_backward_plan::<Bf16>(&gpu, rows, cols, &opts).unwrap();
        assert!(
            before.smem_bytes > 48 * 1024,
            "the case must need the raised limit"
        );
        // One row at the same width launches with the same shared memory (and so raises it).
        rmsnorm_backward_case::<bf16>(&gpu, (1, cols), ALIGNED, None).assert_close("one wide row");
        let after = rmsnorm_backward_plan::<Bf16>(&gpu, rows, cols, &opts).unwrap();
        assert_eq!(
            before, after,
            "plan before and after a launch at {cols} columns"
        );
    }
}
