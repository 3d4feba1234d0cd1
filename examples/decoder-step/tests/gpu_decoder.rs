//! The decoder steps on a GPU through both runtimes: the same `Decoder` code on cust buffers
//! and stream, then on cudarc slices and stream, from the same deterministic inputs into
//! poisoned outputs. Every activation and output must be bit-identical across the two, every
//! `Launched` record equal; and every stage must match a float64 reference computed from the
//! GPU's own input to that stage, within what bf16 storage rounds (a wrong layout, pairing or
//! index is off by the size of the values). Wrong sizes are an `Err` before the launch.
//!
//! `#[ignore]`d (no GPU in CI): the GPU bundle runs it with `--include-ignored`, where it
//! fails without a GPU.
#![cfg(all(feature = "cust", feature = "cudarc"))]

use cubins::cudarc::driver::{CudaSlice, CudaStream};
use cubins::cust::context::CurrentContext;
use cubins::cust::memory::DeviceBuffer;
use cubins::cust::stream::Stream;
use cubins::half::bf16;
use cubins::runtime::{Bf16, Error, Gpu, LaunchError, RoutePolicy, StreamHandle};
use decoder_step::{Buffer, Decoder, Dims, Layer};
use std::sync::Arc;

const DIMS: Dims = Dims {
    tokens: 24,
    hidden: 512,
    q_heads: 8,
    kv_heads: 2,
    head_dim: 64,
    ffn: 768,
    vocab: 1000,
};

/// The bits every output starts as (a NaN in bf16): a slot no kernel wrote still holds them.
const POISON: u16 = 0x7FA5;

fn gpu() -> Gpu {
    Gpu::with_policy(0, RoutePolicy::Auto)
        .unwrap_or_else(|e| panic!("this GPU test needs a CUDA device and found none: {e}"))
}

/// A runtime's buffers and stream, as this test allocates and reads them.
trait Runtime {
    type Stream: StreamHandle;
    type Buf: Buffer<Self::Stream>;
    const NAME: &'static str;
    fn stream(&self) -> &Self::Stream;
    /// A buffer holding `host`, its copy complete before it returns.
    fn upload(&self, host: &[Bf16]) -> Self::Buf;
    fn download(&self, buf: &Self::Buf) -> Vec<Bf16>;
    fn sync(&self);
    fn poisoned(&self, len: usize) -> Self::Buf {
        self.upload(&vec![Bf16(bf16::from_bits(POISON)); len])
    }
}

struct Cust {
    stream: Stream,
}

impl Runtime for Cust {
    type Stream = Stream;
    type Buf = DeviceBuffer<Bf16>;
    const NAME: &'static str = "cust";
    fn stream(&self) -> &Stream {
        &self.stream
    }
    fn upload(&self, host: &[Bf16]) -> DeviceBuffer<Bf16> {
        let buf = DeviceBuffer::from_slice(host).expect("upload");
        // The synchronous copy ran on the legacy stream, which `Gpu::stream` does not wait for.
        CurrentContext::synchronize().expect("upload");
        buf
    }
    fn download(&self, buf: &DeviceBuffer<Bf16>) -> Vec<Bf16> {
        buf.as_host_vec().expect("download")
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
    type Buf = CudaSlice<Bf16>;
    const NAME: &'static str = "cudarc";
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    fn upload(&self, host: &[Bf16]) -> CudaSlice<Bf16> {
        let buf = self.stream.clone_htod(host).expect("upload");
        self.stream.synchronize().expect("upload");
        buf
    }
    fn download(&self, buf: &CudaSlice<Bf16>) -> Vec<Bf16> {
        self.stream.clone_dtoh(buf).expect("download")
    }
    fn sync(&self) {
        self.stream.synchronize().expect("cudarc stream");
    }
}

/// Deterministic values in [-scale, scale) (splitmix64), held exactly in bf16.
fn values(len: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let unit = (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
            bf16::from_f32(unit * scale).to_f32()
        })
        .collect()
}

fn to_bf16(v: &[f32]) -> Vec<Bf16> {
    v.iter().map(|&x| Bf16(bf16::from_f32(x))).collect()
}

fn to_f64(v: &[Bf16]) -> Vec<f64> {
    v.iter().map(|x| f64::from(x.0.to_f32())).collect()
}

/// The host inputs: weights scaled by 1/sqrt(fan-in) so activations stay near 1, and RoPE
/// tables of real angles.
struct Inputs {
    weights: Vec<Vec<f32>>,
    x: Vec<f32>,
    attn_out: Vec<f32>,
    residual: Vec<f32>,
    cos: Vec<f32>,
    sin: Vec<f32>,
}

