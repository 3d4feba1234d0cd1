use cubins::ops::copy::{copy, CopyKernel};
use cubins::ops::gemm::{gemm, GemmDesc, Layout};
use cubins::ops::rmsnorm::{rmsnorm, rmsnorm_residual, RmsNormOptions};
use cubins::ops::rope::{rope, Pairing, RopeShape};
use cubins::ops::softmax::softmax;
use cubins::ops::swiglu::swiglu_interleaved;
use cubins::ops::{Launched, Threads};
use cubins::runtime::{Bf16, DeviceRead, DeviceWrite, Error, Gpu, StreamHandle};

/// bf16 device memory that the steps read and write, of the runtime whose streams are `S`:
/// cust's `DeviceBuffer<Bf16>` with `cust::stream::Stream`, cudarc's `CudaSlice<Bf16>` with
/// `Arc<CudaStream>`.
pub trait Buffer<S>: DeviceRead<Bf16, S> + DeviceWrite<Bf16, S> {}

impl<S, B: DeviceRead<Bf16, S> + DeviceWrite<Bf16, S>> Buffer<S> for B {}

/// The sizes of a decoder layer and of one step's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    pub tokens: usize,
    pub hidden: usize,
    pub q_heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub ffn: usize,
    pub vocab: usize,
}

impl Dims {
    fn q_width(&self) -> usize {
        self.q_heads * self.head_dim
    }

    fn k_width(&self) -> usize {
        self.kv_heads * self.head_dim
    }

    /// Elements of rotated k for the step's tokens (`[tokens, kv_heads, head_dim]`): the
    /// length of the KV-cache slot [`Decoder::attention_inputs`] copies k into.
    pub fn k_len(&self) -> usize {
        self.tokens * self.k_width()
    }

    /// Elements of each RoPE table (`[tokens, head_dim / 2]`).
    pub fn rope_table_len(&self) -> usize {
        self.tokens * self.head_dim / 2
    }
}

/// A layer's weights, and the final norm and LM head. Projections are `[out, in]`.
pub struct Layer<B> {
    /// `[hidden]`
    pub attn_norm: B,
    /// `[q_heads * head_dim, hidden]`
    pub wq: B,
    /// `[kv_heads * head_dim, hidden]`
    pub wk: B,
    /// `[hidden]`
    pub mlp_norm: B,
    /// `[2 * ffn, hidden]`: the gate projection's rows, then the up projection's.
    pub w_gate_up: B,
    /// `[hidden, ffn]`
    pub w_down: B,
    /// `[hidden]`
    pub final_norm: B,
    /// `[vocab, hidden]`
    pub lm_head: B,
}

impl<B> Layer<B> {
    /// Each weight's name and length in elements, in field order: what to upload.
    pub fn shapes(d: &Dims) -> [(&'static str, usize); 8] {
        [
            ("attn_norm", d.hidden),
            ("wq", d.q_width() * d.hidden),
            ("wk", d.k_width() * d.hidden),
            ("mlp_norm", d.hidden),
            ("w_gate_up", 2 * d.ffn * d.hidden),
            ("w_down", d.hidden * d.ffn),
            ("final_norm", d.hidden),
            ("lm_head", d.vocab * d.hidden),
        ]
    }
}

/// A layer and the activations its steps pass along (allocated once, reused every step).
pub struct Decoder<B> {
    dims: Dims,
    layer: Layer<B>,
    /// `[tokens, hidden]`: the last RMSNorm's output.
    normed: B,
    /// `[tokens, q_heads, head_dim]`, rotated.
    q: B,
    /// `[tokens, kv_heads, head_dim]`, rotated.
    k: B,
    /// `[tokens, 2 * ffn]`
    gate_up: B,
    /// `[tokens, ffn]`
    act: B,
    /// `[tokens, vocab]`
    logits: B,
}

impl<B> Decoder<B> {
    /// `alloc(len)` allocates a buffer of `len` elements (its contents are overwritten before
    /// they are read).
    pub fn new<E>(
        dims: Dims,
        layer: Layer<B>,
        mut alloc: impl FnMut(usize) -> Result<B, E>,
    ) -> Result<Self, E> {
        let t = dims.tokens;
        Ok(Self {
            normed: alloc(t * dims.hidden)?,
            q: alloc(t * dims.q_width())?,
            k: alloc(t * dims.k_width())?,
            gate_up: alloc(t * 2 * dims.ffn)?,
            act: alloc(t * dims.ffn)?,
            logits: alloc(t * dims.vocab)?,
            dims,
            layer,
        })
    }

    pub fn dims(&self) -> &Dims {
        &self.dims
    }

