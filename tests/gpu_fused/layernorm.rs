//! The LayerNorm gates, part of tests/gpu_fused.rs (its cases, layouts, poisoned and
//! guarded buffers, tolerances and helpers): parity of the forward, the fused residual
//! forward (in place and into a separate buffer) and the backward (dx, dw, db; automatic and
//! fixed block counts) with the float64 references at every shape and layout of the row ops,
//! rows the backward streams (or walks element by element) or prefetches, rows whose accumulators exceed
//! shared memory refused before launch, repeat runs and graph replay bit-identical, bad input
//! refused, and the plan unchanged by a launch.

use crate::common::data::{round_to, to_f64, Elem, SplitMix64};
use crate::common::reference;
use crate::guarded::Guarded;
use crate::{
    check_repeat_and_graph, for_each_case, gpu_common, out, refused, seed, sync, GpuElem, Layout,
    Outcome, Output, ALIGNED, PACKED_SHAPES,
};
use cubins::ops::layernorm::{
    bwd_streams, half_cols, layernorm, layernorm_backward, layernorm_backward_plan,
    layernorm_residual, layernorm_residual_into, named_barriers, runs_clusters, BwdEntry,
    LayerNormBwdOptions, LayerNormBwdPlan, LayerNormOptions,
};
use cubins::ops::Threads;
use cubins::runtime::{Bf16, Error, Gpu, LaunchError};
use gpu_common::gpu;
use half::{bf16, f16};

const EPS: f32 = 1e-5;

/// x around 1 (so the mean matters), w around 1, b around 0.
fn inputs<T: Elem>(tag: &str, rows: usize, cols: usize) -> (SplitMix64, Vec<T>, Vec<T>, Vec<T>) {
    let mut rng = SplitMix64::new(seed(tag, T::NAME, rows, cols));
    let x = rng.fill(rows * cols, -1.0, 3.0);
    let w = rng.fill(cols, 0.5, 1.5);
    let b = rng.fill(cols, -0.5, 0.5);
    (rng, x, w, b)
}

fn options(layout: Layout) -> LayerNormOptions {
    LayerNormOptions {
        eps: EPS,
        threads: layout.threads,
    }
}

pub(crate) fn layernorm_case<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
) -> Outcome<T> {
    let (_, x, w, b) = inputs::<T>("layernorm", rows, cols);
    let [xd, wd, bd] = [&x, &w, &b].map(|v| Guarded::new(v, layout.shift));
    let yd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let stream = gpu.stream().unwrap();
    let (xv, wv, bv) = (xd.view(), wd.view(), bd.view());
    let launched = layernorm(
        gpu,
        &stream,
        &xv,
        &wv,
        &bv,
        &mut yd.view(),
        rows,
        cols,
        &options(layout),
    )
    .unwrap_or_else(|e| panic!("layernorm {rows}x{cols} {}: {e}", layout.describe()));
    sync(&stream);
    let want = reference::layernorm(&to_f64(&x), &to_f64(&w), &to_f64(&b), cols, f64::from(EPS));
    Outcome {
        outputs: vec![out("y", yd.output("layernorm y"), want, cols)],
        launched: vec![launched],
    }
}

