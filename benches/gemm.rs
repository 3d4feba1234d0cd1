//! The GEMM family against cuBLAS in the same process (paired alternating windows, same
//! layout and dtypes, the comparator named literally: `cuBLAS bf16 in, bf16 out,
//! CUBLAS_COMPUTE_32F, default math`, ...), at the shapes:
//!
//! - M = N = K in {2048, 4096, 8192}, (4096, 14336, 4096), (4096, 4096, 14336): every tier,
//!   every layout;
//! - decode: M in {1, 8, 16, 64, 128} with N = K in {4096, 8192}, bf16 and fp16, layouts NN
//!   and NT (the weights as B, stored [K][N] or [N][K]), weights rotated past L2, timed as
//!   CUDA-graph replay so the reading is the kernel's latency.
//!
//! Each reading's STAMP names the entry point (its tile suffix is the selector's choice); a
//! `GEMM-STAMP` line adds the tile, grid and flags. Every call lends the workspace the plan
//! asks for, so TF32 on the sm_90a route is timed with its operand pass included, and split K
//! with its reduce pass. Checks (docs/kernels/gemm.md): bf16 and fp16 at 4096^3, 8192^3,
//! 4096x14336x4096 and 4096x4096x14336 >= 0.95x cuBLAS in every layout, TF32 at 4096^3 and
//! 8192^3 >= 0.95x cuBLAS TF32, pedantic f32 >= 60% of cuBLAS pedantic fp32 (layout NN),
//! decode M <= 16 at 4096 >= 1.2x cuBLAS (NN and NT).
//! `--quick`: bf16 NN at 4096^3 and 8192^3 and decode M in {1, 16} at 4096.
//! `CUBINS_GEMM_LAYOUTS=nn,tn`: only those layouts of the large shapes (and of the decode
//! grid, NN and NT by default).
//! `CUBINS_GEMM_SWEEP=1`: also every bf16 schedule forced at the checked shapes (selector
//! calibration); `CUBINS_GEMM_SWEEP=tma` only the schedules whose label holds `tma`.
//! `CUBINS_GEMM_DECODE_GRID=1`: instead, decode over M in {1, 8, 16} x (N, K) in every pair of
//! {4096, 8192, 14336, 28672}, layouts NN and NT, each >= 1.0x cuBLAS (with
//! `CUBINS_GEMM_SWEEP`, each cell on the swept schedules too).
//! `CUBINS_GEMM_TIERS=tf32,bf16`: only those tiers (names as on the STAMP line).
//! `CUBINS_GEMM_NO_WORKSPACE=1`: every call is lent a one-float workspace (no operand pass,
//! no split).
//! `CUBINS_GEMM_RANDOM=48`: instead, 48 seeded random bf16 shapes in every layout, a quarter of
//! them with odd leading dimensions, and their ratio distribution (selector calibration);
//! `CUBINS_GEMM_RANDOM_SHAPES=12..24` (or `0,5,9`) runs only those shapes of the set.

mod harness;

use cubins::ops::gemm::{
    device_facts, gemm_with_workspace, gemm_workspace_len, plan, GemmDesc, GemmInput, GemmLaunch,
    GemmOutput, Layout, Schedule, Tier,
};
use cubins::runtime::{Bf16, Gpu, F16};
use cust::memory::DeviceBuffer;
use cust::stream::Stream;
use harness::gpu::buffers::{download, poisoned, upload};
use harness::gpu::cublas::Cublas;
use harness::gpu::driver::Result;
use harness::gpu::gemm::CublasGemm;
use harness::gpu::session::{self, route_of, Session};
use harness::gpu::timer::{Identity, Workload};
use harness::host::gemm::{
    check_entries, random_bytes, sample_entries, sweep_shapes, GemmTypes, RowMajorGemm,
};
use harness::host::reading::Work;
use harness::host::rotation::{Residency, RotationPlan};
use harness::host::stamp::Geometry;
use std::process::ExitCode;

/// (M, N, K) of the large shapes.
const LARGE: &[(usize, usize, usize)] = &[
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (4096, 14336, 4096),
    (4096, 4096, 14336),
];
const DECODE_M: &[usize] = &[1, 8, 16, 64, 128];
const DECODE_NK: &[usize] = &[4096, 8192];