fn inputs(d: &Dims) -> Inputs {
    let weights = Layer::<()>::shapes(d)
        .iter()
        .enumerate()
        .map(|(i, &(name, len))| {
            let fan_in = if name == "w_down" { d.ffn } else { d.hidden };
            let scale = if name.ends_with("norm") {
                1.0
            } else {
                (3.0 / fan_in as f32).sqrt()
            };
            let mut w = values(len, 100 + i as u64, scale);
            if name.ends_with("norm") {
                w.iter_mut()
                    .for_each(|v| *v = bf16::from_f32(1.0 + *v / 4.0).to_f32());
            }
            w
        })
        .collect();
    let half = d.head_dim / 2;
    let angle =
        |t: usize, p: usize| t as f64 * 10000f64.powf(-(2.0 * p as f64) / d.head_dim as f64);
    let table = |f: fn(f64) -> f64| -> Vec<f32> {
        (0..d.tokens * half)
            .map(|i| bf16::from_f64(f(angle(i / half, i % half))).to_f32())
            .collect()
    };
    let act = d.tokens * d.hidden;
    Inputs {
        weights,
        x: values(act, 1, 2.0),
        attn_out: values(act, 2, 1.0),
        residual: values(act, 3, 1.0),
        cos: table(f64::cos),
        sin: table(f64::sin),
    }
}

/// What one runtime's run of the steps produced: every buffer's contents by name, in the
/// order they were read, and every launch's record.
struct Run {
    buffers: Vec<(String, Vec<Bf16>)>,
    launched: Vec<String>,
    stamps: Vec<String>,
}

impl Run {
    fn get(&self, name: &str) -> Vec<f64> {
        let (_, v) = self
            .buffers
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no buffer {name}"));
        to_f64(v)
    }
}

/// The layer's weights uploaded, and activations poisoned.
fn decoder<R: Runtime>(rt: &R, host: &Inputs) -> Decoder<R::Buf> {
    let [attn_norm, wq, wk, mlp_norm, w_gate_up, w_down, final_norm, lm_head] =
        std::array::from_fn(|i| rt.upload(&to_bf16(&host.weights[i])));
    let layer = Layer {
        attn_norm,
        wq,
        wk,
        mlp_norm,
        w_gate_up,
        w_down,
        final_norm,
        lm_head,
    };
    Decoder::new(DIMS, layer, |len| Ok::<_, ()>(rt.poisoned(len))).unwrap()
}

fn run_steps<R: Runtime>(gpu: &Gpu, rt: &R, host: &Inputs) -> Run {
    let d = DIMS;
    let s = rt.stream();
    let mut dec = decoder(rt, host);
    let mut run = Run {
        buffers: vec![],
        launched: vec![],
        stamps: vec![],
    };
    let keep = |run: &mut Run, launched: Vec<cubins::ops::Launched>| {
        for l in launched {
            run.stamps.push(l.stamp(gpu).expect("route"));
            run.launched.push(format!("{l:?}"));
        }
    };
    // What a step wrote: the activations named, and the caller's buffers.
    let read = |run: &mut Run,
                dec: &Decoder<R::Buf>,
                step: &str,
                wrote: &[&str],
                extra: &[(&str, &R::Buf)]| {
        rt.sync();
        let activations = dec
            .activations()
            .into_iter()
            .filter(|(n, _)| wrote.contains(n));
        for (name, buf) in activations.chain(extra.iter().copied()) {
            run.buffers
                .push((format!("{step}.{name}"), rt.download(buf)));
        }
    };

    let x = rt.upload(&to_bf16(&host.x));
    let cos = rt.upload(&to_bf16(&host.cos));
    let sin = rt.upload(&to_bf16(&host.sin));
    let mut k_cache = rt.poisoned(d.k_len());
    let l = dec
        .attention_inputs(gpu, s, &x, &cos, &sin, &mut k_cache)
        .expect("attention_inputs");
    keep(&mut run, l);
    read(
        &mut run,
        &dec,
        "attn",
        &["normed", "q", "k"],
        &[("k_cache", &k_cache)],
    );

    let attn_out = rt.upload(&to_bf16(&host.attn_out));
    let mut residual = rt.upload(&to_bf16(&host.residual));
    let mut out = rt.poisoned(d.tokens * d.hidden);
    let l = dec
        .mlp(gpu, s, &attn_out, &mut residual, &mut out)
        .expect("mlp");
    keep(&mut run, l);
    read(
        &mut run,
        &dec,
        "mlp",
        &["normed", "gate_up", "act"],
        &[("residual", &residual), ("out", &out)],
    );

    let mut probs = rt.poisoned(d.tokens * d.vocab);
    let l = dec
        .next_token_probs(gpu, s, &out, &mut probs)
        .expect("next_token_probs");
    keep(&mut run, l);
    read(
        &mut run,
        &dec,
        "head",
        &["normed", "logits"],
        &[("probs", &probs)],
    );
    run
}

