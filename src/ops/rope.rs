//! Rotary position embedding in place (`cuda/rope.cu`) on q `[tokens, q_heads, head_dim]` and
//! k `[tokens, k_heads, head_dim]`, with cos and sin tables `[tokens, head_dim / 2]` in the
//! storage dtype. For pair p of a head, (a, b) becomes (a cos - b sin, b cos + a sin), where
//! (a, b) is `(x[p], x[p + head_dim / 2])` for [`Pairing::Neox`] and `(x[2p], x[2p + 1])` for
//! [`Pairing::Gptj`].
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::rope::{rope, Pairing, RopeShape};
//! use cubins::runtime::{Bf16, Gpu};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let shape = RopeShape { tokens: 4, q_heads: 32, k_heads: 8, head_dim: 128 };
//! let zeros = |n: usize| DeviceBuffer::from_slice(&vec![Bf16::default(); n]);
//! let mut q = zeros(shape.tokens * shape.q_heads * shape.head_dim)?;
//! let mut k = zeros(shape.tokens * shape.k_heads * shape.head_dim)?;
//! let (cos, sin) = (zeros(shape.tokens * shape.head_dim / 2)?, zeros(shape.tokens * shape.head_dim / 2)?);
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! let launched = rope(&gpu, &stream, Pairing::Neox, &mut q, Some(&mut k), &cos, &sin, shape)?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?);
//! # Ok(()) }
//! ```

use super::rows::{check_disjoint, chunk_elems, shape_error, tensor_bytes};
use super::Launched;
use crate::kernels::{RopeGptj, RopeNeox};
use crate::runtime::launchers::Dtype;
use crate::runtime::{BufferArg, Error, Gpu, KernelSpec, LaunchConfig};
use crate::runtime::{DevicePtr, DeviceRead, DeviceWrite, StreamHandle};

/// Which elements of a head a rotary pair joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pairing {
    /// `(x[p], x[p + head_dim / 2])`: rotate halves (GPT-NeoX, Llama).
    Neox,
    /// `(x[2p], x[2p + 1])`: interleaved pairs (GPT-J).
    Gptj,
}

impl Pairing {
    pub fn name(self) -> &'static str {
        match self {
            Pairing::Neox => "neox",
            Pairing::Gptj => "gptj",
        }
    }

    /// The entry point of this pairing for `T`: `rope_neox_bf16`.
    fn entry<T: Dtype>(self) -> &'static str {
        match self {
            Pairing::Neox => RopeNeox::<T>::info().name,
            Pairing::Gptj => RopeGptj::<T>::info().name,
        }
    }
}

/// Shape of a RoPE launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RopeShape {
    pub tokens: usize,
    pub q_heads: usize,
    pub k_heads: usize,
    pub head_dim: usize,
}

/// `__launch_bounds__` of the kernels.
const MAX_THREADS: u32 = 512;
/// Threads per block the head loop aims at.
const TARGET_THREADS: u32 = 256;
/// Threads along a head on the elementwise path.
const ELEMENT_THREADS_X: u32 = 32;

/// Whether 16-byte accesses are valid for every row: NeoX needs head_dim / 2, GPT-J
/// head_dim, to be a multiple of the chunk width, and every base 16-byte aligned.
fn vector_ok<T>(pairing: Pairing, head_dim: usize, buffers: &[BufferArg]) -> bool {
    let vec = chunk_elems::<T>() as usize;
    let span = match pairing {
        Pairing::Neox => head_dim / 2,
        Pairing::Gptj => head_dim,
    };
    span % vec == 0 && buffers.iter().all(|b| b.address % 16 == 0)
}

/// The block: pair chunks (or pairs) along x, heads along y; each thread visits about
/// `heads / y` heads with its cos/sin chunk loaded once.
fn block<T>(pairing: Pairing, head_dim: usize, heads: usize, vector: bool) -> [u32; 3] {
    let x = if vector {
        let span = match pairing {
            Pairing::Neox => head_dim / 2,
            Pairing::Gptj => head_dim,
        };
        (span / chunk_elems::<T>() as usize) as u32
    } else {
        ELEMENT_THREADS_X.min((head_dim / 2) as u32)
    };
    let y_max = (TARGET_THREADS / x).max(1) as usize;
    let per_thread = heads.div_ceil(y_max);
    let y = heads.div_ceil(per_thread) as u32;
    [x, y, 1]
}