/// A tier with its element types and comparator.
#[derive(Debug, Clone, Copy)]
struct TierSpec {
    tier: Tier,
    cublas: GemmTypes,
    /// The acceptance bar at the checked large shapes, as a fraction of cuBLAS's speed.
    bar: f64,
}

const BF16: TierSpec = TierSpec {
    tier: Tier::Bf16,
    cublas: GemmTypes::BF16,
    bar: 0.95,
};
const FP16: TierSpec = TierSpec {
    tier: Tier::Fp16,
    cublas: GemmTypes::FP16,
    bar: 0.95,
};
const TF32: TierSpec = TierSpec {
    tier: Tier::Tf32,
    cublas: GemmTypes::TF32,
    bar: 0.95,
};
const PEDANTIC: TierSpec = TierSpec {
    tier: Tier::F32Pedantic,
    cublas: GemmTypes::FP32_PEDANTIC,
    bar: 0.60,
};
const DECODE_BAR: f64 = 1.2;
/// `CUBINS_GEMM_SWEEP=1`: also every schedule of the tier, forced, at the checked shapes (bf16
/// large shapes, decode M in {1, 16, 64, 128} at 4096) or at each shape of the random set, to
/// calibrate the selector; any other value: only the schedules whose label contains it.
const SWEEP_ENV: &str = "CUBINS_GEMM_SWEEP";
/// `CUBINS_GEMM_LAYOUTS=nn,nt`: the layouts of the large shapes (default: NN with `--quick`,
/// else all) and of the decode grid (default: NN and NT).
const LAYOUTS_ENV: &str = "CUBINS_GEMM_LAYOUTS";
/// `CUBINS_GEMM_DECODE_GRID=1`: the decode grid of the acceptance list instead: M in
/// `GRID_M` x (N, K) in `GRID_NK`^2, NN and NT, every cell >= `GRID_BAR`x cuBLAS.
const DECODE_GRID_ENV: &str = "CUBINS_GEMM_DECODE_GRID";
const GRID_M: &[usize] = &[1, 8, 16];
const GRID_NK: &[usize] = &[4096, 8192, 14336, 28672];
const GRID_BAR: f64 = 1.0;
/// `CUBINS_GEMM_DECODE_GRID_N=28672`: only the grid's rows of these N (a grid longer than
/// one device call runs in parts).
const DECODE_GRID_N_ENV: &str = "CUBINS_GEMM_DECODE_GRID_N";
/// `CUBINS_GEMM_RANDOM=N`: instead, N seeded random bf16 shapes (`sweep_shapes`: M, N, K in
/// 1..=16384, every layout, a quarter with odd leading dimensions), each against cuBLAS, and
/// their distribution; `CUBINS_GEMM_RANDOM_SEED` picks another set.
const RANDOM_ENV: &str = "CUBINS_GEMM_RANDOM";
const RANDOM_SEED_ENV: &str = "CUBINS_GEMM_RANDOM_SEED";
/// `CUBINS_GEMM_RANDOM_SHAPES=A..B,I,...`: only these shapes of the set (a sweep longer than
/// one device call runs as slices; each SWEEP line names its shape's index).
const RANDOM_SHAPES_ENV: &str = "CUBINS_GEMM_RANDOM_SHAPES";
/// The random set's bounds: about 3 ms of cuBLAS per call, 256 MiB per bf16 operand.
const RANDOM_MAX_FLOPS: u64 = 1 << 41;
const RANDOM_MAX_ELEMENTS: usize = 1 << 27;
/// Buffer sets at most, on both sides: a call that moves less than 4x L2 / MAX_SETS (about 50
/// KB on a 50 MiB L2) stays L2-resident, where its reading is launch latency anyway; without a
/// cap the random set's 1 x 2 x 7 would allocate two million sets.
const MAX_SETS: usize = 4096;
/// Shapes under about 50 us are timed as graph replay.
const GRAPH_BELOW_FLOPS: u64 = 35_000_000_000;
/// The sweep's bars: every shape, and the median.
const RANDOM_EVERY_BAR: f64 = 0.80;
const RANDOM_MEDIAN_BAR: f64 = 0.95;
const TIERS_ENV: &str = "CUBINS_GEMM_TIERS";
/// `CUBINS_GEMM_SPLITS=S`: every reading forces S slices of K on the mma.sync tiles and the
/// decode ring walk (1: no split; S >= 2 is refused where the plan has neither), the
/// selector's otherwise.
const SPLITS_ENV: &str = "CUBINS_GEMM_SPLITS";

