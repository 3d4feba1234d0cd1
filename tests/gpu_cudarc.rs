//! The ops on both runtimes: every op family runs once on `cust` buffers and stream and once
//! on `cudarc` slices and stream (the same Gpu, so the same routes and kernels), from the
//! same inputs into poisoned outputs, and every output must be bit-identical, every
//! `Launched` record equal. The launches go through one generic function per family,
//! written once against the traits the ops take.
//!
//! `#[ignore]`d: run through the GPU bundle, which passes `--include-ignored`.
#![cfg(all(feature = "cust", feature = "cudarc"))]

mod gpu_common;

use cubins::cudarc::driver::{CudaSlice, CudaStream};
use cubins::ops::copy::{copy, CopyKernel};
use cubins::ops::gemm::{gemm, GemmDesc, Layout};
use cubins::ops::rmsnorm::{
    rmsnorm, rmsnorm_backward, rmsnorm_backward_plan, rmsnorm_residual, RmsNormBwdOptions,
    RmsNormOptions,
};
use cubins::ops::rope::{rope, Pairing, RopeShape};
use cubins::ops::softmax::{softmax, softmax_backward};
use cubins::ops::swiglu::{swiglu, swiglu_interleaved};
use cubins::ops::{Launched, Threads};
use cubins::runtime::{Bf16, DeviceRead, DeviceWrite, Dtype, Gpu, StreamHandle};
use cust::memory::DeviceBuffer;
use cust::stream::Stream;
use gpu_common::{first_difference, gpu, values, POISON};
use half::bf16;
use std::sync::Arc;

/// A runtime's buffers and stream, as this test allocates and reads them.
trait Runtime {
    type Stream: StreamHandle;
    type Buf<T: Dtype + bytemuck::Pod>: DeviceRead<T, Self::Stream> + DeviceWrite<T, Self::Stream>;
    const NAME: &'static str;
    fn stream(&self) -> &Self::Stream;
    fn upload<T: Dtype + bytemuck::Pod>(&self, host: &[T]) -> Self::Buf<T>;
    fn download<T: Dtype + bytemuck::Pod>(&self, buf: &Self::Buf<T>) -> Vec<u8>;
    fn sync(&self);
}

struct Cust {
    stream: Stream,
}

impl Runtime for Cust {
    type Stream = Stream;
    type Buf<T: Dtype + bytemuck::Pod> = DeviceBuffer<T>;
    const NAME: &'static str = "cust";
    fn stream(&self) -> &Stream {
        &self.stream
    }
    fn upload<T: Dtype + bytemuck::Pod>(&self, host: &[T]) -> DeviceBuffer<T> {
        gpu_common::uploaded(host).expect("upload")
    }
    fn download<T: Dtype + bytemuck::Pod>(&self, buf: &DeviceBuffer<T>) -> Vec<u8> {
        bytemuck::cast_slice(&buf.as_host_vec().expect("download")).to_vec()
    }
    fn sync(&self) {
        self.stream.synchronize().expect("cust stream");
    }
}

struct Cudarc {
    stream: Arc<CudaStream>,
}

impl Runtime for Cudarc {
    type Stream = Arc<CudaStream>;
    type Buf<T: Dtype + bytemuck::Pod> = CudaSlice<T>;
    const NAME: &'static str = "cudarc";
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    fn upload<T: Dtype + bytemuck::Pod>(&self, host: &[T]) -> CudaSlice<T> {
        let buf = self.stream.clone_htod(host).expect("upload");
        self.stream.synchronize().expect("upload");
        buf
    }
    fn download<T: Dtype + bytemuck::Pod>(&self, buf: &CudaSlice<T>) -> Vec<u8> {
        bytemuck::cast_slice(&self.stream.clone_dtoh(buf).expect("download")).to_vec()
    }
    fn sync(&self) {
        self.stream.synchronize().expect("cudarc stream");
    }
}

