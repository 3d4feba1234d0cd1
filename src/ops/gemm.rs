//! GEMM (`cuda/gemm_*.cu`, docs/kernels/gemm.md): `C = alpha * op(A) op(B) + beta * C`, plus an
//! optional f32 bias per column, on row-major storage in layouts NN, TN and NT, any M, N, K.
//!
//! Tiers: bf16 and fp16 inputs on tensor cores (f32 accumulation, output in the input type
//! or f32), TF32 (f32 inputs rounded to tf32 on tensor cores), and pedantic f32 (FFMA, bits
//! independent of tiling and launch geometry). [`plan`] picks the entry point and tile per
//! shape and device; [`GemmLaunch::stamp`] puts that choice on the STAMP line with the route.
//!
//! [`gemm_with_workspace`] lends the planner device memory: the TF32 tier's fastest route
//! (sm_90a) rounds A and B into it before its wgmma kernel ([`gemm_workspace_len`] says
//! how much). Without one, TF32 runs on mma.sync.
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::gemm::{gemm, GemmDesc, Layout};
//! use cubins::runtime::{Bf16, Gpu};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let (m, n, k) = (1, 4096, 4096); // decode: one token against a weight matrix
//! let a = DeviceBuffer::from_slice(&vec![Bf16::default(); m * k])?;
//! let b = DeviceBuffer::from_slice(&vec![Bf16::default(); k * n])?;
//! let mut c = DeviceBuffer::from_slice(&vec![Bf16::default(); m * n])?;
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! let desc = GemmDesc::new(Layout::NN, m, n, k);
//! let launched = gemm(&gpu, &stream, &desc, &a, &b, &mut c, None)?; // bf16: the tier of Bf16
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?); // the route, the schedule the planner chose, its grid
//! # Ok(()) }
//! ```

pub mod plan;

use plan::flags;
pub use plan::{Choice, Dtype, Layout, Plan, PlanError, Problem, Schedule, Tier, Workspace};

use super::rows::check_disjoint;
use super::Launched;
use crate::kernels as l;
use crate::runtime::{ArtifactKind, Bf16, Error, Gpu, LaunchConfig, LaunchError, F16};
use crate::runtime::{DevicePtr, DeviceRead, DeviceView, DeviceWrite, RawStream, StreamHandle};
use crate::runtime::{Swizzle, TensorMap, Tiled2d, TmaElem};
use std::fmt;

/// The shape and scalars of one GEMM call (everything but the buffers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmDesc {
    pub layout: Layout,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Leading dimensions in elements; `None` is the stored row length (tight).
    pub lda: Option<usize>,
    pub ldb: Option<usize>,
    pub ldc: Option<usize>,
    pub alpha: f32,
    /// With `beta == 0` C is never read (it may hold NaN).
    pub beta: f32,
    /// A schedule (and, for the pedantic tier, a grid) to force instead of the selector's.
    pub choice: Choice,
    /// The tier: `None` takes the one of the input type (bf16, fp16); f32 inputs name theirs,
    /// [`Tier::Tf32`] or [`Tier::F32Pedantic`] ([`GemmDesc::with_tier`]).
    pub tier: Option<Tier>,
}

impl GemmDesc {
    /// `C = op(A) op(B)`, tight leading dimensions, the selector's schedule.
    pub fn new(layout: Layout, m: usize, n: usize, k: usize) -> GemmDesc {
        GemmDesc {
            layout,
            m,
            n,
            k,
            lda: None,
            ldb: None,
            ldc: None,
            alpha: 1.0,
            beta: 0.0,
            choice: Choice::default(),
            tier: None,
        }
    }

    /// Runs on `tier` (f32 inputs must choose: TF32 tensor cores or pedantic FFMA).
    pub fn with_tier(mut self, tier: Tier) -> GemmDesc {
        self.tier = Some(tier);
        self
    }

    pub fn with_scalars(mut self, alpha: f32, beta: f32) -> GemmDesc {
        self.alpha = alpha;
        self.beta = beta;
        self
    }

    pub fn with_leading_dims(mut self, lda: usize, ldb: usize, ldc: usize) -> GemmDesc {
        self.lda = Some(lda);
        self.ldb = Some(ldb);
        self.ldc = Some(ldc);
        self
    }

    pub fn with_schedule(mut self, schedule: Schedule) -> GemmDesc {
        self.choice.schedule = Some(schedule);
        self
    }

    /// Launch `blocks` blocks (pedantic tier only: its kernels walk tiles grid-stride).
    pub fn with_grid(mut self, blocks: u32) -> GemmDesc {
        self.choice.grid = Some(blocks);
        self
    }

    /// Split K into `splits` slices (mma.sync tiles and the decode ring walk; 1: no split),
    /// with the workspace of [`gemm_with_workspace`] holding their f32 planes.
    pub fn with_splits(mut self, splits: u32) -> GemmDesc {
        self.choice.splits = Some(splits);
        self
    }
}

/// What one GEMM call chose.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmLaunch {
    pub problem: Problem,
    pub plan: Plan,
    /// Launched as a programmatic dependent of the stream's previous kernel (decode and
    /// mma.sync kernels from sm_90 code, where the driver has `cuLaunchKernelEx`; the operand
    /// and reduce passes too): its blocks are scheduled while that kernel drains and wait on
    /// it before their first memory access.
    pub programmatic: bool,
}

impl GemmLaunch {
    /// The route the runtime took for the entry point, then the tile choice and the shape
    /// (and the route of the operand pass, where one runs): one STAMP line.
    pub fn stamp(&self, gpu: &Gpu) -> Result<String, Error> {
        let mut line = format!("{} {}", gpu.route(&self.plan.entry)?, self);
        if self.plan.prepare.is_some() {
            let prepare = gpu.route(plan::TF32_PREPARE_ENTRY)?;
            line += &format!(" prepare_route={}", prepare.brief());
        }
        if self.plan.pack_a.is_some() || self.plan.pack_b.is_some() {
            let pack = gpu.route(&plan::pack_entry(self.problem.tier.input()))?;
            line += &format!(" pack_route={}", pack.brief());
        }
        if self.plan.split.is_some() {
            let reduce = gpu.route(&plan::splitk_reduce_entry(self.problem.out))?;
            line += &format!(" reduce_route={}", reduce.brief());
        }
        Ok(line)
    }
}