/// The fused residual add; `in_place`: the residual updated in its own buffer.
pub(crate) fn layernorm_residual_case<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
    in_place: bool,
) -> Outcome<T> {
    let (mut rng, x, w, b) = inputs::<T>("layernorm_residual", rows, cols);
    let res: Vec<T> = rng.fill(rows * cols, -1.0, 1.0);
    let [xd, wd, bd, rd] = [&x, &w, &b, &res].map(|v| Guarded::new(v, layout.shift));
    let yd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let s = gpu.stream().unwrap();
    let (xv, wv, bv, mut yv, mut rv) = (xd.view(), wd.view(), bd.view(), yd.view(), rd.view());
    let (opts, (r, c)) = (options(layout), (rows, cols));
    let (launched, res_out) = if in_place {
        let l = layernorm_residual(gpu, &s, &xv, &mut rv, &wv, &bv, &mut yv, r, c, &opts);
        (l, rd)
    } else {
        let rout = Guarded::<T>::poisoned(rows * cols, layout.shift);
        let mut ov = rout.view();
        let l = layernorm_residual_into(gpu, &s, &xv, &rv, &mut ov, &wv, &bv, &mut yv, r, c, &opts);
        sync(&s);
        assert_eq!(rd.read("residual_in"), res, "residual_in is read-only");
        (l, rout)
    };
    let what = || format!("layernorm_residual {rows}x{cols} {}", layout.describe());
    let launched = launched.unwrap_or_else(|e| panic!("{}: {e}", what()));
    sync(&s);
    let h = reference::residual_add(&to_f64(&x), &to_f64(&res), round_to::<T>);
    let y = reference::layernorm(&h, &to_f64(&w), &to_f64(&b), cols, f64::from(EPS));
    Outcome {
        outputs: vec![
            out("residual", res_out.output("residual out"), h, cols),
            out("y", yd.output("layernorm_residual y"), y, cols),
        ],
        launched: vec![launched],
    }
}

/// The backward's plan, or `None` where the GPU's shared memory per block cannot hold the
/// row groups' dw and db accumulators (with automatic threads on a route that runs the
/// cluster kernel: a half row's): then the refusal must be that one, before launch.
pub(crate) fn plan_or_refusal<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    opts: &LayerNormBwdOptions,
) -> Option<LayerNormBwdPlan> {
    match layernorm_backward_plan::<T::Dev>(gpu, rows, cols, opts) {
        Ok(plan) => Some(plan),
        Err(e) => {
            let vec = 16 / std::mem::size_of::<T>();
            let route = gpu.route(&format!("layernorm_bwd_{}", T::NAME)).unwrap();
            let halves = runs_clusters(&route) && opts.threads == Threads::Auto;
            let span = if halves {
                half_cols::<T::Dev>(cols)
            } else {
                cols
            };
            let accumulators = 2 * (span / vec + 1) * vec * 4;
            // Less the kernel's static shared memory (under 1 KB).
            let limit = gpu.device().limits.max_smem_per_block_optin as usize - 1024;
            assert!(
                matches!(e, Error::Launch(LaunchError::SharedMemory { .. })) && accumulators > limit,
                "{rows}x{cols} {}: refused with `{e}` ({accumulators} B of accumulators per row group over {span} columns, {limit} B per block)",
                T::NAME
            );
            None
        }
    }
}

/// `None` where the plan is refused (see [`plan_or_refusal`]).
pub(crate) fn layernorm_backward_case<T: GpuElem>(
    gpu: &Gpu,
    (rows, cols): (usize, usize),
    layout: Layout,
    blocks: Option<u32>,
) -> Option<Outcome<T>> {
    let opts = LayerNormBwdOptions {
        eps: EPS,
        threads: layout.threads,
        blocks,
    };
    let plan = plan_or_refusal::<T>(gpu, (rows, cols), &opts)?;
    let (mut rng, x, w, _) = inputs::<T>("layernorm_bwd", rows, cols);
    let dy: Vec<T> = rng.fill(rows * cols, -1.0, 1.0);
    let [xd, wd, dyd] = [&x, &w, &dy].map(|v| Guarded::new(v, layout.shift));
    let dxd = Guarded::<T>::poisoned(rows * cols, layout.shift + layout.out_shift);
    let [dwd, dbd] = [(); 2].map(|_| Guarded::<T>::poisoned(cols, layout.shift));
    let ws = gpu_common::uploaded(&vec![f32::NAN; plan.workspace_len()]).unwrap();
    let stream = gpu.stream().unwrap();
    let (x_, w_, dy_) = (xd.view(), wd.view(), dyd.view());
    let (mut dx_, mut dw_, mut db_, mut ws_) = (dxd.view(), dwd.view(), dbd.view(), ws.index(..));
    let launched = layernorm_backward(
        gpu, &stream, &x_, &w_, &dy_, &mut dx_, &mut dw_, &mut db_, &mut ws_, rows, cols, &opts,
    )
    .unwrap_or_else(|e| {
        panic!(
            "layernorm_backward {rows}x{cols} {}: {e}",
            layout.describe()
        )
    });
    sync(&stream);
    let want =
        reference::layernorm_backward(&to_f64(&x), &to_f64(&w), &to_f64(&dy), cols, f64::from(EPS));
    Some(Outcome {
        outputs: vec![
            Output {
                row_scale: Some(want.dx_term_scale),
                ..out("dx", dxd.output("dx"), want.dx, cols)
            },
            out("dw", dwd.output("dw"), want.dw, cols),
            out("db", dbd.output("db"), want.db, cols),
        ],
        launched: launched.iter().cloned().collect(),
    })
}

