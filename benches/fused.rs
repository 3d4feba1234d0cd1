//! The fused kernels (RMSNorm and LayerNorm with and without a fused residual add, softmax,
//! SwiGLU, RoPE, and the RMSNorm, LayerNorm and softmax backward passes) in bf16 at the issue's
//! shapes, as % of the copy ceiling
//! measured in the same run, and at decode row counts by latency. docs/kernels/fused.md
//! states the bytes each op moves.
//!
//! Checks: forward ops >= 90% of the copy ceiling and backward ops >= 80% at the four large
//! shapes; with `CUBINS_TORCH_FUSED_JSON=<benches/torch_fused.py output>`, each large-shape
//! reading also faster than torch eager and, where the file has it (`--compile`),
//! torch.compile at the same op and shape.
//! `CUBINS_FUSED_SWEEP=1` adds readings at fixed threads per row (for the selector), at the
//! large shapes or at the grid's cells; `CUBINS_FUSED_SWEEP_BLOCKS=33,66,132` readings of the
//! backward norms at those fixed row ranges (blocks) with automatic threads.
//! `CUBINS_FUSED_GRID=1` times every op at every cell of the rows x cols grid (RoPE at head
//! sizes 64, 80 and 128) as CUDA-graph replay, instead of the large and decode shapes:
//! each cell >= 95% of the copy ceiling where the op moves >= 64 MB, and faster than torch
//! eager and torch.compile where the torch file has the cell (`torch_fused.py --grid`) and
//! rotated as many input sets (at most [`MAX_SETS`] on both sides); `CUBINS_FUSED_GRID_ROWS=1,2`
//! and `CUBINS_FUSED_GRID_COLS=768,8192` keep those rows and columns,
//! `CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,softmax_fwd` those ops (torch_fused.py's names). A shape an op refuses
//! by design (the LayerNorm backward's accumulators past shared memory) is reported as not
//! run, not timed.

mod harness;

#[allow(dead_code)]
#[path = "../tests/common/data.rs"]
mod data;
#[allow(dead_code)]
#[path = "../tests/common/reference.rs"]
mod reference;

use cubins::ops::layernorm::{
    layernorm, layernorm_backward, layernorm_backward_plan, layernorm_residual_into,
    LayerNormBwdOptions, LayerNormOptions,
};
use cubins::ops::rmsnorm::{
    rmsnorm, rmsnorm_backward, rmsnorm_backward_plan, rmsnorm_residual_into, RmsNormBwdOptions,
    RmsNormOptions,
};
use cubins::ops::rope::{rope, Pairing, RopeShape};
use cubins::ops::softmax::{softmax, softmax_backward};
use cubins::ops::swiglu::{swiglu, swiglu_interleaved};
use cubins::ops::{Launched, Threads};
use cubins::runtime::{Bf16, Error, Gpu, LaunchError};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use cust::stream::Stream;
use data::{max_row_relative_error, Elem};
use half::bf16;
use harness::gpu::buffers::{download, poisoned};
use harness::gpu::driver::cust_error;
use harness::gpu::driver::Result;
use harness::gpu::session::{self, route_of, Session};
use harness::gpu::timer::{Identity, Workload};
use harness::host::reading::{Reference, Work};
use harness::host::rotation::{Residency, RotationPlan};
use harness::host::stamp::Geometry;
use harness::host::torch::{TorchTimes, TORCH_MODES};
use std::process::ExitCode;

/// The shapes, rows x cols, bf16.
const LARGE: &[(usize, usize)] = &[(32768, 4096), (16384, 8192), (8192, 14336), (4096, 32768)];
/// Decode row counts, judged by latency, at these row lengths.
const DECODE_ROWS: &[usize] = &[1, 8, 64];
const DECODE_COLS: &[usize] = &[4096, 8192];
/// RoPE at a row shape: head_dim 128, cols / 128 q heads, a quarter as many k heads.
const HEAD_DIM: usize = 128;
/// The grid (`CUBINS_FUSED_GRID=1`): rows x cols, and RoPE's head sizes.
const GRID_ROWS: &[usize] = &[1, 2, 5, 16, 100, 1024, 4000, 16384, 32768];
const GRID_COLS: &[usize] = &[768, 2048, 3072, 6144, 8192, 14336, 20000, 32768];
const GRID_HEAD_DIMS: &[usize] = &[64, 80, 128];
/// In the grid, a cell whose op moves at least this many bytes is judged by bandwidth.
const GRID_BANDWIDTH_BYTES: u64 = 64 << 20;
const MIN_GRID_BANDWIDTH: f64 = 0.95;
/// Buffer sets at most, in every reading: calls that move less than 4x L2 / MAX_SETS (about
/// 1 MB on the H200) are L2-resident. benches/torch_fused.py rotates the same way, and a torch
/// reading is compared only where its set count is this bench's.
const MAX_SETS: usize = 256;
/// Host inputs repeat with a period of this many elements (whole rows; at least one row):
/// random data for every byte of a 6 GiB cell would take longer to make than to time.
const TILE_ELEMS: usize = 1 << 20;