/// Asserts `got` within `tol(i, want)` of `want` everywhere; says where and by how much not.
fn assert_close(what: &str, got: &[f64], want: &[f64], tol: impl Fn(usize, f64) -> f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut worst = 0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let t = tol(i, w);
        assert!(
            (g - w).abs() <= t,
            "{what}[{i}]: got {g}, want {w} (tolerance {t:e})"
        );
        worst = worst.max((g - w).abs() / t);
    }
    println!(
        "PARITY {what}: {} values, worst {:.3} of the tolerance",
        got.len(),
        worst
    );
}

/// One rounding to bf16 (8 significant bits) of a value computed in fp32 or better: within
/// 2^-8 of it, relative, plus what fp32 sums of `terms` magnitude leave.
fn bf16_tol(want: f64, terms: f64) -> f64 {
    want.abs() / 256.0 * 1.01 + terms * 1e-6 + 1e-30
}

fn rmsnorm_ref(x: &[f64], w: &[f64], cols: usize) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let ms = row.iter().map(|v| v * v).sum::<f64>() / cols as f64;
            let rstd = 1.0 / (ms + 1e-6).sqrt();
            row.iter().zip(w).map(move |(v, w)| v * rstd * w)
        })
        .collect()
}

/// `a [m, k]` times `b [n, k]` transposed, and each product's sum of magnitudes.
fn gemm_nt_ref(a: &[f64], b: &[f64], k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![];
    let mut mag = vec![];
    for ar in a.chunks(k) {
        for br in b.chunks(k) {
            c.push(ar.iter().zip(br).map(|(x, y)| x * y).sum());
            mag.push(ar.iter().zip(br).map(|(x, y)| (x * y).abs()).sum());
        }
    }
    (c, mag)
}

fn check_gemm(what: &str, got: &[f64], a: &[f64], b: &[f64], k: usize) {
    let (want, mag) = gemm_nt_ref(a, b, k);
    assert_close(what, got, &want, |i, w| bf16_tol(w, mag[i]));
}

/// RoPE (NeoX pairing) of `pre` `[tokens, heads, head_dim]`.
fn rope_ref(pre: &[f64], cos: &[f64], sin: &[f64], heads: usize, head_dim: usize) -> Vec<f64> {
    let half = head_dim / 2;
    let mut out = pre.to_vec();
    for (r, head) in out.chunks_mut(head_dim).enumerate() {
        let t = r / heads;
        for p in 0..half {
            let (a, b) = (head[p], head[p + half]);
            let (c, s) = (cos[t * half + p], sin[t * half + p]);
            head[p] = a * c - b * s;
            head[p + half] = b * c + a * s;
        }
    }
    out
}