    /// The activations by name, as the last steps left them: `normed`, `q`, `k`, `gate_up`,
    /// `act`, `logits`.
    pub fn activations(&self) -> [(&'static str, &B); 6] {
        [
            ("normed", &self.normed),
            ("q", &self.q),
            ("k", &self.k),
            ("gate_up", &self.gate_up),
            ("act", &self.act),
            ("logits", &self.logits),
        ]
    }

    /// `x` `[tokens, hidden]` normalized, projected to q and k, both rotated by the tables
    /// `cos` and `sin` (NeoX pairing), and k copied into `k_cache_slot` ([`Dims::k_len`]).
    pub fn attention_inputs<S: StreamHandle>(
        &mut self,
        gpu: &Gpu,
        stream: &S,
        x: &impl DeviceRead<Bf16, S>,
        cos: &impl DeviceRead<Bf16, S>,
        sin: &impl DeviceRead<Bf16, S>,
        k_cache_slot: &mut impl DeviceWrite<Bf16, S>,
    ) -> Result<Vec<Launched>, Error>
    where
        B: Buffer<S>,
    {
        let d = self.dims;
        let norm = RmsNormOptions::default();
        let mut launched = vec![rmsnorm(
            gpu,
            stream,
            x,
            &self.layer.attn_norm,
            &mut self.normed,
            d.tokens,
            d.hidden,
            &norm,
        )?];
        launched.push(self.project(gpu, stream, Projection::Q)?);
        launched.push(self.project(gpu, stream, Projection::K)?);
        let shape = RopeShape::new(d.tokens, d.q_heads, d.kv_heads, d.head_dim);
        let k: &mut dyn DeviceWrite<Bf16, S> = &mut self.k;
        launched.push(rope(
            gpu,
            stream,
            Pairing::Neox,
            &mut self.q,
            Some(k),
            cos,
            sin,
            shape,
        )?);
        launched.push(copy(gpu, stream, CopyKernel::Vec16, &self.k, k_cache_slot)?);
        Ok(launched)
    }

    /// The MLP block: `residual += attn_out` (written back), its RMSNorm projected to gate
    /// and up, SwiGLU, and the down projection into `out` `[tokens, hidden]`.
    pub fn mlp<S: StreamHandle>(
        &mut self,
        gpu: &Gpu,
        stream: &S,
        attn_out: &impl DeviceRead<Bf16, S>,
        residual: &mut impl DeviceWrite<Bf16, S>,
        out: &mut impl DeviceWrite<Bf16, S>,
    ) -> Result<Vec<Launched>, Error>
    where
        B: Buffer<S>,
    {
        let d = self.dims;
        let mut launched = vec![rmsnorm_residual(
            gpu,
            stream,
            attn_out,
            residual,
            &self.layer.mlp_norm,
            &mut self.normed,
            d.tokens,
            d.hidden,
            &RmsNormOptions::default(),
        )?];
        launched.push(self.project(gpu, stream, Projection::GateUp)?);
        launched.push(swiglu_interleaved(
            gpu,
            stream,
            &self.gate_up,
            &mut self.act,
            d.tokens,
            d.ffn,
            Threads::Auto,
        )?);
        let desc = GemmDesc::new(Layout::NT, d.tokens, d.hidden, d.ffn);
        launched
            .push(gemm(gpu, stream, &desc, &self.act, &self.layer.w_down, out, None)?.launched()?);
        Ok(launched)
    }

    /// The final RMSNorm of `h` `[tokens, hidden]`, the LM head, and the softmax over the
    /// vocabulary into `probs` `[tokens, vocab]`.
    pub fn next_token_probs<S: StreamHandle>(
        &mut self,
        gpu: &Gpu,
        stream: &S,
        h: &impl DeviceRead<Bf16, S>,
        probs: &mut impl DeviceWrite<Bf16, S>,
    ) -> Result<Vec<Launched>, Error>
    where
        B: Buffer<S>,
    {
        let d = self.dims;
        let mut launched = vec![rmsnorm(
            gpu,
            stream,
            h,
            &self.layer.final_norm,
            &mut self.normed,
            d.tokens,
            d.hidden,
            &RmsNormOptions::default(),
        )?];
        launched.push(self.project(gpu, stream, Projection::Logits)?);
        launched.push(softmax(
            gpu,
            stream,
            &self.logits,
            probs,
            d.tokens,
            d.vocab,
            Threads::Auto,
        )?);
        Ok(launched)
    }

    /// `normed` times a weight's transpose into its activation (`NT`: both K-major).
    fn project<S: StreamHandle>(
        &mut self,
        gpu: &Gpu,
        stream: &S,
        which: Projection,
    ) -> Result<Launched, Error>
    where
        B: Buffer<S>,
    {
        let d = self.dims;
        let (w, out, n) = match which {
            Projection::Q => (&self.layer.wq, &mut self.q, d.q_width()),
            Projection::K => (&self.layer.wk, &mut self.k, d.k_width()),
            Projection::GateUp => (&self.layer.w_gate_up, &mut self.gate_up, 2 * d.ffn),
            Projection::Logits => (&self.layer.lm_head, &mut self.logits, d.vocab),
        };
        let desc = GemmDesc::new(Layout::NT, d.tokens, n, d.hidden);
        gemm(gpu, stream, &desc, &self.normed, w, out, None)?.launched()
    }
}

/// The projections of `normed`.
#[derive(Clone, Copy)]
enum Projection {
    Q,
    K,
    GateUp,
    Logits,
}