const MIN_FORWARD: f64 = 0.90;
const MIN_BACKWARD: f64 = 0.80;
const TORCH_ENV: &str = "CUBINS_TORCH_FUSED_JSON";
const SWEEP_ENV: &str = "CUBINS_FUSED_SWEEP";
const SWEEP_BLOCKS_ENV: &str = "CUBINS_FUSED_SWEEP_BLOCKS";
const GRID_ENV: &str = "CUBINS_FUSED_GRID";
const GRID_ROWS_ENV: &str = "CUBINS_FUSED_GRID_ROWS";
const GRID_COLS_ENV: &str = "CUBINS_FUSED_GRID_COLS";
const GRID_OPS_ENV: &str = "CUBINS_FUSED_GRID_OPS";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    RmsNorm,
    RmsNormResidual,
    LayerNorm,
    LayerNormResidual,
    Softmax,
    Swiglu,
    SwigluInterleaved,
    /// NeoX RoPE at this head size.
    Rope(usize),
    RmsNormBackward,
    LayerNormBackward,
    SoftmaxBackward,
}

impl Op {
    const ALL: [Op; 11] = [
        Op::RmsNorm,
        Op::RmsNormResidual,
        Op::LayerNorm,
        Op::LayerNormResidual,
        Op::Softmax,
        Op::Swiglu,
        Op::SwigluInterleaved,
        Op::Rope(HEAD_DIM),
        Op::RmsNormBackward,
        Op::LayerNormBackward,
        Op::SoftmaxBackward,
    ];

    /// The grid's ops: every op, RoPE at each of the grid's head sizes.
    fn grid() -> Vec<Op> {
        let rows = Op::ALL.into_iter().filter(|op| !matches!(op, Op::Rope(_)));
        rows.chain(GRID_HEAD_DIMS.iter().map(|&h| Op::Rope(h)))
            .collect()
    }

    /// The name the torch script uses too.
    fn name(self) -> String {
        match self {
            Op::RmsNorm => "rmsnorm_fwd".into(),
            Op::RmsNormResidual => "rmsnorm_fwd_residual".into(),
            Op::LayerNorm => "layernorm_fwd".into(),
            Op::LayerNormResidual => "layernorm_fwd_residual".into(),
            Op::Softmax => "softmax_fwd".into(),
            Op::Swiglu => "swiglu_fwd".into(),
            Op::SwigluInterleaved => "swiglu_fwd_interleaved".into(),
            Op::Rope(head_dim) => format!("rope_neox_hd{head_dim}"),
            Op::RmsNormBackward => "rmsnorm_bwd".into(),
            Op::LayerNormBackward => "layernorm_bwd".into(),
            Op::SoftmaxBackward => "softmax_bwd".into(),
        }
    }

    fn is_backward(self) -> bool {
        matches!(
            self,
            Op::RmsNormBackward | Op::LayerNormBackward | Op::SoftmaxBackward
        )
    }

    /// Why the op does not run at this shape on this GPU, where it refuses it by design: the
    /// LayerNorm backward's dw and db accumulators past the shared memory of a block.
    fn refusal(self, gpu: &Gpu, rows: usize, cols: usize) -> Option<String> {
        if self != Op::LayerNormBackward {
            return None;
        }
        match layernorm_backward_plan::<Bf16>(gpu, rows, cols, &LayerNormBwdOptions::default()) {
            Err(e @ Error::Launch(LaunchError::SharedMemory { .. })) => Some(e.to_string()),
            _ => None,
        }
    }

    /// Whether threads per row is a choice of the op (the sweep varies it).
    fn has_row_geometry(self) -> bool {
        !matches!(self, Op::Swiglu | Op::Rope(_))
    }

    /// RoPE at a row shape: `cols / head_dim` q heads (at least 1), a quarter as many k heads
    /// (torch_fused.py's `rope_heads`).
    fn rope_shape(head_dim: usize, rows: usize, cols: usize) -> RopeShape {
        let q_heads = (cols / head_dim).max(1);
        RopeShape::new(rows, q_heads, (q_heads / 4).max(1), head_dim)
    }

    /// Host tensors the op reads (all bf16), in the order `enqueue` passes them.
    fn input_lens(self, rows: usize, cols: usize) -> Vec<usize> {
        let n = rows * cols;
        match self {
            Op::RmsNorm => vec![n, cols],
            Op::RmsNormResidual => vec![n, n, cols],
            Op::LayerNorm => vec![n, cols, cols],
            Op::LayerNormResidual => vec![n, n, cols, cols],
            Op::Softmax => vec![n],
            Op::Swiglu => vec![n, n],
            Op::SwigluInterleaved => vec![2 * n],
            Op::Rope(head_dim) => {
                let s = Op::rope_shape(head_dim, rows, cols);
                let half = s.tokens * s.rotary_dim / 2;
                vec![
                    s.tokens * s.q_heads * s.head_dim,
                    s.tokens * s.k_heads * s.head_dim,
                    half,
                    half,
                ]
            }
            Op::RmsNormBackward | Op::LayerNormBackward => vec![n, cols, n],
            Op::SoftmaxBackward => vec![n, n],
        }
    }