/// Applies RoPE in place to q (and k when given; `k_heads` must be 0 without it).
#[allow(clippy::too_many_arguments)]
pub fn rope<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    pairing: Pairing,
    q: &mut impl DeviceWrite<T, S>,
    k: Option<&mut dyn DeviceWrite<T, S>>,
    cos: &impl DeviceRead<T, S>,
    sin: &impl DeviceRead<T, S>,
    shape: RopeShape,
) -> Result<Launched, Error> {
    // Held to the end: a runtime that orders buffers across streams records the accesses
    // when they drop, after the launches.
    let held = (cos.read(stream), sin.read(stream), q.write(stream));
    let (cos, sin, q) = (held.0.view, held.1.view, held.2.view);
    let k_held = k.map(|b| b.write(stream));
    let k = k_held.as_ref().map(|a| a.view);
    let name = pairing.entry::<T>();
    let RopeShape {
        tokens,
        q_heads,
        k_heads,
        head_dim,
    } = shape;
    if tokens == 0 || q_heads == 0 {
        return Err(shape_error(name, "at least one token and one q head"));
    }
    if head_dim < 2 || head_dim % 2 != 0 {
        return Err(shape_error(name, "an even head_dim of at least 2"));
    }
    if k.is_none() && k_heads != 0 {
        return Err(shape_error(name, "a k buffer when k_heads > 0"));
    }
    let max = u32::MAX as usize;
    if tokens > max || q_heads + k_heads > i32::MAX as usize || head_dim > (1 << 20) {
        return Err(shape_error(
            name,
            "tokens within 2^32 - 1, heads within 2^31 - 1, head_dim within 2^20",
        ));
    }
    let half = head_dim / 2;
    let qb = q.arg("q");
    qb.at_least(tensor_bytes::<T>(tokens * q_heads, head_dim))?;
    let (cb, sb) = (cos.arg("cos"), sin.arg("sin"));
    cb.at_least(tensor_bytes::<T>(tokens, half))?;
    sb.at_least(tensor_bytes::<T>(tokens, half))?;
    let (k_ptr, kb) = match k {
        Some(k) => {
            let kb = k.arg("k");
            kb.at_least(tensor_bytes::<T>(tokens * k_heads, head_dim))?;
            (k.ptr, Some(kb))
        }
        None => (DevicePtr::null(), None),
    };
    let mut outputs = vec![qb];
    outputs.extend(kb);
    check_disjoint(&outputs, &[cb, sb])?;

    let all: Vec<BufferArg> = outputs.iter().copied().chain([cb, sb]).collect();
    let vector = vector_ok::<T>(pairing, head_dim, &all);
    let block = block::<T>(pairing, head_dim, q_heads + k_heads, vector);
    if block[0] * block[1] > MAX_THREADS {
        return Err(shape_error(
            name,
            "head_dim / 2 within 4096 chunks of 16 bytes (512 threads per block)",
        ));
    }
    let launched = Launched {
        kernel: name,
        config: LaunchConfig {
            grid: [tokens.min(i32::MAX as usize) as u32, 1, 1],
            block,
            dynamic_smem_bytes: 0,
            programmatic_dependent: false,
        },
        choice: format!("walk={}", if vector { "vector" } else { "elementwise" }).into(),
    };
    let args = (
        q.ptr,
        k_ptr,
        cos.ptr,
        sin.ptr,
        tokens as u32,
        q_heads as u32,
        k_heads as u32,
        head_dim as u32,
        u32::from(vector),
    );
    // SAFETY: q, k, cos and sin cover the shape; q and k overlap each other and the tables
    // nowhere; `vector` is set only when every row is 16-byte aligned for the kernel's
    // accesses (checked above).
    unsafe {
        match pairing {
            Pairing::Neox => gpu
                .kernel::<RopeNeox<T>>()?
                .launch(stream, &launched.config, args)?,
            Pairing::Gptj => gpu
                .kernel::<RopeGptj<T>>()?
                .launch(stream, &launched.config, args)?,
        }
    };
    Ok(launched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rows::cu_constant;
    use crate::runtime::Bf16;

    #[test]
    fn kernel_constants_match_cuda_rope_cu() {
        assert_eq!(
            MAX_THREADS,
            cu_constant(include_str!("../../cuda/rope.cu"), "kMaxThreads")
        );
    }

    #[test]
    fn blocks_cover_the_heads_within_the_bounds() {
        // bf16, head_dim 128, NeoX: 8 chunks per half-head; 40 heads at up to 32 per block
        // row take 2 per thread, so 20 rows of threads.
        assert_eq!(block::<Bf16>(Pairing::Neox, 128, 40, true), [8, 20, 1]);
        assert_eq!(block::<Bf16>(Pairing::Gptj, 128, 40, true), [16, 14, 1]);
        assert_eq!(block::<f32>(Pairing::Neox, 6, 3, false), [3, 3, 1]);
        let buf = |address| BufferArg {
            param: "q",
            address,
            bytes: 1 << 20,
        };
        assert!(vector_ok::<Bf16>(
            Pairing::Neox,
            128,
            &[buf(0x1000), buf(0x2000)]
        ));
        assert!(!vector_ok::<Bf16>(
            Pairing::Neox,
            128,
            &[buf(0x1000), buf(0x2002)]
        ));
        assert!(
            !vector_ok::<Bf16>(Pairing::Neox, 72, &[buf(0x1000)]),
            "36 is not a multiple of 8"
        );
        assert!(vector_ok::<Bf16>(Pairing::Gptj, 72, &[buf(0x1000)]));
        assert!(vector_ok::<Bf16>(Pairing::Neox, 80, &[buf(0x1000)]));
    }
}