/// Every stage of one run against float64, each from the GPU's own input to it.
fn check_against_f64(run: &Run, host: &Inputs) {
    let d = DIMS;
    let w: Vec<Vec<f64>> = host
        .weights
        .iter()
        .map(|v| v.iter().map(|&x| f64::from(x)).collect())
        .collect();
    let f = |v: &[f32]| -> Vec<f64> { v.iter().map(|&x| f64::from(x)).collect() };
    let (cos, sin) = (f(&host.cos), f(&host.sin));
    let norm_tol = |want: f64| bf16_tol(want, want.abs() * 4.0);

    // attention inputs
    let normed = run.get("attn.normed");
    let want = rmsnorm_ref(&f(&host.x), &w[0], d.hidden);
    assert_close("attn rmsnorm", &normed, &want, |_, w| norm_tol(w));
    for (name, weight, heads) in [("q", &w[1], d.q_heads), ("k", &w[2], d.kv_heads)] {
        // The projection is rotated in place, so its reference is rounded to bf16 first, as
        // the GPU stored it: rotations of values one rounding apart stay within two.
        let (pre, mag) = gemm_nt_ref(&normed, weight, d.hidden);
        let pre: Vec<f64> = pre.iter().map(|&v| bf16::from_f64(v).to_f64()).collect();
        let want = rope_ref(&pre, &cos, &sin, heads, d.head_dim);
        let got = run.get(&format!("attn.{name}"));
        let half = d.head_dim / 2;
        assert_close(
            &format!("attn {name} projection + rope"),
            &got,
            &want,
            |i, w| {
                let partner = i - i % d.head_dim + (i % d.head_dim + half) % d.head_dim;
                let scale = pre[i].abs() + pre[partner].abs();
                bf16_tol(w, mag[i] + mag[partner]) + scale / 128.0
            },
        );
    }
    assert_eq!(
        run.get("attn.k_cache"),
        run.get("attn.k"),
        "the KV-cache slot holds k's bits"
    );

    // MLP
    let residual = run.get("mlp.residual");
    let sum: Vec<f64> = f(&host.attn_out)
        .iter()
        .zip(f(&host.residual))
        .map(|(a, b)| a + b)
        .collect();
    assert_close("mlp residual add", &residual, &sum, |_, w| bf16_tol(w, 0.0));
    let normed = run.get("mlp.normed");
    let want = rmsnorm_ref(&residual, &w[3], d.hidden);
    assert_close("mlp rmsnorm", &normed, &want, |_, w| norm_tol(w));
    let gate_up = run.get("mlp.gate_up");
    check_gemm("mlp gate_up", &gate_up, &normed, &w[4], d.hidden);
    let act = run.get("mlp.act");
    let want: Vec<f64> = gate_up
        .chunks(2 * d.ffn)
        .flat_map(|row| {
            let (g, u) = row.split_at(d.ffn);
            g.iter()
                .zip(u)
                .map(|(g, u)| g / (1.0 + (-g).exp()) * u)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_close("mlp swiglu", &act, &want, |_, w| bf16_tol(w, w.abs() * 4.0));
    let out = run.get("mlp.out");
    check_gemm("mlp down", &out, &act, &w[5], d.ffn);

    // next-token probabilities
    let normed = run.get("head.normed");
    let want = rmsnorm_ref(&out, &w[6], d.hidden);
    assert_close("head rmsnorm", &normed, &want, |_, w| norm_tol(w));
    let logits = run.get("head.logits");
    check_gemm("head lm_head", &logits, &normed, &w[7], d.hidden);
    let probs = run.get("head.probs");
    let want: Vec<f64> = logits
        .chunks(d.vocab)
        .flat_map(|row| {
            let max = row.iter().cloned().fold(f64::MIN, f64::max);
            let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
            row.iter().map(move |v| (v - max).exp() / sum)
        })
        .collect();
    assert_close("head softmax", &probs, &want, |_, w| {
        bf16_tol(w, w.abs() * 8.0)
    });
}

fn runtimes(gpu: &Gpu) -> (Cust, Cudarc) {
    let cust = Cust {
        stream: gpu.stream().expect("cust stream"),
    };
    let ctx = gpu.cudarc_context().expect("cudarc context");
    let cudarc = Cudarc {
        stream: ctx.new_stream().expect("cudarc stream"),
    };
    (cust, cudarc)
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn the_decoder_steps_match_f64_and_are_bit_identical_on_cust_and_cudarc() {
    let gpu = gpu();
    let (cust, cudarc) = runtimes(&gpu);
    let host = inputs(&DIMS);
    let on_cust = run_steps(&gpu, &cust, &host);
    let on_cudarc = run_steps(&gpu, &cudarc, &host);
    for stamp in &on_cust.stamps {
        println!("{stamp}");
    }
    assert_eq!(
        on_cust.launched, on_cudarc.launched,
        "the same launches on both runtimes"
    );
    assert_eq!(on_cust.buffers.len(), on_cudarc.buffers.len());
    for ((name, a), (_, b)) in on_cust.buffers.iter().zip(&on_cudarc.buffers) {
        let bits = |v: &[Bf16]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<u16>>();
        let (a, b) = (bits(a), bits(b));
        assert!(
            !a.contains(&POISON),
            "{name}: a slot on {} still holds the poison",
            Cust::NAME
        );
        if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
            panic!(
                "{name}[{i}]: {:#06x} on {}, {:#06x} on {}",
                b[i],
                Cudarc::NAME,
                a[i],
                Cust::NAME
            );
        }
        println!(
            "RUNTIMES {name}: {} values bit-identical on cust and cudarc",
            a.len()
        );
    }
    check_against_f64(&on_cust, &host);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn a_cache_slot_of_the_wrong_size_is_an_error_before_its_copy() {
    let gpu = gpu();
    let (cust, cudarc) = runtimes(&gpu);
    let host = inputs(&DIMS);
    fn short_slot<R: Runtime>(gpu: &Gpu, rt: &R, host: &Inputs) -> Error {
        let d = DIMS;
        let mut dec = decoder(rt, host);
        let (x, cos, sin) = (
            rt.upload(&to_bf16(&host.x)),
            rt.upload(&to_bf16(&host.cos)),
            rt.upload(&to_bf16(&host.sin)),
        );
        let mut slot = rt.poisoned(d.k_len() - 8);
        let e = dec
            .attention_inputs(gpu, rt.stream(), &x, &cos, &sin, &mut slot)
            .unwrap_err();
        rt.sync();
        assert!(
            rt.download(&slot).iter().all(|v| v.0.to_bits() == POISON),
            "{}: the refused copy wrote nothing",
            R::NAME
        );
        e
    }
    for e in [
        short_slot(&gpu, &cust, &host),
        short_slot(&gpu, &cudarc, &host),
    ] {
        assert!(
            matches!(e, Error::Launch(LaunchError::LengthMismatch { .. })),
            "{e}"
        );
        println!("REFUSED {e}");
    }
}