    /// Output tensors (all bf16; RoPE writes its inputs in place).
    fn output_lens(self, rows: usize, cols: usize) -> Vec<usize> {
        let n = rows * cols;
        match self {
            Op::RmsNorm
            | Op::LayerNorm
            | Op::Softmax
            | Op::Swiglu
            | Op::SwigluInterleaved
            | Op::SoftmaxBackward => vec![n],
            Op::RmsNormResidual | Op::LayerNormResidual => vec![n, n],
            Op::Rope(_) => vec![],
            Op::RmsNormBackward => vec![n, cols],
            Op::LayerNormBackward => vec![n, cols, cols],
        }
    }

    /// Bytes the op must move (docs/kernels/fused.md): every tensor it reads once and every
    /// tensor it writes once, bf16. The weight row counts once; so do RoPE's tables.
    fn bytes(self, rows: usize, cols: usize) -> u64 {
        let ins: usize = self.input_lens(rows, cols).iter().sum();
        let outs: usize = self.output_lens(rows, cols).iter().sum();
        let in_place = match self {
            Op::Rope(_) => self.input_lens(rows, cols)[..2].iter().sum(),
            _ => 0,
        };
        2 * (ins + outs + in_place) as u64
    }
}

/// One rotation set: the op's inputs and outputs on the device.
struct Set {
    inputs: Vec<DeviceBuffer<Bf16>>,
    outputs: Vec<DeviceBuffer<Bf16>>,
    workspace: Option<DeviceBuffer<f32>>,
}

struct FusedWorkload<'g> {
    gpu: &'g Gpu,
    op: Op,
    rows: usize,
    cols: usize,
    threads: Threads,
    /// The backward norms' row ranges (`None`: the plan's).
    blocks: Option<u32>,
    identity: Identity,
    plan: RotationPlan,
    /// The host inputs hold this many rows; device row `r` holds host row `r % tile_rows`.
    tile_rows: usize,
    host: Vec<Vec<bf16>>,
    sets: Vec<Set>,
}

/// Rows of host data per input: whole rows of at most [`TILE_ELEMS`], at least one.
fn tile_rows(op: Op, rows: usize, cols: usize) -> usize {
    let row_elems = op.input_lens(1, cols)[0].max(1);
    (TILE_ELEMS / row_elems).clamp(1, rows)
}

/// Fills `buf` with `tile` repeated: one upload, then device copies of what is filled.
fn fill_tiled(buf: &mut DeviceBuffer<Bf16>, tile: &[bf16]) -> Result<()> {
    let err = |e| cust_error("filling an input", e);
    buf.index(..tile.len())
        .copy_from(&to_dev(tile)[..])
        .map_err(err)?;
    let mut filled = tile.len();
    while filled < buf.len() {
        let n = filled.min(buf.len() - filled);
        let src = buf.index(..n);
        buf.index(filled..filled + n).copy_from(&src).map_err(err)?;
        filled += n;
    }
    Ok(())
}

fn to_dev(v: &[bf16]) -> Vec<Bf16> {
    v.iter().map(|&x| Bf16(x)).collect()
}

/// Inputs: uniform in [-1, 1) (weights around 1, RoPE tables a real cos/sin table).
fn host_inputs(op: Op, rows: usize, cols: usize, seed: u64) -> Vec<Vec<bf16>> {
    let mut rng = data::SplitMix64::new(seed);
    let mut tensors: Vec<Vec<bf16>> = op
        .input_lens(rows, cols)
        .into_iter()
        .map(|n| rng.fill::<bf16>(n, -1.0, 1.0))
        .collect();
    match op {
        Op::RmsNorm
        | Op::RmsNormResidual
        | Op::RmsNormBackward
        | Op::LayerNorm
        | Op::LayerNormResidual
        | Op::LayerNormBackward => {
            let w = if matches!(op, Op::RmsNormResidual | Op::LayerNormResidual) {
                2
            } else {
                1
            };
            tensors[w] = rng.fill::<bf16>(cols, 0.5, 1.5);
        }
        Op::Rope(head_dim) => {
            let s = Op::rope_shape(head_dim, rows, cols);
            let (c, si) = reference::rope_table(s.tokens, s.rotary_dim, 10000.0);
            tensors[2] = c.into_iter().map(bf16::from_f64).collect();
            tensors[3] = si.into_iter().map(bf16::from_f64).collect();
        }
        _ => {}
    }
    tensors
}