impl GemmLaunch {
    /// The GEMM kernel's launch geometry: its tiles, by the slices of K where it splits (the
    /// operand and reduce passes, where they run, have their own).
    pub fn config(&self) -> LaunchConfig {
        let mut config = LaunchConfig::linear(self.plan.grid, self.plan.block)
            .with_dynamic_smem(self.plan.dynamic_smem_bytes)
            .with_programmatic_dependent(self.programmatic);
        config.grid[2] = self.plan.split.map_or(1, |s| s.splits);
        config
    }

    /// The record every op returns: the GEMM entry point, its geometry, and this call's
    /// words (`Display`) as the choice.
    pub fn launched(&self) -> Result<Launched, Error> {
        Ok(Launched {
            kernel: crate::runtime::kernel_info(&self.plan.entry)?.name,
            config: self.config(),
            choice: self.to_string().into(),
        })
    }
}

impl fmt::Display for GemmLaunch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.problem;
        write!(
            f,
            "gemm tier={} layout={} m={} n={} k={} lda={} ldb={} ldc={} out={} {}",
            p.tier.name(),
            p.layout.name(),
            p.m,
            p.n,
            p.k,
            p.lda,
            p.ldb,
            p.ldc,
            p.out.name(),
            self.plan.stamp_fields()
        )?;
        if self.programmatic {
            write!(f, " {}", super::launched::PROGRAMMATIC_STAMP)?;
        }
        Ok(())
    }
}

/// Output element types.
pub trait GemmOutput: crate::runtime::Dtype {
    const DTYPE: Dtype;
}

impl GemmOutput for Bf16 {
    const DTYPE: Dtype = Dtype::Bf16;
}

impl GemmOutput for F16 {
    const DTYPE: Dtype = Dtype::F16;
}

impl GemmOutput for f32 {
    const DTYPE: Dtype = Dtype::F32;
}

/// The kernels' arguments after the checks (`CUBINS_GEMM_PARAMS`, cuda/include/cubins/gemm/args.cuh).
#[derive(Debug, Clone, Copy)]
pub struct KernelArgs<T: GemmInput> {
    pub a: DevicePtr<T>,
    pub b: DevicePtr<T>,
    pub c: DevicePtr<T::C>,
    pub bias: DevicePtr<f32>,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub lda: i32,
    pub ldb: i32,
    pub ldc: i32,
    pub alpha: f32,
    pub beta: f32,
    pub flags: u32,
}

/// Input element types: the tiers that read them and their entry points.
pub trait GemmInput: crate::runtime::Dtype {
    const DTYPE: Dtype;
    /// The tier of this input type when the call names none (`None`: f32, which must).
    const TIER: Option<Tier>;
    /// Every entry point [`launch`](Self::launch) and [`launch_tma`](Self::launch_tma) name.
    const ENTRIES: &'static [&'static str];
    /// Element type of the kernels' `c` parameter (`u8` where the output type varies).
    type C: Copy + 'static;

    /// Launches entry point `entry` of this input type.
    ///
    /// # Safety
    /// `args` must describe buffers of this context that the kernel may access as the
    /// checks in [`gemm`] establish: lengths covering every stored row, C disjoint from the
    /// other buffers, the flag bits true of the addresses and leading dimensions.
    unsafe fn launch(
        gpu: &Gpu,
        stream: RawStream,
        config: &LaunchConfig,
        entry: &str,
        args: &KernelArgs<Self>,
    ) -> Result<(), Error>;

    /// Launches warp-specialized entry point `entry` (operands through tensor maps).
    ///
    /// # Safety
    /// As [`launch`](Self::launch): the maps describe A and B within their buffers.
    unsafe fn launch_tma(
        gpu: &Gpu,
        stream: RawStream,
        config: &LaunchConfig,
        entry: &str,
        args: &TmaArgs<Self>,
    ) -> Result<(), Error>;

    /// Launches the operand pass (`gemm_pack_*`, 16-bit inputs; the planner packs no other):
    /// `(src, dst, rows, cols, ld_src, ld_dst)`, as a programmatic dependent where its route
    /// allows (the pass waits on the grid dependency first).
    ///
    /// # Safety
    /// `src` covers `rows` rows of `ld_src` elements (the last `cols`), `dst` `rows` x
    /// `ld_dst` elements, 16-byte aligned with `ld_dst` in whole 16-byte chunks, disjoint.
    unsafe fn pack(
        gpu: &Gpu,
        stream: RawStream,
        config: &LaunchConfig,
        args: (DevicePtr<Self>, DevicePtr<Self>, i32, i32, i32, i32),
    ) -> Result<(), Error>;
}

/// The arguments of the warp-specialized entry points (`cuda/gemm_tma.cu`), in order.
#[derive(Debug, Clone, Copy)]
pub struct TmaArgs<T: GemmInput> {
    pub tma_a: TensorMap,
    pub tma_b: TensorMap,
    /// C's map where the flags carry `TMA_C`, else unread.
    pub tma_c: TensorMap,
    pub c: DevicePtr<T::C>,
    pub bias: DevicePtr<f32>,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub ldc: i32,
    pub alpha: f32,
    pub beta: f32,
    pub flags: u32,
}