// ------------------------------------------------------------------ parity

/// Backward rows beyond the row ops' shapes: past a resident tile of 512 threads (bf16,
/// f16: 16384 columns; f32: 8192), so streamed a chunk at a time (the Blackwell builds:
/// element by element); one block per SM at 14336 columns with several rows per block
/// (3 ranges), whose row groups prefetch their next rows; and rows whose accumulators
/// exceed a block's shared memory, which sm_90 cubins split over a 2-CTA cluster (bf16 and
/// f16 halves of 16384 resident, f32 halves streamed; at 32771 columns rows after the
/// first are unaligned, so element by element; 3 rows over a fixed 3 ranges: a cluster a
/// row) and other GPUs refuse.
const BACKWARD_SHAPES: &[(usize, usize)] = &[
    (3, 16392),
    (2, 20000),
    (7, 8200),
    (131, 14336),
    (3, 32768),
    (4, 32771),
    (67, 30000),
];

fn parity_forward<T: GpuElem>(gpu: &Gpu) {
    for_each_case(|shape, layout| {
        let what = |op: &str| format!("{op} {}x{} {}", shape.0, shape.1, layout.describe());
        layernorm_case::<T>(gpu, shape, layout).assert_close(&what("layernorm"));
        layernorm_residual_case::<T>(gpu, shape, layout, true)
            .assert_close(&what("layernorm_residual in place"));
        layernorm_residual_case::<T>(gpu, shape, layout, false)
            .assert_close(&what("layernorm_residual into"));
    });
}

fn parity_backward<T: GpuElem>(gpu: &Gpu) {
    let mut check = |shape: (usize, usize), layout: Layout| {
        // The dw and db sums' order depends on the block count: automatic, and a fixed 3.
        for blocks in [None, Some(3)] {
            let what = format!(
                "layernorm_backward {}x{} {} {} blocks={blocks:?}",
                shape.0,
                shape.1,
                T::NAME,
                layout.describe()
            );
            let Some(first) = layernorm_backward_case::<T>(gpu, shape, layout, blocks) else {
                continue;
            };
            first.assert_close(&what);
            // Fixed summation order: a second run gives the same dx, dw and db bits.
            let again = layernorm_backward_case::<T>(gpu, shape, layout, blocks).unwrap();
            first.assert_same_bits(&again, &what);
        }
    };
    for_each_case(&mut check);
    for &shape in BACKWARD_SHAPES.iter().chain(PACKED_SHAPES) {
        check(shape, ALIGNED);
    }
}

/// One test per gate, each over bf16, f16 and f32.
macro_rules! gates {
    ($($test:ident => $gate:ident),* $(,)?) => {$(
        #[test]
        #[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
        fn $test() {
            let gpu = gpu();
            $gate::<bf16>(&gpu);
            $gate::<f16>(&gpu);
            $gate::<f32>(&gpu);
        }
    )*};
}

gates! {
    layernorm_matches_the_reference => parity_forward,
    layernorm_backward_matches_the_reference => parity_backward,
    layernorm_repeat_runs_and_graph_replay_give_the_same_bits => repeat_and_graph,
}