impl<'g> FusedWorkload<'g> {
    /// The op as its plan picks its launch.
    fn new(
        s: &Session<'g>,
        op: Op,
        rows: usize,
        cols: usize,
        seed: u64,
    ) -> Result<FusedWorkload<'g>> {
        Self::with_blocks(s, op, (rows, cols), (Threads::Auto, None), seed)
    }

    /// The op at fixed threads per row and (the backward norms) row ranges; `Auto` and `None`:
    /// the plan's.
    fn with_blocks(
        s: &Session<'g>,
        op: Op,
        (rows, cols): (usize, usize),
        (threads, blocks): (Threads, Option<u32>),
        seed: u64,
    ) -> Result<FusedWorkload<'g>> {
        let bytes = op.bytes(rows, cols);
        let plan = RotationPlan::new(bytes, s.l2_bytes, Residency::StreamedAtMost(MAX_SETS));
        let tile_rows = tile_rows(op, rows, cols);
        let host = host_inputs(op, tile_rows, cols, seed);
        let mut sets = Vec::with_capacity(plan.sets);
        for _ in 0..plan.sets {
            let inputs = host
                .iter()
                .zip(op.input_lens(rows, cols))
                .map(|(t, len)| {
                    // SAFETY: fill_tiled writes every element before anything reads it.
                    let mut buf = unsafe { DeviceBuffer::<Bf16>::uninitialized(len) }
                        .map_err(|e| cust_error("allocating an input", e))?;
                    fill_tiled(&mut buf, t)?;
                    Ok(buf)
                })
                .collect::<Result<Vec<_>>>()?;
            let outputs = op
                .output_lens(rows, cols)
                .into_iter()
                .map(poisoned::<Bf16>)
                .collect::<Result<Vec<_>>>()?;
            let workspace_len = match op {
                Op::RmsNormBackward => {
                    let opts = RmsNormBwdOptions {
                        threads,
                        blocks,
                        ..Default::default()
                    };
                    rmsnorm_backward_plan::<Bf16>(s.gpu, rows, cols, &opts)
                        .map(|p| Some(p.workspace_len()))
                }
                Op::LayerNormBackward => {
                    let opts = LayerNormBwdOptions {
                        threads,
                        blocks,
                        ..Default::default()
                    };
                    layernorm_backward_plan::<Bf16>(s.gpu, rows, cols, &opts)
                        .map(|p| Some(p.workspace_len()))
                }
                _ => Ok(None),
            }
            .map_err(|e| e.to_string())?;
            let workspace = workspace_len.map(poisoned::<f32>).transpose()?;
            sets.push(Set {
                inputs,
                outputs,
                workspace,
            });
        }
        let mut w = FusedWorkload {
            gpu: s.gpu,
            op,
            rows,
            cols,
            threads,
            blocks,
            identity: Identity {
                kernel: String::new(),
                route: route_of(&s.gpu.route("copy_vec16").map_err(|e| e.to_string())?),
                toolkit: String::new(),
                geometry: None,
                dtype: "bf16".into(),
                shape: format!("{rows}x{cols}"),
                name: String::new(),
            },
            plan,
            tile_rows,
            host,
            sets,
        };
        // One launch to learn the geometry the op chooses (and load the module).
        let stream = s.gpu.stream().map_err(|e| e.to_string())?;
        let launched = w.launch(&stream, 0)?;
        stream.synchronize().map_err(|e| format!("{e:?}"))?;
        let first = &launched[0];
        let route = s.gpu.route(first.kernel).map_err(|e| e.to_string())?;
        let kernels: Vec<&str> = launched.iter().map(|l| l.kernel).collect();
        let choices: Vec<String> = launched.iter().map(|l| l.choice.to_string()).collect();
        w.identity = Identity {
            kernel: kernels.join("+"),
            route: route_of(&route),
            toolkit: route.toolkit.into(),
            geometry: Some(Geometry {
                grid: first.config.grid,
                block: first.config.block,
                dynamic_smem_bytes: first.config.dynamic_smem_bytes,
            }),
            dtype: "bf16".into(),
            shape: match op {
                Op::Rope(head_dim) => {
                    let r = Op::rope_shape(head_dim, rows, cols);
                    format!("{}x({}+{})x{}", r.tokens, r.q_heads, r.k_heads, r.head_dim)
                }
                _ => format!("{rows}x{cols}"),
            },
            name: format!("{} ({})", kernels.join("+"), choices.join("; ")),
        };
        Ok(w)
    }

    fn launch(&mut self, stream: &Stream, set: usize) -> Result<Vec<Launched>> {
        let (gpu, rows, cols, threads, blocks) =
            (self.gpu, self.rows, self.cols, self.threads, self.blocks);
        let set = &mut self.sets[set];
        let i: Vec<DeviceSlice<Bf16>> = set.inputs.iter().map(|b| b.index(..)).collect();
        let mut o: Vec<DeviceSlice<Bf16>> = set.outputs.iter().map(|b| b.index(..)).collect();
        let err = |e: cubins::runtime::Error| e.to_string();
        let opts = RmsNormOptions {
            threads,
            ..Default::default()
        };
        let ln = LayerNormOptions {
            threads,
            ..Default::default()
        };
        Ok(match self.op {
            Op::RmsNorm => vec![
                rmsnorm(gpu, stream, &i[0], &i[1], &mut o[0], rows, cols, &opts).map_err(err)?,
            ],
            Op::RmsNormResidual => {
                let (res_out, y) = o.split_at_mut(1);
                vec![rmsnorm_residual_into(
                    gpu,
                    stream,
                    &i[0],
                    &i[1],
                    &mut res_out[0],
                    &i[2],
                    &mut y[0],
                    rows,
                    cols,
                    &opts,
                )
                .map_err(err)?]
            }
            Op::LayerNorm => {
                vec![
                    layernorm(gpu, stream, &i[0], &i[1], &i[2], &mut o[0], rows, cols, &ln)
                        .map_err(err)?,
                ]
            }
            Op::LayerNormResidual => {
                let (res_out, y) = o.split_at_mut(1);
                let (x, r, w, b) = (&i[0], &i[1], &i[2], &i[3]);
                let (res_out, y) = (&mut res_out[0], &mut y[0]);
                vec![
                    layernorm_residual_into(gpu, stream, x, r, res_out, w, b, y, rows, cols, &ln)
                        .map_err(err)?,
                ]
            }
            Op::Softmax => {
                vec![softmax(gpu, stream, &i[0], &mut o[0], rows, cols, threads).map_err(err)?]
            }
            Op::Swiglu => vec![swiglu(gpu, stream, &i[0], &i[1], &mut o[0]).map_err(err)?],
            Op::SwigluInterleaved => {
                vec![
                    swiglu_interleaved(gpu, stream, &i[0], &mut o[0], rows, cols, threads)
                        .map_err(err)?,
                ]
            }
            Op::Rope(head_dim) => {
                let shape = Op::rope_shape(head_dim, rows, cols);
                let (mut q, mut k) = (i[0].index(..), i[1].index(..));
                vec![rope(
                    gpu,
                    stream,
                    Pairing::Neox,
                    &mut q,
                    Some(&mut k),
                    &i[2],
                    &i[3],
                    shape,
                )
                .map_err(err)?]
            }
            Op::RmsNormBackward => {
                let opts = RmsNormBwdOptions {
                    threads,
                    blocks,
                    ..Default::default()
                };
                let mut ws = set.workspace.as_ref().ok_or("no workspace")?.index(..);
                let (dx, dw) = o.split_at_mut(1);
                rmsnorm_backward(
                    gpu, stream, &i[0], &i[1], &i[2], &mut dx[0], &mut dw[0], &mut ws, rows, cols,
                    &opts,
                )
                .map_err(err)?
                .iter()
                .cloned()
                .collect()
            }
            Op::LayerNormBackward => {
                let opts = LayerNormBwdOptions {
                    threads,
                    blocks,
                    ..Default::default()
                };
                let mut ws = set.workspace.as_ref().ok_or("no workspace")?.index(..);
                let [dx, dw, db] = &mut o[..] else {
                    return Err("three outputs".into());
                };
                let (x, w, dy) = (&i[0], &i[1], &i[2]);
                layernorm_backward(
                    gpu, stream, x, w, dy, dx, dw, db, &mut ws, rows, cols, &opts,
                )
                .map_err(err)?
                .iter()
                .cloned()
                .collect()
            }
            Op::SoftmaxBackward => {
                vec![
                    softmax_backward(gpu, stream, &i[0], &i[1], &mut o[0], rows, cols, threads)
                        .map_err(err)?,
                ]
            }
        })
    }

    /// Rows 0, rows / 2 and rows - 1 of set 0's outputs, after a fresh launch from the
    /// original inputs, against the float64 reference.
    fn check_sample(&mut self, stream: &Stream) -> Result<()> {
        let (rows, cols) = (self.rows, self.cols);
        // Fresh inputs (RoPE rotated them in place on every launch) and poisoned outputs.
        for (buf, host) in self.sets[0].inputs.iter_mut().zip(&self.host) {
            fill_tiled(buf, host)?;
        }
        for buf in &mut self.sets[0].outputs {
            buf.set_8(0xFF).map_err(|e| format!("re-poison: {e:?}"))?;
        }
        self.launch(stream, 0)?;
        stream.synchronize().map_err(|e| format!("{e:?}"))?;
        let f = |t: &[bf16]| data::to_f64(t);
        let pick = [0, rows / 2, rows - 1];
        let row = |t: &[bf16], r: usize, len: usize| f(&t[r * len..(r + 1) * len]);
        // Row r of an input is host row r % tile_rows (fill_tiled).
        let tile_rows = self.tile_rows;
        let in_row = |t: &[bf16], r: usize, len: usize| row(t, r % tile_rows, len);
        let h = &self.host;
        let outs: Vec<Vec<bf16>> = self.sets[0]
            .outputs
            .iter()
            .map(|b| download(b).map(|v| v.into_iter().map(|x| x.0).collect()))
            .collect::<Result<_>>()?;
        let eps = f64::from(RmsNormOptions::default().eps);
        let ln_eps = f64::from(LayerNormOptions::default().eps);
        for &r in &pick {
            let (got, want, len): (Vec<f64>, Vec<f64>, usize) = match self.op {
                Op::RmsNorm => (
                    row(&outs[0], r, cols),
                    reference::rmsnorm(&in_row(&h[0], r, cols), &f(&h[1]), cols, eps),
                    cols,
                ),
                Op::RmsNormResidual => {
                    let hr = reference::residual_add(
                        &in_row(&h[0], r, cols),
                        &in_row(&h[1], r, cols),
                        data::round_to::<bf16>,
                    );
                    let y = reference::rmsnorm(&hr, &f(&h[2]), cols, eps);
                    (
                        [row(&outs[0], r, cols), row(&outs[1], r, cols)].concat(),
                        [hr, y].concat(),
                        cols,
                    )
                }
                Op::LayerNorm => (
                    row(&outs[0], r, cols),
                    reference::layernorm(
                        &in_row(&h[0], r, cols),
                        &f(&h[1]),
                        &f(&h[2]),
                        cols,
                        ln_eps,
                    ),
                    cols,
                ),
                Op::LayerNormResidual => {
                    let hr = reference::residual_add(
                        &in_row(&h[0], r, cols),
                        &in_row(&h[1], r, cols),
                        data::round_to::<bf16>,
                    );
                    let y = reference::layernorm(&hr, &f(&h[2]), &f(&h[3]), cols, ln_eps);
                    (
                        [row(&outs[0], r, cols), row(&outs[1], r, cols)].concat(),
                        [hr, y].concat(),
                        cols,
                    )
                }
                Op::Softmax => (
                    row(&outs[0], r, cols),
                    reference::softmax(&in_row(&h[0], r, cols), cols),
                    cols,
                ),
                Op::Swiglu => (
                    row(&outs[0], r, cols),
                    reference::swiglu(&in_row(&h[0], r, cols), &in_row(&h[1], r, cols)),
                    cols,
                ),
                Op::SwigluInterleaved => {
                    let (g, u) = reference::split_gate_up(&in_row(&h[0], r, 2 * cols), cols);
                    (row(&outs[0], r, cols), reference::swiglu(&g, &u), cols)
                }
                Op::Rope(head_dim) => {
                    let s = Op::rope_shape(head_dim, rows, cols);
                    let q_len = s.q_heads * s.head_dim;
                    let mut got = vec![bf16::ZERO; q_len];
                    let q = self.sets[0].inputs[0].index(r * q_len..(r + 1) * q_len);
                    let mut dev = to_dev(&got);
                    q.copy_to(&mut dev[..]).map_err(|e| format!("{e:?}"))?;
                    got = dev.into_iter().map(|x| x.0).collect();
                    let half = s.rotary_dim / 2;
                    let want = reference::rope(
                        &in_row(&h[0], r, q_len),
                        &in_row(&h[2], r, half),
                        &in_row(&h[3], r, half),
                        s.q_heads,
                        s.head_dim,
                        s.rotary_dim,
                        reference::Pairing::Neox,
                    );
                    (f(&got), want, s.head_dim)
                }
                Op::RmsNormBackward => {
                    // One row's dx needs only that row (dw sums every row: checked for poison).
                    let g = reference::rmsnorm_backward(
                        &in_row(&h[0], r, cols),
                        &f(&h[1]),
                        &in_row(&h[2], r, cols),
                        cols,
                        eps,
                    );
                    (row(&outs[0], r, cols), g.dx, cols)
                }
                Op::LayerNormBackward => {
                    // One row's dx needs only that row (dw and db sum every row: checked
                    // for poison).
                    let g = reference::layernorm_backward(
                        &in_row(&h[0], r, cols),
                        &f(&h[1]),
                        &in_row(&h[2], r, cols),
                        cols,
                        ln_eps,
                    );
                    (row(&outs[0], r, cols), g.dx, cols)
                }
                Op::SoftmaxBackward => (
                    row(&outs[0], r, cols),
                    reference::softmax_backward(
                        &in_row(&h[0], r, cols),
                        &in_row(&h[1], r, cols),
                        cols,
                    ),
                    cols,
                ),
            };
            let (err, at) = max_row_relative_error(&got, &want, len);
            if err.is_nan() || err > bf16::TOLERANCE {
                return Err(format!(
                    "row {r}: error {err:.3e} of the row's scale at {at:?} exceeds {:.0e}",
                    bf16::TOLERANCE
                ));
            }
        }
        Ok(())
    }
}