macro_rules! gemm_input {
    ($t:ty, $dtype:expr, $tier:expr, $c:ty,
     { $($entry:literal => $launcher:ident),* $(,)? },
     tma { $($tma_entry:literal => $tma_launcher:ident),* $(,)? },
     pack { $($pack_launcher:ident)? }) => {
        impl GemmInput for $t {
            const DTYPE: Dtype = $dtype;
            const TIER: Option<Tier> = $tier;
            const ENTRIES: &'static [&'static str] = &[$($entry,)* $($tma_entry,)*];
            type C = $c;

            #[allow(unused_variables, unreachable_code)]
            unsafe fn pack(
                gpu: &Gpu,
                stream: RawStream,
                config: &LaunchConfig,
                args: (DevicePtr<Self>, DevicePtr<Self>, i32, i32, i32, i32),
            ) -> Result<(), Error> {
                $(
                    let kernel = gpu.kernel::<l::$pack_launcher>()?;
                    let config = config.with_programmatic_dependent(kernel.programmatic_route());
                    return kernel.launch(&stream, &config, args);
                )?
                Err(Error::UnknownKernel {
                    name: plan::pack_entry($dtype),
                    available: vec![],
                })
            }

            #[allow(unused_variables)]
            unsafe fn launch_tma(
                gpu: &Gpu,
                stream: RawStream,
                config: &LaunchConfig,
                entry: &str,
                x: &TmaArgs<Self>,
            ) -> Result<(), Error> {
                match entry {
                    $($tma_entry => gpu.kernel::<l::$tma_launcher>()?.launch(
                        &stream, config, (x.tma_a, x.tma_b, x.tma_c, x.c, x.bias, x.m, x.n, x.k, x.ldc, x.alpha, x.beta,
                        x.flags),
                    ),)*
                    other => Err(Error::UnknownKernel {
                        name: other.to_string(),
                        available: vec![$($tma_entry),*],
                    }),
                }
            }

            unsafe fn launch(
                gpu: &Gpu,
                stream: RawStream,
                config: &LaunchConfig,
                entry: &str,
                x: &KernelArgs<Self>,
            ) -> Result<(), Error> {
                match entry {
                    $($entry => gpu.kernel::<l::$launcher>()?.launch(
                        &stream, config, (x.a, x.b, x.c, x.bias, x.m, x.n, x.k, x.lda, x.ldb, x.ldc, x.alpha,
                        x.beta, x.flags),
                    ),)*
                    other => Err(Error::UnknownKernel {
                        name: other.to_string(),
                        available: vec![$($entry),*],
                    }),
                }
            }
        }
    };
}

gemm_input!(Bf16, Dtype::Bf16, Some(Tier::Bf16), u8, {
    "gemm_bf16_nn_wgmma_128x256" => GemmBf16NnWgmma128x256,
    "gemm_bf16_tn_wgmma_128x256" => GemmBf16TnWgmma128x256,
    "gemm_bf16_nt_wgmma_128x256" => GemmBf16NtWgmma128x256,
    "gemm_bf16_nn_128x256" => GemmBf16Nn128x256,
    "gemm_bf16_tn_128x256" => GemmBf16Tn128x256,
    "gemm_bf16_nt_128x256" => GemmBf16Nt128x256,
    "gemm_bf16_nn_128x128" => GemmBf16Nn128x128,
    "gemm_bf16_tn_128x128" => GemmBf16Tn128x128,
    "gemm_bf16_nt_128x128" => GemmBf16Nt128x128,
    "gemm_bf16_nn_64x64" => GemmBf16Nn64x64,
    "gemm_bf16_tn_64x64" => GemmBf16Tn64x64,
    "gemm_bf16_nt_64x64" => GemmBf16Nt64x64,
    "gemm_bf16_nn_skinny_64x64" => GemmBf16NnSkinny64x64,
    "gemm_bf16_tn_skinny_64x64" => GemmBf16TnSkinny64x64,
    "gemm_bf16_nt_skinny_64x64" => GemmBf16NtSkinny64x64,
    "gemm_bf16_nn_skinny_64x32" => GemmBf16NnSkinny64x32,
    "gemm_bf16_tn_skinny_64x32" => GemmBf16TnSkinny64x32,
    "gemm_bf16_nt_skinny_64x32" => GemmBf16NtSkinny64x32,
    "gemm_bf16_nn_skinny_32x32" => GemmBf16NnSkinny32x32,
    "gemm_bf16_tn_skinny_32x32" => GemmBf16TnSkinny32x32,
    "gemm_bf16_nt_skinny_32x32" => GemmBf16NtSkinny32x32,
    "gemm_bf16_nt_decode_n16w8" => GemmBf16NtDecodeN16w8,
    "gemm_bf16_nt_decode_n32w8" => GemmBf16NtDecodeN32w8,
    "gemm_bf16_nn_decode_n32w24" => GemmBf16NnDecodeN32w24,
    "gemm_bf16_nn_decode_n32w16" => GemmBf16NnDecodeN32w16,
    "gemm_bf16_nn_decode_n32w8" => GemmBf16NnDecodeN32w8,
    "gemm_bf16_nn_decode_n128w8" => GemmBf16NnDecodeN128w8,
}, tma {
    "gemm_bf16_nn_tma_128x256" => GemmBf16NnTma128x256,
    "gemm_bf16_tn_tma_128x256" => GemmBf16TnTma128x256,
    "gemm_bf16_nt_tma_128x256" => GemmBf16NtTma128x256,
}, pack { GemmPackBf16 });