/// `CUBINS_GEMM_NO_WORKSPACE=1`: every call is lent a one-float workspace, room for no operand
/// pass and no split, which times the element path and the unsplit kernels where the plan
/// would use them.
const NO_WORKSPACE_ENV: &str = "CUBINS_GEMM_NO_WORKSPACE";

/// The forced split count of `SPLITS_ENV`, if set.
fn forced_splits() -> Result<Option<u32>> {
    match std::env::var(SPLITS_ENV) {
        Ok(v) => match v.trim().parse() {
            Ok(s) if s >= 1 => Ok(Some(s)),
            _ => Err(format!(
                "{SPLITS_ENV}={v}: expected a count of slices, at least 1"
            )),
        },
        Err(_) => Ok(None),
    }
}

/// One reading: tier, layout, (M, N, K), the leading dimensions' padding (A, B, C) and a
/// schedule forced instead of the selector's.
#[derive(Debug, Clone, Copy)]
struct Cell {
    spec: TierSpec,
    layout: Layout,
    shape: (usize, usize, usize),
    pad: [usize; 3],
    schedule: Option<Schedule>,
}

impl Cell {
    fn new(spec: TierSpec, layout: Layout, shape: (usize, usize, usize)) -> Cell {
        Cell {
            spec,
            layout,
            shape,
            pad: [0; 3],
            schedule: None,
        }
    }

    fn label(&self) -> String {
        let (m, n, k) = self.shape;
        let forced = match &self.schedule {
            Some(s) => format!(" forced {}", s.label()),
            None => String::new(),
        };
        let g = self.row_major();
        let ld = if self.pad == [0; 3] {
            String::new()
        } else {
            format!(" ld={},{},{}", g.lda(), g.ldb(), g.ldc())
        };
        format!(
            "{} {} {m}x{n}x{k}{ld}{forced}",
            self.spec.tier.name(),
            self.layout.name()
        )
    }

    /// The same operands for every arm and schedule of a shape.
    fn seed(&self) -> u64 {
        let (m, n, k) = self.shape;
        0x6E44 ^ (m as u64) << 32 ^ (n as u64) << 16 ^ k as u64
    }

    fn row_major(&self) -> RowMajorGemm {
        let (m, n, k) = self.shape;
        RowMajorGemm {
            m,
            n,
            k,
            trans_a: self.layout == Layout::TN,
            trans_b: self.layout == Layout::NT,
            pad: self.pad,
        }
    }
}

/// One buffer set of the rotation.
struct Set<T: GemmInput, O: GemmOutput> {
    a: DeviceBuffer<T>,
    b: DeviceBuffer<T>,
    c: DeviceBuffer<O>,
}

/// This crate's GEMM as a workload: the selector's plan for the shape, on rotated operands.
struct CubinsGemm<'g, T: GemmInput, O: GemmOutput> {
    gpu: &'g Gpu,
    spec: TierSpec,
    shape: RowMajorGemm,
    desc: GemmDesc,
    identity: Identity,
    rotation: RotationPlan,
    host_a: Vec<u8>,
    host_b: Vec<u8>,
    sets: Vec<Set<T, O>>,
    /// What the plan asks for (TF32 on wgmma: the rounded operands), rewritten by every
    /// call: one for all sets.
    workspace: DeviceBuffer<f32>,
    launch: Option<GemmLaunch>,
}

/// Elements of `T` from their little-endian bytes (the harness generates bytes).
fn from_bytes<T: bytemuck::Pod + Default>(bytes: &[u8]) -> Vec<T> {
    let mut v = vec![T::default(); bytes.len() / std::mem::size_of::<T>()];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
    v
}