impl Workload for FusedWorkload<'_> {
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn work(&self) -> Option<Work> {
        Some(Work::Bytes(self.op.bytes(self.rows, self.cols)))
    }

    fn rotation(&self) -> RotationPlan {
        self.plan
    }

    fn enqueue(&mut self, stream: &Stream, set: usize) -> Result<()> {
        self.launch(stream, set).map(|_| ())
    }

    /// Every output element of every set written (no poison left), then sampled rows
    /// against the float64 reference.
    fn verify(&mut self, stream: &Stream) -> Result<()> {
        stream
            .synchronize()
            .map_err(|e| format!("cuStreamSynchronize: {e:?}"))?;
        for (si, set) in self.sets.iter().enumerate() {
            for (oi, out) in set.outputs.iter().enumerate() {
                let v = download(out)?;
                if let Some(i) = v.iter().position(|x| x.0.is_poison()) {
                    return Err(format!(
                        "set {si} output {oi}: element {i} never written (poison left)"
                    ));
                }
            }
        }
        self.check_sample(stream)
    }
}

/// The torch readings of the file `$CUBINS_TORCH_FUSED_JSON` names, if it names one.
fn load_torch() -> Option<std::result::Result<TorchTimes, String>> {
    let path = std::env::var(TORCH_ENV).ok().filter(|p| !p.is_empty())?;
    Some(
        std::fs::read_to_string(&path)
            .map_err(|e| format!("{path}: {e}"))
            .and_then(|text| TorchTimes::parse(&path, &text)),
    )
}