gemm_input!(F16, Dtype::F16, Some(Tier::Fp16), u8, {
    "gemm_fp16_nn_wgmma_128x256" => GemmFp16NnWgmma128x256,
    "gemm_fp16_tn_wgmma_128x256" => GemmFp16TnWgmma128x256,
    "gemm_fp16_nt_wgmma_128x256" => GemmFp16NtWgmma128x256,
    "gemm_fp16_nn_128x256" => GemmFp16Nn128x256,
    "gemm_fp16_tn_128x256" => GemmFp16Tn128x256,
    "gemm_fp16_nt_128x256" => GemmFp16Nt128x256,
    "gemm_fp16_nn_128x128" => GemmFp16Nn128x128,
    "gemm_fp16_tn_128x128" => GemmFp16Tn128x128,
    "gemm_fp16_nt_128x128" => GemmFp16Nt128x128,
    "gemm_fp16_nn_64x64" => GemmFp16Nn64x64,
    "gemm_fp16_tn_64x64" => GemmFp16Tn64x64,
    "gemm_fp16_nt_64x64" => GemmFp16Nt64x64,
    "gemm_fp16_nn_skinny_64x64" => GemmFp16NnSkinny64x64,
    "gemm_fp16_tn_skinny_64x64" => GemmFp16TnSkinny64x64,
    "gemm_fp16_nt_skinny_64x64" => GemmFp16NtSkinny64x64,
    "gemm_fp16_nn_skinny_64x32" => GemmFp16NnSkinny64x32,
    "gemm_fp16_tn_skinny_64x32" => GemmFp16TnSkinny64x32,
    "gemm_fp16_nt_skinny_64x32" => GemmFp16NtSkinny64x32,
    "gemm_fp16_nn_skinny_32x32" => GemmFp16NnSkinny32x32,
    "gemm_fp16_tn_skinny_32x32" => GemmFp16TnSkinny32x32,
    "gemm_fp16_nt_skinny_32x32" => GemmFp16NtSkinny32x32,
    "gemm_fp16_nt_decode_n16w8" => GemmFp16NtDecodeN16w8,
    "gemm_fp16_nt_decode_n32w8" => GemmFp16NtDecodeN32w8,
    "gemm_fp16_nn_decode_n32w24" => GemmFp16NnDecodeN32w24,
    "gemm_fp16_nn_decode_n32w16" => GemmFp16NnDecodeN32w16,
    "gemm_fp16_nn_decode_n32w8" => GemmFp16NnDecodeN32w8,
    "gemm_fp16_nn_decode_n128w8" => GemmFp16NnDecodeN128w8,
}, tma {
    "gemm_fp16_nn_tma_128x256" => GemmFp16NnTma128x256,
    "gemm_fp16_tn_tma_128x256" => GemmFp16TnTma128x256,
    "gemm_fp16_nt_tma_128x256" => GemmFp16NtTma128x256,
}, pack { GemmPackF16 });

gemm_input!(f32, Dtype::F32, None, f32, {
    "gemm_tf32_nt_wgmma_128x256" => GemmTf32NtWgmma128x256,
    "gemm_tf32_nn_128x256" => GemmTf32Nn128x256,
    "gemm_tf32_tn_128x256" => GemmTf32Tn128x256,
    "gemm_tf32_nn_128x128" => GemmTf32Nn128x128,
    "gemm_tf32_tn_128x128" => GemmTf32Tn128x128,
    "gemm_tf32_nt_128x128" => GemmTf32Nt128x128,
    "gemm_tf32_nn_64x64" => GemmTf32Nn64x64,
    "gemm_tf32_tn_64x64" => GemmTf32Tn64x64,
    "gemm_tf32_nt_64x64" => GemmTf32Nt64x64,
    "gemm_f32_pedantic_nn_128x128" => GemmF32PedanticNn128x128,
    "gemm_f32_pedantic_tn_128x128" => GemmF32PedanticTn128x128,
    "gemm_f32_pedantic_nt_128x128" => GemmF32PedanticNt128x128,
    "gemm_f32_pedantic_nn_64x64" => GemmF32PedanticNn64x64,
    "gemm_f32_pedantic_tn_64x64" => GemmF32PedanticTn64x64,
    "gemm_f32_pedantic_nt_64x64" => GemmF32PedanticNt64x64,
}, tma {
    "gemm_tf32_nt_tma_128x256" => GemmTf32NtTma128x256,
}, pack {});

/// A problem the planner refused, as the runtime's launch error (naming the rule).
fn plan_error(e: &PlanError) -> Error {
    let requirement = match e {
        PlanError::TooLarge { .. } => "M, N, K and leading dimensions of at most 2^30",
        PlanError::LeadingDimension { .. } => {
            "leading dimensions at least as long as the stored rows (and at least 1)"
        }
        PlanError::Output { .. } => "an output of the input type or f32 (f32 tiers write f32)",
        PlanError::Schedule { .. } => {
            "a forced schedule that the tier has for this layout and that fits the problem, device and workspace"
        }
        PlanError::GridTooLarge { .. } => "at most 2^31 - 1 output tiles",
    };
    LaunchError::Geometry {
        kernel: "gemm",
        requirement,
        config: LaunchConfig::linear(0, 0),
    }
    .into()
}

fn dim(v: usize) -> Result<u32, Error> {
    u32::try_from(v).map_err(|_| {
        plan_error(&PlanError::TooLarge {
            what: "dimension",
            value: u32::MAX,
        })
    })
}

/// Whether the runtime loads the wgmma kernels from an sm_90a cubin (else they are stubs).
/// Every 16-bit call asks: the typed lookup is an index, not a search by name.
pub fn wgmma_route(gpu: &Gpu) -> Result<bool, Error> {
    let kernel = gpu.kernel::<l::GemmBf16NnWgmma128x256>()?;
    let route = kernel.route();
    Ok(route.kind == ArtifactKind::Cubin && route.arch == "sm_90a")
}

/// The checked problem and plan for `desc` on these buffers, without launching.
pub fn gemm_plan<T: GemmInput, O: GemmOutput, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    desc: &GemmDesc,
    a: &impl DeviceRead<T, S>,
    b: &impl DeviceRead<T, S>,
    c: &impl DeviceRead<O, S>,
    bias: Option<&dyn DeviceRead<f32, S>>,
) -> Result<GemmLaunch, Error> {
    let held = (a.read(stream), b.read(stream), c.read(stream));
    let bias = bias.map(|b| b.read(stream));
    let views = Views {
        a: held.0.view,
        b: held.1.view,
        c: held.2.view,
        bias: bias.as_ref().map(|b| b.view),
        workspace: None,
    };
    plan_on_buffers(gpu, desc, &views)
}

/// The buffers of one call, as views.
struct Views<T, O> {
    a: DeviceView<T>,
    b: DeviceView<T>,
    c: DeviceView<O>,
    bias: Option<DeviceView<f32>>,
    workspace: Option<DeviceView<f32>>,
}

/// The tier `desc` runs for inputs of `T`: its own, or the input type's.
fn tier_of<T: GemmInput>(desc: &GemmDesc) -> Result<Tier, Error> {
    let requirement = match (desc.tier, T::TIER) {
        (Some(t), _) if t.input() == T::DTYPE => return Ok(t),
        (None, Some(t)) => return Ok(t),
        (None, None) => {
            "f32 inputs name their tier: GemmDesc::with_tier(Tier::Tf32 or Tier::F32Pedantic)"
        }
        (Some(_), _) => {
            "inputs of the tier's type (bf16: Bf16, fp16: F16, tf32 and f32_pedantic: f32)"
        }
    };
    Err(LaunchError::Geometry {
        kernel: "gemm",
        requirement,
        config: LaunchConfig::linear(0, 0),
    }
    .into())
}

