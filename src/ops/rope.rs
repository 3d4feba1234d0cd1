//! Rotary position embedding in place (`cuda/rope.cu`) on q `[tokens, q_heads, head_dim]` and
//! k `[tokens, k_heads, head_dim]` in one launch (any q and k head counts: grouped-query
//! attention), with cos and sin tables `[tokens, rotary_dim / 2]` in the storage dtype. The
//! first `rotary_dim` elements of each head rotate (all of them by default; fewer for a
//! partial rotary embedding, the rest untouched). For pair p, (a, b) becomes
//! (a cos - b sin, b cos + a sin), where (a, b) is `(x[p], x[p + rotary_dim / 2])` for
//! [`Pairing::Neox`] and `(x[2p], x[2p + 1])` for [`Pairing::Gptj`].
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::rope::{rope, Pairing, RopeShape};
//! use cubins::runtime::{Bf16, Gpu};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let shape = RopeShape::new(4, 32, 8, 128); // tokens, q heads, k heads, head_dim
//! // (RopeShape::new(4, 32, 8, 128).with_rotary_dim(64): the first 64 elements of each head)
//! let zeros = |n: usize| DeviceBuffer::from_slice(&vec![Bf16::default(); n]);
//! let mut q = zeros(shape.tokens * shape.q_heads * shape.head_dim)?;
//! let mut k = zeros(shape.tokens * shape.k_heads * shape.head_dim)?;
//! let (cos, sin) = (zeros(shape.tokens * shape.rotary_dim / 2)?, zeros(shape.tokens * shape.rotary_dim / 2)?);
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! let launched = rope(&gpu, &stream, Pairing::Neox, &mut q, Some(&mut k), &cos, &sin, shape)?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?);
//! # Ok(()) }
//! ```

use super::rows::{check_disjoint, chunk_elems, shape_error, tensor_bytes, SPREAD_THREADS_PER_SM};
use super::Launched;
use crate::kernels::{RopeGptj, RopeNeox};
use crate::runtime::launchers::Dtype;
use crate::runtime::{BufferArg, Error, Gpu, KernelSpec, LaunchConfig};
use crate::runtime::{DevicePtr, DeviceRead, DeviceWrite, StreamHandle};

/// Which elements of a head a rotary pair joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pairing {
    /// `(x[p], x[p + rotary_dim / 2])`: rotate halves (GPT-NeoX, Llama).
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
    /// Elements per head (the row stride of q and k).
    pub head_dim: usize,
    /// The leading elements of each head that rotate: even, at most `head_dim`.
    pub rotary_dim: usize,
}

impl RopeShape {
    /// Every element of each head rotates (`rotary_dim == head_dim`).
    pub const fn new(tokens: usize, q_heads: usize, k_heads: usize, head_dim: usize) -> Self {
        RopeShape {
            tokens,
            q_heads,
            k_heads,
            head_dim,
            rotary_dim: head_dim,
        }
    }

    /// Only the first `rotary_dim` elements of each head rotate (partial rotary embedding).
    pub const fn with_rotary_dim(self, rotary_dim: usize) -> Self {
        RopeShape { rotary_dim, ..self }
    }
}

/// `__launch_bounds__` of the kernels.
const MAX_THREADS: u32 = 512;
/// Threads per block the head loop aims at.
const TARGET_THREADS: u32 = 256;
/// Threads along a head on the elementwise path.
const ELEMENT_THREADS_X: u32 = 32;

/// The elements of a head one vector thread's chunks span: NeoX's first half, GPT-J's whole
/// rotary part.
fn span(pairing: Pairing, rotary_dim: usize) -> usize {
    match pairing {
        Pairing::Neox => rotary_dim / 2,
        Pairing::Gptj => rotary_dim,
    }
}

/// Whether 16-byte accesses are valid for every row: the span and head_dim (every head's
/// start) multiples of the chunk width, and every base 16-byte aligned.
fn vector_ok<T>(pairing: Pairing, shape: &RopeShape, buffers: &[BufferArg]) -> bool {
    let vec = chunk_elems::<T>() as usize;
    span(pairing, shape.rotary_dim) % vec == 0
        && shape.head_dim % vec == 0
        && buffers.iter().all(|b| b.address % 16 == 0)
}

/// The block: pair chunks (or pairs) along x, heads along y; each thread visits about
/// `heads / y` heads with its cos/sin chunk loaded once.
fn block<T>(pairing: Pairing, rotary_dim: usize, heads: usize, vector: bool) -> [u32; 3] {
    let x = if vector {
        (span(pairing, rotary_dim) / chunk_elems::<T>() as usize) as u32
    } else {
        ELEMENT_THREADS_X.min((rotary_dim / 2) as u32)
    };
    let y_max = (TARGET_THREADS / x).max(1) as usize;
    let per_thread = heads.div_ceil(y_max);
    let y = heads.div_ceil(per_thread) as u32;
    [x, y, 1]
}