fn bf16s(len: usize, seed: u64) -> Vec<Bf16> {
    values(len, seed)
        .into_iter()
        .map(|v| Bf16(bf16::from_f32(v)))
        .collect()
}

fn poisoned<T: bytemuck::Pod>(len: usize) -> Vec<T> {
    bytemuck::cast_slice(&vec![POISON; len * std::mem::size_of::<T>()]).to_vec()
}

/// What one runtime's run of the families produced: each output's bytes and each launch.
#[derive(Default)]
struct Run {
    outputs: Vec<(&'static str, Vec<u8>)>,
    launched: Vec<(&'static str, String)>,
}

impl Run {
    fn launched(&mut self, what: &'static str, l: &Launched) {
        self.launched.push((what, format!("{l:?}")));
    }
}

const ROWS: usize = 37;
const COLS: usize = 1000;

fn run_families<R: Runtime>(gpu: &Gpu, rt: &R) -> Run {
    let s = rt.stream();
    let n = ROWS * COLS;
    let mut run = Run::default();
    let x = rt.upload(&bf16s(n, 1));
    let w = rt.upload(&bf16s(COLS, 2));
    let dy = rt.upload(&bf16s(n, 3));

    // copy
    let mut y = rt.upload(&poisoned::<Bf16>(n));
    let l = copy(gpu, s, CopyKernel::Vec16, &x, &mut y).expect("copy");
    run.launched("copy", &l);
    rt.sync();
    run.outputs.push(("copy", rt.download(&y)));

    // rmsnorm: forward, fused residual, backward
    let mut y = rt.upload(&poisoned::<Bf16>(n));
    let l = rmsnorm(
        gpu,
        s,
        &x,
        &w,
        &mut y,
        ROWS,
        COLS,
        &RmsNormOptions::default(),
    )
    .expect("rmsnorm");
    run.launched("rmsnorm", &l);
    let mut residual = rt.upload(&bf16s(n, 4));
    let mut y2 = rt.upload(&poisoned::<Bf16>(n));
    let l = rmsnorm_residual(
        gpu,
        s,
        &x,
        &mut residual,
        &w,
        &mut y2,
        ROWS,
        COLS,
        &RmsNormOptions::default(),
    )
    .expect("rmsnorm_residual");
    run.launched("rmsnorm_residual", &l);
    let opts = RmsNormBwdOptions::default();
    let plan = rmsnorm_backward_plan::<Bf16>(gpu, ROWS, COLS, &opts).expect("plan");
    let mut dx = rt.upload(&poisoned::<Bf16>(n));
    let mut dw = rt.upload(&poisoned::<Bf16>(COLS));
    let mut ws = rt.upload(&vec![0f32; plan.workspace_len().max(1)]);
    let ls = rmsnorm_backward(
        gpu, s, &x, &w, &dy, &mut dx, &mut dw, &mut ws, ROWS, COLS, &opts,
    )
    .expect("rmsnorm_backward");
    run.launched("rmsnorm_backward", &ls.rows);
    if let Some(sums) = &ls.sums {
        run.launched("rmsnorm_backward_reduce", sums);
    }
    rt.sync();
    for (name, b) in [
        ("rmsnorm", &y),
        ("rmsnorm_residual y", &y2),
        ("rmsnorm_residual sum", &residual),
        ("rmsnorm_backward dx", &dx),
        ("rmsnorm_backward dw", &dw),
    ] {
        run.outputs.push((name, rt.download(b)));
    }

    // softmax: forward and backward
    let mut p = rt.upload(&poisoned::<Bf16>(n));
    let l = softmax(gpu, s, &x, &mut p, ROWS, COLS, Threads::Auto).expect("softmax");
    run.launched("softmax", &l);
    let mut dp = rt.upload(&poisoned::<Bf16>(n));
    let l = softmax_backward(gpu, s, &p, &dy, &mut dp, ROWS, COLS, Threads::Auto)
        .expect("softmax_backward");
    run.launched("softmax_backward", &l);
    rt.sync();
    run.outputs.push(("softmax", rt.download(&p)));
    run.outputs.push(("softmax_backward", rt.download(&dp)));

    // swiglu: flat and interleaved
    let mut out = rt.upload(&poisoned::<Bf16>(n));
    let l = swiglu(gpu, s, &x, &dy, &mut out).expect("swiglu");
    run.launched("swiglu", &l);
    let gate_up = rt.upload(&bf16s(2 * n, 5));
    let mut out2 = rt.upload(&poisoned::<Bf16>(n));
    let l = swiglu_interleaved(gpu, s, &gate_up, &mut out2, ROWS, COLS, Threads::Auto)
        .expect("swiglu_interleaved");
    run.launched("swiglu_interleaved", &l);
    rt.sync();
    run.outputs.push(("swiglu", rt.download(&out)));
    run.outputs.push(("swiglu_interleaved", rt.download(&out2)));

    // rope on q and k, in place
    let shape = RopeShape::new(19, 8, 2, 128);
    let mut q = rt.upload(&bf16s(shape.tokens * shape.q_heads * shape.head_dim, 6));
    let mut k = rt.upload(&bf16s(shape.tokens * shape.k_heads * shape.head_dim, 7));
    let cos = rt.upload(&bf16s(shape.tokens * shape.head_dim / 2, 8));
    let sin = rt.upload(&bf16s(shape.tokens * shape.head_dim / 2, 9));
    let l = rope(
        gpu,
        s,
        Pairing::Neox,
        &mut q,
        Some(&mut k),
        &cos,
        &sin,
        shape,
    )
    .expect("rope");
    run.launched("rope", &l);
    rt.sync();
    run.outputs.push(("rope q", rt.download(&q)));
    run.outputs.push(("rope k", rt.download(&k)));

    // gemm, bf16 (tier from the element type), with a bias
    let (m, nn, kk) = (77, 192, 136);
    let a = rt.upload(&bf16s(m * kk, 10));
    let b = rt.upload(&bf16s(kk * nn, 11));
    let bias = rt.upload(&values(nn, 12));
    let mut c = rt.upload(&poisoned::<Bf16>(m * nn));
    let g = gemm(
        gpu,
        s,
        &GemmDesc::new(Layout::NN, m, nn, kk),
        &a,
        &b,
        &mut c,
        Some(&bias),
    )
    .expect("gemm");
    run.launched.push(("gemm", g.to_string()));
    rt.sync();
    run.outputs.push(("gemm", rt.download(&c)));
    run
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn every_op_family_is_bit_identical_on_cust_and_cudarc() {
    let gpu = gpu();
    let cust = Cust {
        stream: gpu.stream().expect("cust stream"),
    };
    let ctx = gpu.cudarc_context().expect("cudarc context");
    let cudarc = Cudarc {
        stream: ctx.new_stream().expect("cudarc stream"),
    };
    println!("{}", gpu.route("copy_vec16").expect("route"));
    let on_cust = run_families(&gpu, &cust);
    let on_cudarc = run_families(&gpu, &cudarc);
    assert_eq!(
        on_cust.launched, on_cudarc.launched,
        "the same launches on both runtimes"
    );
    assert_eq!(on_cust.outputs.len(), on_cudarc.outputs.len());
    for ((name, a), (_, b)) in on_cust.outputs.iter().zip(&on_cudarc.outputs) {
        assert!(
            !a.iter().all(|&v| v == POISON),
            "{name}: {} wrote nothing",
            Cust::NAME
        );
        if let Some((i, x, y)) = first_difference(b, a) {
            panic!(
                "{name}: byte {i} is {x:#04x} on {}, {y:#04x} on {}",
                Cudarc::NAME,
                Cust::NAME
            );
        }
        println!(
            "RUNTIMES {name}: {} bytes bit-identical on cust and cudarc",
            a.len()
        );
    }
    for (what, l) in &on_cust.launched {
        println!("RUNTIMES {what}: {l}");
    }
}