/// Floats of workspace [`gemm_with_workspace`] uses for `desc` on this GPU when offered
/// enough: 0 where the selected (or forced) schedule takes none.
pub fn gemm_workspace_len(gpu: &Gpu, tier: Tier, desc: &GemmDesc) -> Result<usize, Error> {
    let mut problem = checked_problem(tier, desc, tier.input(), [0; 3])?;
    problem.workspace = Some(Workspace {
        addr: 0,
        bytes: u64::MAX,
    });
    let plan = plan::plan(&problem, &device_facts(gpu, tier)?, &desc.choice, false)
        .map_err(|e| plan_error(&e))?;
    Ok((plan.workspace_bytes / 4) as usize)
}

/// What the selector knows of this GPU for `tier`: SMs, shared memory, the wgmma route and
/// the shared-memory class of the tier's loaded code.
pub fn device_facts(gpu: &Gpu, tier: Tier) -> Result<plan::DeviceFacts, Error> {
    Ok(plan::DeviceFacts {
        sm_count: gpu.device().sm_count,
        max_smem_per_block_optin: gpu.device().limits.max_smem_per_block_optin,
        wgmma: wgmma_route(gpu)?,
        smem_class: smem_class(gpu, tier)?,
    })
}

/// The shared-memory class of the code the tier's tensor-core kernels load from: its
/// route's compute capability (the PTX fallback's own, not the device's).
fn smem_class(gpu: &Gpu, tier: Tier) -> Result<plan::SmemClass, Error> {
    let route = match tier {
        Tier::Bf16 => gpu.kernel::<l::GemmBf16Nn64x64>()?.route(),
        Tier::Fp16 => gpu.kernel::<l::GemmFp16Nn64x64>()?.route(),
        Tier::Tf32 => gpu.kernel::<l::GemmTf32Nn64x64>()?.route(),
        Tier::F32Pedantic => gpu.kernel::<l::GemmF32PedanticNn64x64>()?.route(),
    };
    Ok(plan::SmemClass::of_cc(route.code_cc))
}

/// The problem `desc` describes for `tier` with output type `out`, buffers at `addrs` (A, B, C).
fn checked_problem(
    tier: Tier,
    desc: &GemmDesc,
    out: Dtype,
    [a_addr, b_addr, c_addr]: [u64; 3],
) -> Result<Problem, Error> {
    let tight_a = if desc.layout.a_k_major() {
        desc.k
    } else {
        desc.m
    };
    let tight_b = if desc.layout.b_k_major() {
        desc.k
    } else {
        desc.n
    };
    Ok(Problem {
        tier,
        layout: desc.layout,
        m: dim(desc.m)?,
        n: dim(desc.n)?,
        k: dim(desc.k)?,
        lda: dim(desc.lda.unwrap_or(tight_a.max(1)))?,
        ldb: dim(desc.ldb.unwrap_or(tight_b.max(1)))?,
        ldc: dim(desc.ldc.unwrap_or(desc.n.max(1)))?,
        out,
        a_addr,
        b_addr,
        c_addr,
        workspace: None,
    })
}

fn plan_on_buffers<T: GemmInput, O: GemmOutput>(
    gpu: &Gpu,
    desc: &GemmDesc,
    v: &Views<T, O>,
) -> Result<GemmLaunch, Error> {
    let tier = tier_of::<T>(desc)?;
    let (a, b, c, bias, workspace) = (v.a, v.b, v.c, v.bias, v.workspace);
    let addrs = [a.ptr.as_raw(), b.ptr.as_raw(), c.ptr.as_raw()];
    let mut problem = checked_problem(tier, desc, O::DTYPE, addrs)?;
    problem.workspace = workspace.map(|w| Workspace {
        addr: w.ptr.as_raw(),
        bytes: w.len as u64 * 4,
    });
    let mut plan = plan::plan(
        &problem,
        &device_facts(gpu, tier)?,
        &desc.choice,
        bias.is_some(),
    )
    .map_err(|e| plan_error(&e))?;
    if matches!(plan.schedule, Schedule::Tma(_))
        && tma_output(&problem, desc, bias.is_some(), tma_elem(T::DTYPE)).is_some()
    {
        plan.flags |= flags::TMA_C;
    }

    let (a_elems, b_elems, c_elems) = problem.spans();
    let (ab, bb, cb) = (a.arg("a"), b.arg("b"), c.arg("c"));
    ab.at_least(a_elems * u64::from(T::DTYPE.bytes()))?;
    bb.at_least(b_elems * u64::from(T::DTYPE.bytes()))?;
    cb.at_least(c_elems * u64::from(O::DTYPE.bytes()))?;
    let mut inputs = vec![ab, bb];
    if let Some(bias) = bias {
        let biasb = bias.arg("bias");
        biasb.at_least(u64::from(problem.n) * 4)?;
        inputs.push(biasb);
    }
    // Only the part of C the kernel touches must be disjoint from the inputs.
    let touched_c = crate::runtime::BufferArg {
        bytes: c_elems * u64::from(O::DTYPE.bytes()),
        ..cb
    };
    let mut outputs = vec![touched_c];
    if let Some(w) = workspace.filter(|_| plan.workspace_bytes > 0) {
        // The operand pass writes the workspace while it reads A and B.
        let wb = w.arg("workspace");
        outputs.push(crate::runtime::BufferArg {
            bytes: plan.workspace_bytes,
            ..wb
        });
    }
    check_disjoint(&outputs, &inputs)?;
    let programmatic = launches_as_programmatic_dependent(gpu, &plan)?;
    Ok(GemmLaunch {
        problem,
        plan,
        programmatic,
    })
}