/// Head groups per token (grid.y): one while the tokens fill the GPU; with few tokens, up to
/// one head per thread row, as many groups as keep the launch within
/// [`SPREAD_THREADS_PER_SM`] per SM. (One token of 512 heads had one block walk them, two
/// in flight per thread: 0.6x torch.compile.)
fn head_groups(tokens: usize, heads: usize, block: [u32; 3], sms: u32) -> u32 {
    let per_token = u64::from(sms) * SPREAD_THREADS_PER_SM
        / (tokens.max(1) as u64 * u64::from(block[0] * block[1]));
    (heads.div_ceil(block[1] as usize) as u64)
        .min(per_token)
        .clamp(1, u64::from(u16::MAX)) as u32
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
        rotary_dim,
    } = shape;
    if tokens == 0 || q_heads == 0 {
        return Err(shape_error(name, "at least one token and one q head"));
    }
    if rotary_dim < 2 || rotary_dim % 2 != 0 || rotary_dim > head_dim {
        return Err(shape_error(
            name,
            "an even rotary_dim of at least 2 and at most head_dim",
        ));
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
    let half = rotary_dim / 2;
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
    let vector = vector_ok::<T>(pairing, &shape, &all);
    let block = block::<T>(pairing, rotary_dim, q_heads + k_heads, vector);
    if block[0] * block[1] > MAX_THREADS {
        return Err(shape_error(
            name,
            "rotary_dim / 2 within 4096 chunks of 16 bytes (512 threads per block)",
        ));
    }
    let groups = head_groups(tokens, q_heads + k_heads, block, gpu.device().sm_count);
    let launched = Launched {
        kernel: name,
        config: LaunchConfig {
            grid: [tokens.min(i32::MAX as usize) as u32, groups, 1],
            block,
            dynamic_smem_bytes: 0,
            programmatic_dependent: false,
        },
        choice: format!(
            "walk={} head_groups={groups} rotary_dim={rotary_dim}",
            if vector { "vector" } else { "elementwise" }
        )
        .into(),
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
        rotary_dim as u32,
        u32::from(vector),
    );
    // SAFETY: q, k, cos and sin cover the shape; q and k overlap each other and the tables
    // nowhere; `vector` is set only when every row is 16-byte aligned for the kernel's
    // accesses (checked above); the kernels wait on the grid dependency before their first
    // access.
    unsafe {
        match pairing {
            Pairing::Neox => {
                launched.launch_after_previous(&gpu.kernel::<RopeNeox<T>>()?, stream, args)
            }
            Pairing::Gptj => {
                launched.launch_after_previous(&gpu.kernel::<RopeGptj<T>>()?, stream, args)
            }
        }
    }
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
        let full = |head_dim| RopeShape::new(1, 1, 0, head_dim);
        let aligned = [buf(0x1000), buf(0x2000)];
        assert!(vector_ok::<Bf16>(Pairing::Neox, &full(128), &aligned));
        assert!(!vector_ok::<Bf16>(
            Pairing::Neox,
            &full(128),
            &[buf(0x1000), buf(0x2002)]
        ));
        assert!(
            !vector_ok::<Bf16>(Pairing::Neox, &full(72), &aligned),
            "36 is not a multiple of 8"
        );
        assert!(vector_ok::<Bf16>(Pairing::Gptj, &full(72), &aligned));
        assert!(vector_ok::<Bf16>(Pairing::Neox, &full(80), &aligned));
        // Partial rotary: the rotated span and every head's start must be whole chunks.
        let partial = |head_dim, rotary| full(head_dim).with_rotary_dim(rotary);
        assert!(vector_ok::<Bf16>(
            Pairing::Neox,
            &partial(128, 64),
            &aligned
        ));
        assert!(!vector_ok::<Bf16>(
            Pairing::Neox,
            &partial(128, 24),
            &aligned
        ));
        assert!(vector_ok::<Bf16>(
            Pairing::Gptj,
            &partial(128, 24),
            &aligned
        ));
        assert!(!vector_ok::<Bf16>(
            Pairing::Gptj,
            &partial(84, 16),
            &aligned
        ));
        assert_eq!(block::<Bf16>(Pairing::Neox, 64, 40, true), [4, 40, 1]);
    }

    #[test]
    fn head_groups_visit_every_head_once() {
        // The kernel's head walk (rope.cu `HeadWalk`, kHeadUnroll heads a step): thread row
        // `ty` of group `by` visits h0 = by * y + ty, then steps of kHeadUnroll * y * groups,
        // each step its heads h0 + u * y * groups.
        let unroll = cu_constant(include_str!("../../cuda/rope.cu"), "kHeadUnroll") as usize;
        for tokens in [1usize, 2, 5, 100, 4096] {
            for heads in [1usize, 2, 3, 40, 104, 640] {
                for (pairing, rotary) in [(Pairing::Neox, 64), (Pairing::Gptj, 128)] {
                    let b = block::<Bf16>(pairing, rotary, heads, true);
                    let (y, groups) = (b[1] as usize, head_groups(tokens, heads, b, 132) as usize);
                    let stride = y * groups;
                    let mut seen = vec![0u32; heads];
                    for first in 0..stride {
                        for h0 in (first..heads).step_by(unroll * stride) {
                            for u in 0..unroll {
                                if let Some(n) = seen.get_mut(h0 + u * stride) {
                                    *n += 1;
                                }
                            }
                        }
                    }
                    assert!(
                        seen.iter().all(|&n| n == 1),
                        "{tokens} tokens x {heads} heads, block {b:?}, {groups} groups"
                    );
                }
            }
        }
    }

    #[test]
    fn few_tokens_spread_their_heads_over_the_gpu() {
        // One token of 512 heads of 64 (NeoX bf16): blocks of 4 x 64 threads, 8 head groups,
        // one head a thread row.
        let b = block::<Bf16>(Pairing::Neox, 64, 512, true);
        assert_eq!(b, [4, 64, 1]);
        assert_eq!(head_groups(1, 512, b, 132), 8);
        // Many tokens keep one group: the tokens fill the GPU.
        assert_eq!(head_groups(4096, 512, b, 132), 1);
        assert_eq!(head_groups(16384, 40, [8, 20, 1], 132), 1);
        // In between, the budget: 100 tokens x 256 threads x 2 groups <= 132 x 512.
        assert_eq!(head_groups(100, 512, b, 132), 2);
        // A group never holds less than a thread row of heads.
        assert_eq!(head_groups(1, 40, [8, 20, 1], 132), 2);
    }
}