impl<'g, T, O> CubinsGemm<'g, T, O>
where
    T: GemmInput + bytemuck::Pod + Default,
    O: GemmOutput + bytemuck::Pod + Default,
{
    fn new(s: &Session<'g>, cell: &Cell) -> Result<Self> {
        let (spec, seed) = (cell.spec, cell.seed());
        let shape = cell.row_major();
        shape.validate()?;
        let (na, nb, nc) = shape.elements();
        let (ti, to) = (
            spec.cublas.input.size_bytes(),
            spec.cublas.output.size_bytes(),
        );
        let rotation = RotationPlan::new(
            ((na + nb) * ti + nc * to) as u64,
            s.l2_bytes,
            Residency::StreamedAtMost(MAX_SETS),
        );
        // The same generator and seeds as the cuBLAS arm: both read the same values.
        let host_a = random_bytes(spec.cublas.input, na, seed);
        let host_b = random_bytes(spec.cublas.input, nb, seed.wrapping_add(1));
        let (a_dev, b_dev): (Vec<T>, Vec<T>) = (from_bytes::<T>(&host_a), from_bytes::<T>(&host_b));
        let mut sets = Vec::with_capacity(rotation.sets);
        for _ in 0..rotation.sets {
            sets.push(Set {
                a: upload(&a_dev)?,
                b: upload(&b_dev)?,
                c: poisoned::<O>(nc)?,
            });
        }
        let placeholder = Identity {
            kernel: String::new(),
            route: route_of(&s.gpu.route("copy_vec16").map_err(|e| e.to_string())?),
            toolkit: String::new(),
            geometry: None,
            dtype: String::new(),
            shape: String::new(),
            name: String::new(),
        };
        let desc = GemmDesc {
            choice: plan::Choice {
                schedule: cell.schedule,
                grid: None,
                splits: forced_splits()?,
            },
            lda: Some(shape.lda()),
            ldb: Some(shape.ldb()),
            ldc: Some(shape.ldc()),
            ..GemmDesc::new(cell.layout, shape.m, shape.n, shape.k)
        };
        let ws_len = match std::env::var_os(NO_WORKSPACE_ENV) {
            Some(v) if v == "1" => 0,
            _ => gemm_workspace_len(s.gpu, spec.tier, &desc).map_err(|e| e.to_string())?,
        };
        let mut w = CubinsGemm {
            gpu: s.gpu,
            spec,
            shape,
            desc,
            identity: placeholder,
            rotation,
            host_a,
            host_b,
            sets,
            workspace: poisoned::<f32>(ws_len.max(1))?,
            launch: None,
        };
        // One launch to learn the plan (and load the module) before the timer arms.
        let stream = s.gpu.stream().map_err(|e| e.to_string())?;
        let launch = w.launch(&stream, 0)?;
        stream.synchronize().map_err(|e| format!("{e:?}"))?;
        let route = s.gpu.route(&launch.plan.entry).map_err(|e| e.to_string())?;
        w.identity = Identity {
            kernel: launch.plan.entry.clone(),
            route: route_of(&route),
            toolkit: route.toolkit.into(),
            geometry: Some(Geometry {
                grid: [launch.plan.grid, 1, 1],
                block: [launch.plan.block, 1, 1],
                dynamic_smem_bytes: launch.plan.dynamic_smem_bytes,
            }),
            dtype: format!(
                "{} in, {} out",
                spec.cublas.input.name(),
                spec.cublas.output.name()
            ),
            shape: shape.to_string(),
            // A reading of the TF32 wgmma route times the operand pass and the GEMM together.
            name: format!(
                "{}{} ({})",
                match launch.plan.prepare {
                    Some(_) => format!("{} + ", plan::TF32_PREPARE_ENTRY),
                    None => String::new(),
                },
                launch.plan.entry,
                launch.plan.schedule.describe()
            ),
        };
        w.launch = Some(launch);
        Ok(w)
    }

    fn launch(&mut self, stream: &Stream, set: usize) -> Result<GemmLaunch> {
        let s = &mut self.sets[set];
        gemm_with_workspace(
            self.gpu,
            stream,
            &self.desc.with_tier(self.spec.tier),
            &s.a,
            &s.b,
            &mut s.c,
            None,
            &mut self.workspace,
        )
        .map_err(|e| e.to_string())
    }
}