/// Whether `plan`'s kernel launches as a programmatic dependent: a decode or mma.sync kernel
/// (the GEMM kernels that wait on the grid dependency first, in code built for sm_90 and
/// later; docs/kernels/gemm.md) on a route with such code, and a driver with
/// `cuLaunchKernelEx`. The launch gap it hides is 2-11% of a decode kernel's time at
/// N = K = 4096 (run33), and most of what a tiny call costs.
fn launches_as_programmatic_dependent(gpu: &Gpu, plan: &Plan) -> Result<bool, Error> {
    if !matches!(plan.schedule, Schedule::Decode(_) | Schedule::Mma(_)) || plan.grid == 0 {
        return Ok(false);
    }
    Ok(gpu.programmatic_route(&gpu.route(&plan.entry)?))
}

/// `C = alpha * op(A) op(B) + beta * C (+ bias)` on `stream`, on the tier of the input type
/// (f32 inputs: the tier `desc` names).
///
/// A, B (and C) are row-major with the leading dimensions of `desc`; C holds the input type
/// or f32 (f32 tiers: f32), `bias` N floats. Every shape and alignment is accepted (vector
/// access is used where addresses allow it); buffers too short, C overlapping an input, or a
/// forced schedule that does not apply are an `Err`.
pub fn gemm<T: GemmInput, O: GemmOutput, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    desc: &GemmDesc,
    a: &impl DeviceRead<T, S>,
    b: &impl DeviceRead<T, S>,
    c: &mut impl DeviceWrite<O, S>,
    bias: Option<&dyn DeviceRead<f32, S>>,
) -> Result<GemmLaunch, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (a.read(stream), b.read(stream), c.write(stream));
    let bias = bias.map(|b| b.read(stream));
    let views = Views {
        a: held.0.view,
        b: held.1.view,
        c: held.2.view,
        bias: bias.as_ref().map(|b| b.view),
        workspace: None,
    };
    launch_gemm(gpu, stream.raw_stream(), desc, &views)
}

/// [`gemm`] with `workspace` lent to the planner: the TF32 tier on the sm_90a route writes
/// rounded K-major copies of A and B there ([`gemm_workspace_len`] floats, 16-byte
/// aligned) and runs its wgmma kernel on them; a smaller workspace leaves TF32 on
/// mma.sync. The workspace must not overlap A, B, C or the bias; its contents afterwards
/// are unspecified. Other tiers ignore it.
#[allow(clippy::too_many_arguments)]
pub fn gemm_with_workspace<T: GemmInput, O: GemmOutput, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    desc: &GemmDesc,
    a: &impl DeviceRead<T, S>,
    b: &impl DeviceRead<T, S>,
    c: &mut impl DeviceWrite<O, S>,
    bias: Option<&dyn DeviceRead<f32, S>>,
    workspace: &mut impl DeviceWrite<f32, S>,
) -> Result<GemmLaunch, Error> {
    // Held to the end, as in `gemm`.
    let held = (a.read(stream), b.read(stream), c.write(stream));
    let bias = bias.map(|b| b.read(stream));
    let workspace = workspace.write(stream);
    let views = Views {
        a: held.0.view,
        b: held.1.view,
        c: held.2.view,
        bias: bias.as_ref().map(|b| b.view),
        workspace: Some(workspace.view),
    };
    launch_gemm(gpu, stream.raw_stream(), desc, &views)
}

/// The tensor maps the TMA kernel reads A and B through (`tma_kernel.cuh`): the stored
/// matrices with their leading dimensions, K-major operands in boxes of the tile's rows by a
/// k tile (one 128-byte row), MN-major ones in panels of 128 bytes by a k tile's rows, in the
/// 128-byte swizzle.
fn tma_operands(p: &Problem, t: &plan::TmaTile, a: u64, b: u64, elem: TmaElem) -> [Tiled2d; 2] {
    let row_elems = plan::TmaTile::ROW_BYTES / elem.bytes() as u32;
    let map = |param, base, (rows, cols): (u32, u32), ld: u32, k_major: bool, outer: u32| Tiled2d {
        param,
        elem,
        base,
        cols: u64::from(cols),
        rows: u64::from(rows),
        pitch: u64::from(ld),
        box_cols: row_elems,
        box_rows: if k_major { outer } else { t.bk },
        swizzle: Swizzle::B128,
    };
    [
        map("tma_a", a, p.a_stored(), p.lda, p.layout.a_k_major(), t.bm),
        map("tma_b", b, p.b_stored(), p.ldb, p.layout.b_k_major(), t.bn),
    ]
}

/// The map the TMA kernel writes C through (`flags::TMA_C`), where it may: the common call
/// (C = A B in the input type: alpha 1, beta 0, no bias) with C addressable by the copy
/// engine. The plan's flag is the decision; the launch encodes [`c_map`] where it is set.
fn tma_output(p: &Problem, desc: &GemmDesc, bias: bool, elem: TmaElem) -> Option<Tiled2d> {
    let plain = desc.alpha == 1.0 && desc.beta == 0.0 && !bias && p.out == p.tier.input();
    let map = c_map(p, elem);
    (plain && map.check().is_ok()).then_some(map)
}

/// C as the TMA kernel stores it: M x N with its leading dimension, in boxes of 64 rows by
/// 128 bytes in the 128-byte swizzle (the kernel's staging layout); the copy engine clips
/// boxes to M and N.
fn c_map(p: &Problem, elem: TmaElem) -> Tiled2d {
    Tiled2d {
        param: "tma_c",
        elem,
        base: p.c_addr,
        cols: u64::from(p.n),
        rows: u64::from(p.m),
        pitch: u64::from(p.ldc),
        box_cols: plan::TmaTile::ROW_BYTES / elem.bytes() as u32,
        box_rows: 64,
        swizzle: Swizzle::B128,
    }
}

fn tma_elem(dtype: Dtype) -> TmaElem {
    match dtype {
        Dtype::Bf16 => TmaElem::Bf16,
        Dtype::F16 => TmaElem::F16,
        Dtype::F32 => TmaElem::F32,
    }
}