/// The launches the plan describes: cubin route, resident rows at 64 x 4096 bf16 (forward
/// and backward), a backward whose block holds its SM alone says it prefetches, rows past a
/// resident tile stream (element by element where the loaded kernel does not), and rows
/// past a block's shared memory take cluster halves where the route runs them.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn layernorm_takes_the_planned_walks() {
    let gpu = gpu();
    let shape = (64, 4096);
    let backward = layernorm_backward_case::<bf16>(&gpu, shape, ALIGNED, None).unwrap();
    for case in [
        layernorm_case::<bf16>(&gpu, shape, ALIGNED),
        layernorm_residual_case::<bf16>(&gpu, shape, ALIGNED, false),
        backward,
    ] {
        let l = &case.launched[0];
        let stamp = l.stamp(&gpu).unwrap();
        println!("{stamp}");
        assert!(!gpu.route(l.kernel).unwrap().is_fallback(), "{stamp}");
        assert!(stamp.contains("walk=resident"), "{stamp}");
    }
    let opts = LayerNormBwdOptions::default();
    let clusters = runs_clusters(&gpu.route("layernorm_bwd_bf16").unwrap());
    for cols in [4096, 14336, 20000, 32768] {
        let Some(plan) = plan_or_refusal::<bf16>(&gpu, (8192, cols), &opts) else {
            continue; // a GPU with less shared memory per block than the H100's
        };
        let words = plan.describe::<Bf16>();
        println!("8192x{cols}: {words} blocks={}", plan.blocks);
        // Past a block's shared memory (29 007 columns) only as cluster halves.
        let halves = clusters && cols > 29007;
        assert_eq!(plan.entry == BwdEntry::ClusterHalves, halves, "{words}");
        assert_eq!(halves, words.contains("ctas_per_row=2"), "{words}");
        assert_eq!(
            plan.alone_on_sm,
            words.contains("prefetch=next_row"),
            "{words}"
        );
        let long_walk = if bwd_streams(&plan.kernel) {
            "walk=streamed"
        } else {
            "walk=elementwise"
        };
        let span = if halves {
            half_cols::<Bf16>(cols)
        } else {
            cols
        };
        let resident = span <= plan.kernel.max_threads as usize * 4 * 8;
        assert_eq!(resident, words.contains("walk=resident"), "{words}");
        assert_eq!(!resident, words.contains(long_walk), "{words}");
    }
    // 4096 columns: row groups of 128 threads. Automatic: the rows outnumber the SMs, so a
    // block packs 4 groups (the kernel's 512 threads) that step apart, each behind its own
    // named barrier, and does not prefetch though it holds its SM alone (a build without
    // named barriers packs none this wide); at fixed ranges one group a block, several
    // blocks to an SM.
    let named = named_barriers(&gpu.route("layernorm_bwd_bf16").unwrap());
    let wide = layernorm_backward_plan::<Bf16>(&gpu, 8192, 4096, &opts).unwrap();
    assert_eq!(
        wide.geometry.rows_per_block,
        if named { 4 } else { 1 },
        "{wide:?}"
    );
    assert!(!wide.alone_on_sm, "{wide:?}");
    let fixed = LayerNormBwdOptions {
        blocks: Some(264),
        ..opts
    };
    let shared = layernorm_backward_plan::<Bf16>(&gpu, 8192, 4096, &fixed).unwrap();
    assert_eq!(shared.geometry.rows_per_block, 1, "{shared:?}");
    assert!(!shared.alone_on_sm, "{shared:?}");
    // 2048 columns (64-thread row groups), automatic: the rows outnumber the SMs, so a
    // block packs row groups.
    let packed = layernorm_backward_plan::<Bf16>(&gpu, 8192, 2048, &opts).unwrap();
    println!("8192x2048: {}", packed.describe::<Bf16>());
    assert!(packed.geometry.rows_per_block > 1, "{packed:?}");
}