/// Threads per row the sweep tries at a shape: powers of two from 32 to 1024 (a count beyond
/// the loaded kernel's maximum is refused and skipped). A fixed count keeps the RMSNorm
/// backward on its whole-row kernel: at 1024 it is the baseline of the cluster kernel.
fn sweep_threads() -> Vec<u32> {
    (5..=10).map(|p| 1u32 << p).collect()
}

/// The fixed launches timed beside each automatic reading: threads per row
/// (`CUBINS_FUSED_SWEEP=1`, the selector's evidence) and the backward norms' row ranges
/// (`CUBINS_FUSED_SWEEP_BLOCKS=b,b`, the range rule's).
struct Sweep {
    threads: bool,
    blocks: Vec<u32>,
}

impl Sweep {
    fn from_env() -> Result<Sweep> {
        let blocks = match std::env::var(SWEEP_BLOCKS_ENV) {
            Ok(list) => list
                .split(',')
                .filter(|b| !b.trim().is_empty())
                .map(|b| {
                    b.trim()
                        .parse()
                        .map_err(|_| format!("${SWEEP_BLOCKS_ENV}: `{b}` is not a block count"))
                })
                .collect::<Result<Vec<u32>>>()?,
            Err(_) => Vec::new(),
        };
        Ok(Sweep {
            threads: std::env::var(SWEEP_ENV).is_ok_and(|v| v == "1"),
            blocks,
        })
    }