fn launch_gemm<T: GemmInput, O: GemmOutput>(
    gpu: &Gpu,
    stream: RawStream,
    desc: &GemmDesc,
    v: &Views<T, O>,
) -> Result<GemmLaunch, Error> {
    let launch = plan_on_buffers(gpu, desc, v)?;
    let (p, pl) = (&launch.problem, &launch.plan);
    if pl.grid == 0 {
        return Ok(launch); // M == 0 or N == 0: nothing to write
    }
    let (mut a_ptr, mut b_ptr, mut lda, mut ldb) = (v.a.ptr, v.b.ptr, p.lda, p.ldb);
    if let (Some(prep), Some(w)) = (&pl.prepare, v.workspace) {
        let ws = w.ptr;
        if prep.grid > 0 {
            let config = LaunchConfig::linear(prep.grid, prep.block);
            // SAFETY: the plan checked that the workspace holds (M + N) * kp floats, is
            // 16-byte aligned and overlaps neither A, B, C nor bias, and that A and B cover
            // their stored spans with these leading dimensions; f32 tiers take f32 inputs.
            unsafe {
                gpu.kernel::<l::GemmTf32Prepare>()?.launch(
                    &stream,
                    &config,
                    (
                        v.a.ptr.cast(),
                        v.b.ptr.cast(),
                        ws,
                        p.m as i32,
                        p.n as i32,
                        p.k as i32,
                        p.lda as i32,
                        p.ldb as i32,
                        prep.kp as i32,
                        prep.flags,
                    ),
                )?
            };
        }
        // The GEMM kernel reads the rounded operands as layout NT.
        a_ptr = ws.cast();
        // SAFETY: B's rows start M * kp floats into the workspace, inside it (checked above).
        b_ptr = ws.add(prep.b_offset(p.m) as usize).cast();
        (lda, ldb) = (prep.kp.max(1), prep.kp.max(1));
    }
    for (pk, src, ptr, ld, ld_src) in [
        (pl.pack_a, v.a.ptr, &mut a_ptr, &mut lda, p.lda),
        (pl.pack_b, v.b.ptr, &mut b_ptr, &mut ldb, p.ldb),
    ] {
        let (Some(pk), Some(w)) = (pk, v.workspace) else {
            continue;
        };
        // The plan placed the copy inside the workspace (16-byte aligned, disjoint from A, B,
        // C and bias), rows x ld elements from byte `offset`.
        let dst: DevicePtr<T> = w.ptr.cast::<u8>().add(pk.offset as usize).cast();
        // SAFETY: the source covers rows x cols elements with leading dimension ld_src (its
        // span was checked), the copy rows x ld in the workspace, ld in whole 16-byte chunks.
        unsafe {
            T::pack(
                gpu,
                stream,
                &LaunchConfig::linear(pk.grid, pk.block),
                (
                    src,
                    dst,
                    pk.rows as i32,
                    pk.cols as i32,
                    ld_src as i32,
                    pk.ld as i32,
                ),
            )?
        };
        (*ptr, *ld) = (dst, pk.ld);
    }
    if let Schedule::Tma(t) = pl.schedule {
        let elem = tma_elem(T::DTYPE);
        // After the TF32 operand pass the kernel reads the workspace as layout NT.
        let layout = if pl.prepare.is_some() {
            Layout::NT
        } else {
            p.layout
        };
        let packed = Problem {
            lda,
            ldb,
            layout,
            ..*p
        };
        let [map_a, map_b] = tma_operands(&packed, &t, a_ptr.as_raw(), b_ptr.as_raw(), elem);
        let tma_c = if pl.flags & flags::TMA_C != 0 {
            c_map(p, elem).encode()?
        } else {
            TensorMap::zeroed()
        };
        let args = TmaArgs::<T> {
            tma_a: map_a.encode()?,
            tma_b: map_b.encode()?,
            tma_c,
            c: v.c.ptr.cast(),
            bias: v.bias.map_or(DevicePtr::null(), |b| b.ptr),
            m: p.m as i32,
            n: p.n as i32,
            k: p.k as i32,
            ldc: p.ldc as i32,
            alpha: desc.alpha,
            beta: desc.beta,
            flags: pl.flags,
        };
        // SAFETY: as below; the maps cover exactly A's and B's stored rows and C's M x N with
        // their leading dimensions (boxes past them read zeros and write nothing).
        unsafe { T::launch_tma(gpu, stream, &launch.config(), &pl.entry, &args)? };
        return Ok(launch);
    }
    let mut args = KernelArgs::<T> {
        a: a_ptr,
        b: b_ptr,
        c: v.c.ptr.cast(),
        bias: v.bias.map_or(DevicePtr::null(), |b| b.ptr),
        m: p.m as i32,
        n: p.n as i32,
        k: p.k as i32,
        lda: lda as i32,
        ldb: ldb as i32,
        ldc: p.ldc as i32,
        alpha: desc.alpha,
        beta: desc.beta,
        flags: pl.flags,
    };
    // A split's planes, [splits][M][N] f32, follow the packed operands in the workspace.
    let split = match (pl.split, v.workspace) {
        (Some(split), Some(w)) => Some((split, w.ptr.add((pl.packed_bytes(p.tier) / 4) as usize))),
        _ => None,
    };
    if let Some((split, planes)) = split {
        // The slices write raw sums to their planes.
        args = KernelArgs {
            c: planes.cast(),
            bias: DevicePtr::null(),
            ldc: p.n as i32,
            alpha: 1.0,
            beta: 0.0,
            flags: split.slice_flags,
            ..args
        };
    }
    let config = launch.config();
    // SAFETY: gemm_plan checked that A, B, C and bias cover every element the kernel
    // indexes (spans from the leading dimensions), that the touched part of C overlaps no
    // input, and computed the vector-access flags from these exact addresses and leading
    // dimensions; dimensions fit the kernels' i32 arithmetic (at most 2^30). A programmatic
    // launch is only planned for kernels that wait on the grid dependency first. A split's
    // planes lie in the workspace, which holds them, is 16-byte aligned and overlaps nothing
    // else (checked by the plan).
    unsafe { T::launch(gpu, stream, &config, &pl.entry, &args)? };
    if let Some((split, planes)) = split {
        let reduce = gpu.kernel::<l::GemmSplitkReduce<O>>()?;
        let config = LaunchConfig::linear(split.reduce_grid, split.reduce_block)
            .with_programmatic_dependent(reduce.programmatic_route());
        // SAFETY: the planes hold splits x M x N floats, written by the launch above on this
        // stream; C covers M rows of ldc (checked), and VEC_C is C's own alignment; the pass
        // waits on the grid dependency before reading them.
        unsafe {
            reduce.launch(
                &stream,
                &config,
                (
                    planes,
                    v.c.ptr,
                    v.bias.map_or(DevicePtr::null(), |b| b.ptr),
                    p.m as i32,
                    p.n as i32,
                    p.ldc as i32,
                    split.splits as i32,
                    desc.alpha,
                    desc.beta,
                    pl.flags & (flags::BIAS | flags::VEC_C),
                ),
            )?
        };
    }
    Ok(launch)
}