/// The plan (blocks, so the workspace size and the dw and db bits) must not depend on
/// whether the kernel already ran at that shared-memory size.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn layernorm_backward_plan_does_not_change_after_a_launch() {
    let gpu = gpu();
    let opts = LayerNormBwdOptions::default();
    let (rows, cols) = (8192, 14336);
    let before = layernorm_backward_plan::<Bf16>(&gpu, rows, cols, &opts).unwrap();
    assert!(
        before.smem_bytes > 48 * 1024,
        "the case must need the raised limit"
    );
    layernorm_backward_case::<bf16>(&gpu, (1, cols), ALIGNED, None)
        .unwrap()
        .assert_close("one wide row");
    let after = layernorm_backward_plan::<Bf16>(&gpu, rows, cols, &opts).unwrap();
    assert_eq!(
        before, after,
        "plan before and after a launch at {cols} columns"
    );
}

// ------------------------------------------------------------------ repeat and graph replay

fn repeat_and_graph<T: GpuElem>(gpu: &Gpu) {
    let (rows, cols) = (37, 4097);
    let (mut rng, x, w, b) = inputs::<T>("layernorm_repeat", rows, cols);
    let dy: Vec<T> = rng.fill(rows * cols, -1.0, 1.0);
    let [x, w, b, dy] = [&x, &w, &b, &dy].map(|v| Guarded::new(v, 0));
    let mut y = Guarded::<T>::poisoned(rows * cols, 0);
    let mut res_out = Guarded::<T>::poisoned(rows * cols, 0);
    let opts = LayerNormOptions::default();
    let bwd = LayerNormBwdOptions::default();
    let plan = layernorm_backward_plan::<T::Dev>(gpu, rows, cols, &bwd).unwrap();
    let ws = gpu_common::uploaded(&vec![0f32; plan.workspace_len()]).unwrap();
    let (xv, wv, bv, dyv) = (x.view(), w.view(), b.view(), dy.view());
    let (yv, rv) = (y.view(), res_out.view());
    check_repeat_and_graph::<T>(gpu, "layernorm", &mut [&mut y], &|s| {
        layernorm(gpu, s, &xv, &wv, &bv, &mut yv.index(..), rows, cols, &opts).map(|_| ())
    });
    check_repeat_and_graph::<T>(
        gpu,
        "layernorm_residual_into",
        &mut [&mut res_out, &mut y],
        &|s| {
            let (mut r, mut y) = (rv.index(..), yv.index(..));
            layernorm_residual_into(
                gpu, s, &xv, &dyv, &mut r, &wv, &bv, &mut y, rows, cols, &opts,
            )
            .map(|_| ())
        },
    );
    // Few short rows too: one launch writes dx, dw and db.
    for (what, (r, c)) in [
        ("layernorm_backward", (rows, cols)),
        ("layernorm_backward in one launch", (16, 768)),
    ] {
        let mut dx = Guarded::<T>::poisoned(r * c, 0);
        let [mut dw, mut db] = [(); 2].map(|_| Guarded::<T>::poisoned(c, 0));
        let (dxv, dwv, dbv) = (dx.view(), dw.view(), db.view());
        check_repeat_and_graph::<T>(gpu, what, &mut [&mut dx, &mut dw, &mut db], &|s| {
            let (mut dx, mut dw, mut db, mut wsv) =
                (dxv.index(..), dwv.index(..), dbv.index(..), ws.index(..));
            layernorm_backward(
                gpu, s, &xv, &wv, &dyv, &mut dx, &mut dw, &mut db, &mut wsv, r, c, &bwd,
            )
            .map(|_| ())
        });
    }
}