    /// The op's fixed launches: (label suffix, threads, row ranges).
    fn choices(&self, op: Op) -> Vec<(String, (Threads, Option<u32>))> {
        let mut out = Vec::new();
        if self.threads && op.has_row_geometry() {
            out.extend(
                sweep_threads()
                    .into_iter()
                    .map(|t| (format!("threads={t}"), (Threads::PerRow(t), None))),
            );
        }
        if matches!(op, Op::RmsNormBackward | Op::LayerNormBackward) {
            out.extend(
                self.blocks
                    .iter()
                    .map(|&b| (format!("blocks={b}"), (Threads::Auto, Some(b)))),
            );
        }
        out
    }

    /// The op at each of its fixed launches, after its automatic reading (a launch the op
    /// refuses, beyond its maximum, is skipped).
    fn measure(
        &self,
        s: &mut Session<'_>,
        op: Op,
        shape: (usize, usize),
        seed: u64,
        label: &str,
        ceiling: Option<&Reference>,
    ) -> Result<()> {
        for (suffix, choice) in self.choices(op) {
            let Ok(mut w) = FusedWorkload::with_blocks(s, op, shape, choice, seed) else {
                continue;
            };
            s.measure(&format!("{label} {suffix}"), &mut w, ceiling.cloned())?;
        }
        Ok(())
    }
}

fn run(s: &mut Session<'_>) -> Result<()> {
    let ceiling = s.copy_ceiling(1 << 30)?;
    let torch = match load_torch() {
        Some(Ok(t)) => {
            s.say(format!(
                "torch times from ${TORCH_ENV} ({} readings)",
                t.0.len()
            ));
            Some(t)
        }
        Some(Err(e)) => return Err(format!("${TORCH_ENV}: {e}")),
        None => {
            s.say(format!("no torch comparison: ${TORCH_ENV} is not set"));
            None
        }
    };
    if std::env::var(GRID_ENV).is_ok_and(|v| v == "1") {
        return run_grid(s, &ceiling, torch.as_ref());
    }
    let large: &[(usize, usize)] = if s.options.quick { &LARGE[..2] } else { LARGE };
    let sweep = Sweep::from_env()?;

    for &(rows, cols) in large {
        for op in Op::ALL {
            let seed = 0xF05E ^ (rows as u64) << 20 ^ cols as u64;
            let label = format!("{} {rows}x{cols}", op.name());
            if let Some(why) = op.refusal(s.gpu, rows, cols) {
                s.say(format!("{label}: not run, the op refuses the shape: {why}"));
                continue;
            }
            let mut w = FusedWorkload::new(s, op, rows, cols, seed)?;
            s.measure(&label, &mut w, Some(ceiling.clone()))?;
            let sets = w.plan.sets;
            drop(w);
            let bar = if op.is_backward() {
                MIN_BACKWARD
            } else {
                MIN_FORWARD
            };
            let cell = Cell {
                op,
                rows,
                cols,
                sets,
            };
            judge(s, torch.as_ref(), &label, cell, Some(bar))?;
            sweep.measure(s, op, (rows, cols), seed, &label, Some(&ceiling))?;
        }
    }

    // Decode: a handful of rows, launch-bound; timed as CUDA-graph replay so the reading is
    // the kernel's latency, not the host's launch rate.
    let graph = s.timer.graph;
    s.timer.graph = true;
    let decode_cols: &[usize] = if s.options.quick {
        &DECODE_COLS[..1]
    } else {
        DECODE_COLS
    };
    for &cols in decode_cols {
        for &rows in DECODE_ROWS {
            for op in Op::ALL {
                let mut w = FusedWorkload::new(s, op, rows, cols, 0xDEC0DE ^ rows as u64)?;
                s.measure(&format!("{} decode {rows}x{cols}", op.name()), &mut w, None)?;
            }
        }
    }
    s.timer.graph = graph;
    Ok(())
}