impl<T, O> Workload for CubinsGemm<'_, T, O>
where
    T: GemmInput + bytemuck::Pod + Default,
    O: GemmOutput + bytemuck::Pod + Default,
{
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn work(&self) -> Option<Work> {
        Some(Work::Flops(self.shape.flops()))
    }

    fn rotation(&self) -> RotationPlan {
        self.rotation
    }

    fn enqueue(&mut self, stream: &Stream, set: usize) -> Result<()> {
        self.launch(stream, set).map(|_| ())
    }

    /// Every element of every set's C written (no all-ones bytes left), and sampled entries
    /// against the float64 reference (the cuBLAS arm's check and tolerance).
    fn verify(&mut self, stream: &Stream) -> Result<()> {
        stream
            .synchronize()
            .map_err(|e| format!("cuStreamSynchronize: {e:?}"))?;
        let entries = sample_entries(&self.shape, 28, 0x5eed);
        let width = self.spec.cublas.output.size_bytes();
        for (i, set) in self.sets.iter().enumerate() {
            let c: Vec<u8> = bytemuck::cast_slice(&download(&set.c)?).to_vec();
            // Row by row: the padding past each row of C is not the GEMM's to write.
            let row = self.shape.ldc() * width;
            let unwritten = c.chunks(row).enumerate().find_map(|(r, bytes)| {
                bytes[..self.shape.n * width]
                    .chunks(width)
                    .position(|v| v.iter().all(|&b| b == 0xFF))
                    .map(|j| (r, j))
            });
            if let Some((r, j)) = unwritten {
                return Err(format!("set {i}: C[{r},{j}] never written (poison left)"));
            }
            check_entries(
                &self.shape,
                &self.spec.cublas,
                &self.host_a,
                &self.host_b,
                &c,
                &entries,
            )
            .map_err(|e| format!("set {i}: {e}"))?;
        }
        Ok(())
    }
}

/// Measures one cell against cuBLAS (same layout, dtypes and operands); returns the speed
/// ratio of a clean reading (comparator p50 / candidate p50).
fn compare(s: &mut Session<'_>, cublas: &Cublas, cell: &Cell) -> Result<Option<f64>> {
    let mut theirs = CublasGemm::new(
        cublas,
        cell.row_major(),
        cell.spec.cublas,
        s.l2_bytes,
        Residency::StreamedAtMost(MAX_SETS),
        cell.seed(),
    )?;
    match cell.spec.tier {
        Tier::Bf16 => compare_with::<Bf16, Bf16>(s, cell, &mut theirs),
        Tier::Fp16 => compare_with::<F16, F16>(s, cell, &mut theirs),
        Tier::Tf32 | Tier::F32Pedantic => compare_with::<f32, f32>(s, cell, &mut theirs),
    }
}

fn compare_with<T, O>(
    s: &mut Session<'_>,
    cell: &Cell,
    theirs: &mut CublasGemm<'_>,
) -> Result<Option<f64>>
where
    T: GemmInput + bytemuck::Pod + Default,
    O: GemmOutput + bytemuck::Pod + Default,
{
    let mut ours = CubinsGemm::<T, O>::new(s, cell)?;
    if let Some(l) = &ours.launch {
        let line = l.stamp(s.gpu).map_err(|e| e.to_string())?;
        s.say(format!("GEMM-{line}"));
    }
    s.compare(&cell.label(), &mut ours, theirs)?;
    let r = s.readings().last().ok_or("no reading")?;
    Ok(r.comparator
        .as_ref()
        .filter(|_| r.is_clean())
        .map(|c| c.comparison.speed_ratio))
}