#[cfg(test)]
mod tests {
    use super::plan::{fits, DeviceFacts, SmemClass, TILE_TMA};
    use super::*;

    /// Every entry point the planner can name, on every shared-memory class, has a typed
    /// launcher (a catalogued tile without one plans and then fails at launch).
    #[test]
    fn every_planned_entry_point_has_a_launcher() {
        let mut checked = 0;
        for tier in [Tier::Bf16, Tier::Fp16, Tier::Tf32, Tier::F32Pedantic] {
            let entries = match tier {
                Tier::Bf16 => Bf16::ENTRIES,
                Tier::Fp16 => F16::ENTRIES,
                Tier::Tf32 | Tier::F32Pedantic => <f32 as GemmInput>::ENTRIES,
            };
            for class in SmemClass::ALL {
                for layout in Layout::ALL {
                    for schedule in plan::schedules(tier, layout, class) {
                        let entry = plan::entry_name(tier, layout, &schedule);
                        assert!(entries.contains(&entry.as_str()), "{entry}: no launcher");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    /// Wherever the planner lets the TMA tile run, the copy engine takes both tensor maps
    /// (`Tiled2d::check`, the rules the driver's encode enforces); where it refuses, for a
    /// leading dimension off the 16-byte grid, so does the copy engine.
    #[test]
    fn the_tma_tile_runs_exactly_where_the_copy_engine_addresses_its_operands() {
        let h200 = DeviceFacts {
            sm_count: 132,
            max_smem_per_block_optin: 232_448,
            wgmma: true,
            smem_class: SmemClass::Kb228,
        };
        let tma = Schedule::Tma(TILE_TMA);
        let mut checked = 0;
        for layout in Layout::ALL {
            for (m, n, k) in [
                (8, 8, 8),
                (136, 280, 200),
                (4096, 14336, 4096),
                (1544, 2824, 128),
                (8, 504, 8),
            ] {
                for (pad, aligned) in [(0, true), (8, true), (1, false), (4, false)] {
                    let (ar, ac) = if layout.a_k_major() { (m, k) } else { (k, m) };
                    let (_, bc) = if layout.b_k_major() { (n, k) } else { (k, n) };
                    let p = Problem {
                        tier: Tier::Bf16,
                        layout,
                        m,
                        n,
                        k,
                        lda: ac + pad,
                        ldb: bc,
                        ldc: n,
                        out: Dtype::Bf16,
                        a_addr: 1 << 20,
                        b_addr: 1 << 30,
                        c_addr: 1 << 32,
                        workspace: None,
                    };
                    let runs = fits(&p, &h200, &tma).is_ok();
                    assert_eq!(runs, aligned, "{layout:?} {m}x{n}x{k} lda {}", p.lda);
                    let maps = tma_operands(&p, &TILE_TMA, p.a_addr, p.b_addr, TmaElem::Bf16);
                    let taken = maps.iter().all(|m| m.check().is_ok());
                    assert_eq!(
                        taken, runs,
                        "{layout:?} {m}x{n}x{k} lda {}: {maps:?}",
                        p.lda
                    );
                    assert_eq!((maps[0].rows, maps[0].cols), (u64::from(ar), u64::from(ac)));
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 60);
    }

    /// The TMA kernel stores C through shared memory and its map only on the common call
    /// (C = A B in the input type) and only where the copy engine addresses C; every other
    /// call keeps the register stores, which apply alpha, beta and bias.
    #[test]
    fn the_staged_epilogue_takes_exactly_the_plain_calls_on_an_addressable_c() {
        let p = Problem {
            tier: Tier::Bf16,
            layout: Layout::NN,
            m: 200,
            n: 264,
            k: 64,
            lda: 64,
            ldb: 264,
            ldc: 264,
            out: Dtype::Bf16,
            a_addr: 1 << 20,
            b_addr: 1 << 30,
            c_addr: 1 << 32,
            workspace: None,
        };
        let plain = GemmDesc::new(Layout::NN, 200, 264, 64);
        let map = tma_output(&p, &plain, false, TmaElem::Bf16).expect("a plain call");
        assert_eq!((map.rows, map.cols, map.pitch), (200, 264, 264));
        assert!(map.check().is_ok());
        let off = |p: Problem, desc: &GemmDesc, bias: bool, why: &str| {
            assert!(tma_output(&p, desc, bias, TmaElem::Bf16).is_none(), "{why}");
        };
        off(p, &plain, true, "bias");
        off(
            p,
            &GemmDesc {
                alpha: 0.5,
                ..plain
            },
            false,
            "alpha",
        );
        off(p, &GemmDesc { beta: 1.0, ..plain }, false, "beta");
        off(
            Problem {
                out: Dtype::F32,
                ..p
            },
            &plain,
            false,
            "f32 output",
        );
        off(
            Problem { ldc: 268, ..p },
            &plain,
            false,
            "ldc off the 16-byte grid",
        );
        off(
            Problem {
                c_addr: (1 << 32) + 8,
                ..p
            },
            &plain,
            false,
            "C's base off 16 bytes",
        );
        assert!(tma_output(&Problem { ldc: 272, ..p }, &plain, false, TmaElem::Bf16).is_some());
    }
}