/// Every op at every cell of the grid, as CUDA-graph replay; `--quick` takes a corner of it.
fn run_grid(s: &mut Session<'_>, ceiling: &Reference, torch: Option<&TorchTimes>) -> Result<()> {
    let graph = s.timer.graph;
    s.timer.graph = true;
    let (rows_list, cols_list) = if s.options.quick {
        (vec![1, 5, 1024, 32768], vec![768, 8192, 32768])
    } else {
        (
            grid_axis(GRID_ROWS_ENV, "row", GRID_ROWS)?,
            grid_axis(GRID_COLS_ENV, "column count", GRID_COLS)?,
        )
    };
    let ops = grid_ops()?;
    let sweep = Sweep::from_env()?;
    for rows in rows_list {
        for &cols in &cols_list {
            for &op in &ops {
                let label = format!("{} {rows}x{cols}", op.name());
                if let Some(why) = op.refusal(s.gpu, rows, cols) {
                    s.say(format!("{label}: not run, the op refuses the shape: {why}"));
                    continue;
                }
                let seed = 0x6E1D ^ (rows as u64) << 20 ^ cols as u64;
                let bytes = op.bytes(rows, cols);
                let by_bandwidth = bytes >= GRID_BANDWIDTH_BYTES;
                let mut w = match FusedWorkload::new(s, op, rows, cols, seed) {
                    Ok(w) => w,
                    Err(e) => {
                        s.check(format!("{label} runs"), false, e);
                        continue;
                    }
                };
                s.measure(&label, &mut w, by_bandwidth.then(|| ceiling.clone()))?;
                let sets = w.plan.sets;
                drop(w);
                let swept = by_bandwidth.then_some(ceiling);
                sweep.measure(s, op, (rows, cols), seed, &label, swept)?;
                let bar = by_bandwidth.then_some(MIN_GRID_BANDWIDTH);
                judge(
                    s,
                    torch,
                    &label,
                    Cell {
                        op,
                        rows,
                        cols,
                        sets,
                    },
                    bar,
                )?;
            }
        }
    }
    s.timer.graph = graph;
    Ok(())
}

/// The grid's values on one axis, or those the variable keeps (`1,2,5`: a grid split over runs).
fn grid_axis(var: &str, what: &str, grid: &[usize]) -> Result<Vec<usize>> {
    let Ok(list) = std::env::var(var) else {
        return Ok(grid.to_vec());
    };
    list.split(',')
        .map(|v| match v.trim().parse::<usize>() {
            Ok(v) if grid.contains(&v) => Ok(v),
            _ => Err(format!(
                "${var}: `{v}` is not a grid {what} (the grid's: {grid:?})"
            )),
        })
        .collect()
}

/// The grid's ops, or those the variable names (`rmsnorm_fwd,softmax_fwd`).
fn grid_ops() -> Result<Vec<Op>> {
    let all = Op::grid();
    let Ok(list) = std::env::var(GRID_OPS_ENV) else {
        return Ok(all);
    };
    list.split(',')
        .map(|name| {
            all.iter()
                .copied()
                .find(|op| op.name() == name.trim())
                .ok_or_else(|| {
                    let names: Vec<String> = all.iter().map(|op| op.name()).collect();
                    format!("${GRID_OPS_ENV}: `{name}` is not a grid op (the grid's: {names:?})")
                })
        })
        .collect()
}

/// What a reading measured: the op, its shape, and the buffer sets its windows rotated.
#[derive(Clone, Copy)]
struct Cell {
    op: Op,
    rows: usize,
    cols: usize,
    sets: usize,
}

/// Checks the last reading (`label`): at least `bar` of the copy ceiling where one is given,
/// and faster than each torch mode the file has at this op and shape, where torch rotated as
/// many input sets and its outputs with them (otherwise a failed check, not a comparison).
fn judge(
    s: &mut Session<'_>,
    torch: Option<&TorchTimes>,
    label: &str,
    cell: Cell,
    bar: Option<f64>,
) -> Result<()> {
    let Cell {
        op,
        rows,
        cols,
        sets,
    } = cell;
    let reading = s.readings().last().ok_or("no reading")?;
    let (clean, fraction, p50) = (
        reading.is_clean(),
        reading.fraction_of_reference(),
        reading.summary.p50,
    );
    if let Some(bar) = bar {
        s.check(
            format!("{label} >= {:.0}% of the copy ceiling", bar * 100.0),
            clean && fraction.is_some_and(|f| f >= bar),
            format!(
                "{:.1}%{}",
                fraction.unwrap_or(0.0) * 100.0,
                if clean { "" } else { " (reading flagged)" }
            ),
        );
    }
    for (mode, name) in TORCH_MODES {
        let Some(t) = torch.and_then(|t| t.get(mode, &op.name(), rows, cols)) else {
            continue;
        };
        if let Some(why) = t.not_comparable(sets) {
            s.check(format!("{label} faster than {name}"), false, why);
            continue;
        }
        let t = t.median_us;
        s.check(
            format!("{label} faster than {name}"),
            clean && p50 < t,
            format!("p50 {p50:.2} us vs {name} {t:.2} us: {:.2}x", t / p50),
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    session::main("fused", run)
}