/// Every other schedule of the cell's tier and layout whose label contains `only` (`None`:
/// all), forced, where it applies.
fn sweep(s: &mut Session<'_>, cublas: &Cublas, cell: Cell, only: Option<&str>) -> Result<()> {
    let class = device_facts(s.gpu, cell.spec.tier)
        .map_err(|e| e.to_string())?
        .smem_class;
    for schedule in plan::schedules(cell.spec.tier, cell.layout, class)
        .into_iter()
        .filter(|s| only.map_or(true, |o| s.label().contains(o)))
    {
        let forced = Cell {
            schedule: Some(schedule),
            ..cell
        };
        match compare(s, cublas, &forced) {
            Ok(_) => {}
            // A schedule that does not apply (decode past M = 16) is refused before launch.
            Err(e) if e.contains("forced schedule") => {
                s.say(format!("{}: skipped ({e})", forced.label()))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn check_ratio(s: &mut Session<'_>, what: String, ratio: Option<f64>, bar: f64) {
    let detail = match ratio {
        Some(r) => format!("{:.1}% of cuBLAS's speed ({r:.3}x)", r * 100.0),
        None => "no clean reading".into(),
    };
    s.check(what, ratio.is_some_and(|r| r >= bar), detail);
}

/// The shape indices of `RANDOM_SHAPES_ENV`: comma-separated ranges `A..B` and single
/// indices, each below `count`, in the order given.
fn parse_indices(text: &str, count: usize) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let range = match part.split_once("..") {
            Some((a, b)) => a.trim().parse().ok()?..b.trim().parse().ok()?,
            None => {
                let i: usize = part.parse().ok()?;
                i..i + 1
            }
        };
        if range.start >= range.end || range.end > count {
            return None;
        }
        out.extend(range);
    }
    Some(out)
}

/// The random set against cuBLAS, then its distribution and the two checks; with
/// `CUBINS_GEMM_SWEEP` set, each shape then on every schedule that fits it (`only`: those
/// whose label holds it), which calibrates the selector shape by shape.
fn random_sweep(
    s: &mut Session<'_>,
    cublas: &Cublas,
    count: usize,
    seed: u64,
    indices: &[usize],
    span: &str,
    schedules: Option<Option<&str>>,
) -> Result<()> {
    let graph = s.timer.graph;
    let mut ratios = Vec::new();
    let set = sweep_shapes(count, seed, RANDOM_MAX_FLOPS, RANDOM_MAX_ELEMENTS);
    let span = format!("shapes {span} of {count}");
    for &index in indices {
        let g = set[index];
        let layout = match g.layout() {
            "TN" => Layout::TN,
            "NT" => Layout::NT,
            _ => Layout::NN,
        };
        let cell = Cell {
            pad: g.pad,
            ..Cell::new(BF16, layout, (g.m, g.n, g.k))
        };
        s.timer.graph = g.flops() < GRAPH_BELOW_FLOPS;
        let ratio = compare(s, cublas, &cell)?;
        s.say(format!(
            "SWEEP #{index} {} ratio={}",
            cell.label(),
            ratio_text(ratio)
        ));
        ratios.push((cell.label(), ratio));
        if let Some(only) = schedules {
            sweep(s, cublas, cell, only)?;
        }
    }
    s.timer.graph = graph;
    let mut clean: Vec<f64> = ratios.iter().filter_map(|(_, r)| *r).collect();
    clean.sort_by(f64::total_cmp);
    let at = |q: f64| clean[((clean.len() - 1) as f64 * q).round() as usize];
    if !clean.is_empty() {
        s.say(format!(
            "SWEEP distribution over {} clean of {} shapes: min {:.3} p10 {:.3} median {:.3} p90 {:.3} max {:.3}; {} at or above {RANDOM_EVERY_BAR}",
            clean.len(),
            ratios.len(),
            at(0.0),
            at(0.1),
            at(0.5),
            at(0.9),
            at(1.0),
            clean.iter().filter(|&&r| r >= RANDOM_EVERY_BAR).count()
        ));
    }
    check_every(
        s,
        format!("random sweep ({span}, seed {seed:#x}): every shape >= {RANDOM_EVERY_BAR}x cuBLAS"),
        &ratios,
        RANDOM_EVERY_BAR,
    );
    let median = (!clean.is_empty()).then(|| at(0.5));
    check_ratio(
        s,
        format!("random sweep ({span}): median >= {RANDOM_MEDIAN_BAR}x cuBLAS"),
        median,
        RANDOM_MEDIAN_BAR,
    );
    Ok(())
}

fn run(s: &mut Session<'_>) -> Result<()> {
    let cublas = Cublas::open(&s.timer.stream)?;
    s.record
        .fact("cuBLAS", format!("{} from {}", cublas.version, cublas.path));
    // `Some(None)`: every schedule; `Some(Some(part))`: those whose label holds it.
    let sweeping: Option<Option<String>> = std::env::var(SWEEP_ENV)
        .ok()
        .filter(|v| !v.is_empty() && v != "0")
        .map(|v| (v != "1").then_some(v));
    let schedules = sweeping.as_ref().map(|o| o.as_deref());
    let only_sweep = schedules.flatten();
    if let Ok(v) = std::env::var(RANDOM_ENV) {
        let count = v
            .parse()
            .map_err(|_| format!("{RANDOM_ENV}={v}: expected a number of shapes"))?;
        let seed = match std::env::var(RANDOM_SEED_ENV) {
            Ok(v) => u64::from_str_radix(v.trim_start_matches("0x"), 16)
                .map_err(|_| format!("{RANDOM_SEED_ENV}={v}: expected a hex seed"))?,
            Err(_) => 0x5EED,
        };
        let (indices, span) = match std::env::var(RANDOM_SHAPES_ENV) {
            Ok(v) => (
                parse_indices(&v, count).ok_or_else(|| {
                    format!(
                        "{RANDOM_SHAPES_ENV}={v}: expected ranges A..B and indices I, \
                         comma-separated, below {count}"
                    )
                })?,
                v,
            ),
            Err(_) => ((0..count).collect(), format!("0..{count}")),
        };
        return random_sweep(s, &cublas, count, seed, &indices, &span, schedules);
    }
    let quick = s.options.quick;

    let only = std::env::var(TIERS_ENV).ok();
    let wanted = |spec: &TierSpec| {
        only.as_deref().map_or(true, |list| {
            list.split(',').any(|t| t.trim() == spec.tier.name())
        })
    };
    let all: &[TierSpec] = if quick {
        &[BF16]
    } else {
        &[BF16, FP16, TF32, PEDANTIC]
    };
    let tiers: Vec<TierSpec> = all.iter().copied().filter(wanted).collect();
    if let Some(list) = &only {
        s.say(format!(
            "{TIERS_ENV}={list}: tiers {:?} only",
            tiers.iter().map(|t| t.tier.name()).collect::<Vec<_>>()
        ));
    }
    let chosen_layouts: Option<Vec<Layout>> = match std::env::var(LAYOUTS_ENV) {
        Ok(list) => Some(
            list.split(',')
                .map(|l| {
                    Layout::ALL
                        .into_iter()
                        .find(|x| x.name() == l.trim().to_lowercase())
                        .ok_or_else(|| format!("{LAYOUTS_ENV}={list}: expected nn, tn or nt"))
                })
                .collect::<Result<_>>()?,
        ),
        Err(_) => None,
    };
    if std::env::var(DECODE_GRID_ENV).is_ok_and(|v| v == "1") {
        // The decode kernels take NN and NT (A read as [M][K]).
        let layouts = chosen_layouts.unwrap_or_else(|| vec![Layout::NN, Layout::NT]);
        return decode_grid(s, &cublas, &tiers, &layouts, schedules);
    }
    let layouts = chosen_layouts.unwrap_or_else(|| {
        if quick {
            vec![Layout::NN]
        } else {
            Layout::ALL.to_vec()
        }
    });
    for &spec in &tiers {
        for &layout in &layouts {
            for &shape in LARGE {
                let (m, n, k) = shape;
                let cube = m == n && n == k && (m == 4096 || m == 8192);
                // The acceptance shapes: 16-bit at the four shapes in every layout, TF32 at
                // the cubes, pedantic f32 at the cubes in NN.
                let checked = match spec.tier {
                    Tier::Bf16 | Tier::Fp16 => m >= 4096,
                    Tier::Tf32 => cube,
                    Tier::F32Pedantic => cube && layout == Layout::NN,
                };
                if quick && !cube {
                    continue;
                }
                let cell = Cell::new(spec, layout, shape);
                let ratio = compare(s, &cublas, &cell)?;
                if checked {
                    let what = format!("{} >= {:.2}x cuBLAS", cell.label(), spec.bar);
                    check_ratio(s, what, ratio, spec.bar);
                    if sweeping.is_some() && spec.tier == Tier::Bf16 {
                        sweep(s, &cublas, cell, only_sweep)?;
                    }
                }
            }
        }
    }

    // Decode: weight-bandwidth-bound; graph replay so launch gaps do not count.
    let graph = s.timer.graph;
    s.timer.graph = true;
    let decode_all: &[TierSpec] = if quick { &[BF16] } else { &[BF16, FP16] };
    let decode_tiers: Vec<TierSpec> = decode_all.iter().copied().filter(wanted).collect();
    let decode_m: &[usize] = if quick { &[1, 16] } else { DECODE_M };
    let decode_nk: &[usize] = if quick { &DECODE_NK[..1] } else { DECODE_NK };
    for &spec in &decode_tiers {
        for layout in [Layout::NN, Layout::NT] {
            for &nk in decode_nk {
                for &m in decode_m {
                    let cell = Cell::new(spec, layout, (m, nk, nk));
                    let ratio = compare(s, &cublas, &cell)?;
                    if m <= 16 && nk == 4096 {
                        let what = format!("{} >= {DECODE_BAR}x cuBLAS", cell.label());
                        check_ratio(s, what, ratio, DECODE_BAR);
                    }
                    if sweeping.is_some() && spec.tier == Tier::Bf16 && nk == 4096 && m != 8 {
                        sweep(s, &cublas, cell, only_sweep)?;
                    }
                }
            }
        }
    }
    s.timer.graph = graph;
    Ok(())
}

/// The acceptance list's decode grid: every cell against cuBLAS as graph replay, >= `GRID_BAR`;
/// with `sweeping`, each cell also on every schedule `sweep` forces (the selector's
/// calibration: `CUBINS_GEMM_SWEEP=decode` times every decode walk at every cell).
fn decode_grid(
    s: &mut Session<'_>,
    cublas: &Cublas,
    tiers: &[TierSpec],
    layouts: &[Layout],
    sweeping: Option<Option<&str>>,
) -> Result<()> {
    let rows: Vec<usize> = match std::env::var(DECODE_GRID_N_ENV) {
        Ok(list) => list
            .split(',')
            .map(|v| match v.trim().parse() {
                Ok(n) if GRID_NK.contains(&n) => Ok(n),
                _ => Err(format!(
                    "{DECODE_GRID_N_ENV}={list}: expected N in {GRID_NK:?}"
                )),
            })
            .collect::<Result<_>>()?,
        Err(_) => GRID_NK.to_vec(),
    };
    let graph = s.timer.graph;
    s.timer.graph = true;
    let mut ratios = Vec::new();
    for &spec in tiers
        .iter()
        .filter(|t| matches!(t.tier, Tier::Bf16 | Tier::Fp16))
    {
        for &layout in layouts {
            for &n in &rows {
                for &k in GRID_NK {
                    for &m in GRID_M {
                        let cell = Cell::new(spec, layout, (m, n, k));
                        let ratio = compare(s, cublas, &cell)?;
                        s.say(format!("GRID {} ratio={}", cell.label(), ratio_text(ratio)));
                        ratios.push((cell.label(), ratio));
                        if let Some(only) = sweeping {
                            sweep(s, cublas, cell, only)?;
                        }
                    }
                }
            }
        }
    }
    s.timer.graph = graph;
    check_every(
        s,
        format!("decode grid: every cell >= {GRID_BAR}x cuBLAS"),
        &ratios,
        GRID_BAR,
    );
    Ok(())
}

/// The check that every labelled reading is clean and at least `bar`, naming the slowest.
fn check_every(s: &mut Session<'_>, what: String, ratios: &[(String, Option<f64>)], bar: f64) {
    let passing = ratios
        .iter()
        .filter(|(_, r)| r.is_some_and(|r| r >= bar))
        .count();
    let worst = ratios
        .iter()
        .min_by(|a, b| a.1.unwrap_or(0.0).total_cmp(&b.1.unwrap_or(0.0)));
    s.check(
        what,
        passing == ratios.len(),
        format!(
            "{passing} of {} at or above; slowest {}",
            ratios.len(),
            worst.map_or("none".into(), |(l, r)| format!("{l}: {r:?}"))
        ),
    );
}

/// A reading's ratio as the SWEEP and GRID lines print it.
fn ratio_text(ratio: Option<f64>) -> String {
    ratio.map_or("none".into(), |r| format!("{r:.3}"))
}

fn main() -> ExitCode {
    session::main("gemm", run)
}