// ------------------------------------------------------------------ bad input

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn layernorm_bad_input_is_refused_before_launch() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let x = Guarded::<bf16>::new(&[bf16::ONE; 64], 0);
    let w = Guarded::<bf16>::new(&[bf16::ONE; 8], 0);
    let y = Guarded::<bf16>::poisoned(64, 0);
    let opts = LayerNormOptions::default();
    let (xv, wv) = (x.view(), w.view());
    let forward = |b: &_, y: &mut _, rows, cols, opts: &LayerNormOptions| {
        layernorm(&gpu, &stream, &xv, &wv, b, y, rows, cols, opts)
    };
    refused(
        "zero columns",
        forward(&wv, &mut y.view(), 8, 0, &opts),
        "column",
    );
    refused(
        "short b",
        forward(&wv.index(..4), &mut y.view(), 8, 8, &opts),
        "`b`",
    );
    refused(
        "short y",
        forward(&wv, &mut y.view().index(..60), 8, 8, &opts),
        "`y`",
    );
    refused(
        "y overlaps x",
        forward(&wv, &mut xv.index(..), 8, 8, &opts),
        "overlap",
    );
    refused(
        "y overlaps b",
        forward(&y.view().index(..8), &mut y.view(), 8, 8, &opts),
        "overlap",
    );
    let bad_eps = LayerNormOptions { eps: -1.0, ..opts };
    refused(
        "negative eps",
        forward(&wv, &mut y.view(), 8, 8, &bad_eps),
        "eps",
    );
    let bad_threads = LayerNormOptions {
        threads: Threads::PerRow(48),
        ..opts
    };
    refused(
        "48 threads",
        forward(&wv, &mut y.view(), 8, 8, &bad_threads),
        "threads per row",
    );
    let r = Guarded::<bf16>::new(&[bf16::ONE; 64], 0);
    refused(
        "residual_out overlaps residual_in",
        layernorm_residual_into(
            &gpu,
            &stream,
            &xv,
            &r.view(),
            &mut r.view().index(8..),
            &wv,
            &wv,
            &mut y.view(),
            7,
            8,
            &opts,
        ),
        "overlap",
    );
    refused(
        "in-place residual overlaps y",
        layernorm_residual(
            &gpu,
            &stream,
            &xv,
            &mut y.view(),
            &wv,
            &wv,
            &mut y.view(),
            8,
            8,
            &opts,
        ),
        "overlap",
    );

    let (dw, db) = (
        Guarded::<bf16>::poisoned(8, 0),
        Guarded::<bf16>::poisoned(8, 0),
    );
    let (small, big) = (
        gpu_common::uploaded(&[0f32; 4]).unwrap(),
        gpu_common::uploaded(&vec![0f32; 1 << 16]).unwrap(),
    );
    // Two ranges of a row each: a workspace (one range, or the default's one block, has none).
    let bwd = LayerNormBwdOptions {
        threads: Threads::PerRow(64),
        blocks: Some(2),
        ..Default::default()
    };
    let zero_blocks = LayerNormBwdOptions {
        blocks: Some(0),
        ..bwd
    };
    // (what, db given as dw's buffer, workspace, options, what the error names)
    let cases = [
        (
            "short workspace",
            false,
            small.index(..),
            bwd,
            "`workspace`",
        ),
        ("db overlaps dw", true, big.index(..), bwd, "overlap"),
        ("misaligned workspace", false, big.index(1..), bwd, "align"),
        ("zero blocks", false, big.index(..), zero_blocks, "block"),
    ];
    for (what, db_is_dw, mut workspace, opts, needle) in cases {
        let mut db_view = if db_is_dw { dw.view() } else { db.view() };
        let (mut dx, mut dw) = (y.view(), dw.view());
        let r = layernorm_backward(
            &gpu,
            &stream,
            &xv,
            &wv,
            &xv,
            &mut dx,
            &mut dw,
            &mut db_view,
            &mut workspace,
            8,
            8,
            &opts,
        );
        refused(&format!("backward: {what}"), r, needle);
    }
    let nan_eps = LayerNormBwdOptions {
        eps: f32::NAN,
        ..bwd
    };
    refused(
        "backward: NaN eps",
        layernorm_backward_plan::<Bf16>(&gpu, 8, 8, &nan_eps),
        "eps",
    );
    // Accumulators of 2^20 columns: 8 MiB per row group, past any GPU's shared memory.
    refused(
        "backward: accumulators past shared memory",
        layernorm_backward_plan::<Bf16>(&gpu, 1, 1 << 20, &bwd),
        "shared memory",
    );
    // Nothing ran: the outputs still hold the poison everywhere.
    sync(&stream);
    for (name, buf) in [("y", &y), ("dw", &dw), ("db", &db)] {
        assert!(
            buf.read(name).iter().all(|v| v.is_poison()),
            "a refused launch wrote {name}"
        );
    }
}
