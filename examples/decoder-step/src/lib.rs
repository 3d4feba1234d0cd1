//! A crate that uses cubins' precompiled kernels and has none of its own: the steps of a
//! transformer decoder layer (bf16, weights stored `[out_features, in_features]` as torch's
//! `Linear` keeps them), written once against the traits cubins' ops take, so the same code
//! runs on `cust` buffers and streams (feature `cust`) and on `cudarc` slices and streams
//! (feature `cudarc`). It needs no CUDA toolkit of its own: cubins embeds the kernels.
//!
//! Every op family appears: [`Decoder::attention_inputs`] (RMSNorm, GEMM, RoPE, copy into a
//! KV cache), [`Decoder::mlp`] (fused residual RMSNorm, GEMM, SwiGLU), and
//! [`Decoder::next_token_probs`] (RMSNorm, GEMM, softmax). Each returns the `Launched`
//! record of every kernel it queued; `Launched::stamp` gives the route's STAMP line.
//!
//! Uploads and their ordering stay the caller's: the steps queue work on the stream given and
//! return without waiting.

#[cfg(any(feature = "cust", feature = "cudarc"))]
mod decoder;

#[cfg(any(feature = "cust", feature = "cudarc"))]
pub use decoder::{Buffer, Decoder, Dims, Layer};
