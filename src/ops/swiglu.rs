//! SwiGLU forward `out = silu(gate) * up` (`cuda/swiglu.cu`), from two tensors of the same
//! shape, or from one interleaved `[rows, 2 * cols]` tensor whose rows hold the gate half
//! (columns `0..cols`) then the up half (`cols..2 * cols`). bf16, f16 or f32 storage, any
//! length and alignment.
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::swiglu::{swiglu, swiglu_interleaved};
//! use cubins::ops::Threads;
//! use cubins::runtime::{Bf16, Gpu};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let (rows, cols) = (16, 14336);
//! let gate = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! let up = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! let gate_up = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * 2 * cols])?;
//! let mut out = DeviceBuffer::from_slice(&vec![Bf16::default(); rows * cols])?;
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! swiglu(&gpu, &stream, &gate, &up, &mut out)?;
//! let launched = swiglu_interleaved(&gpu, &stream, &gate_up, &mut out, rows, cols, Threads::Auto)?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?);
//! # Ok(()) }
//! ```

use super::rows::{check_disjoint, plan_rows, shape_error, tensor_bytes, RowKernel};
use super::{Launched, Threads};
use crate::kernels::{SwigluFwd, SwigluFwdInterleaved};
use crate::runtime::launchers::Dtype;
use crate::runtime::{DeviceRead, DeviceWrite, Error, Gpu, KernelSpec, LaunchConfig, StreamHandle};

/// The interleaved kernel walks rows with 4 chunks of each half in flight per thread.
pub const INTERLEAVED: RowKernel = RowKernel {
    name: "swiglu_fwd_interleaved",
    resident_chunks: 4,
    max_threads: 1024,
};

/// The flat kernel: 256 threads, resident 8 blocks per SM (its contract).
const FLAT_THREADS: u32 = 256;
const FLAT_BLOCKS_PER_SM: u32 = 8;

/// `out[i] = silu(gate[i]) * up[i]` for the `out.len()` elements of out (gate and up hold at
/// least as many).
pub fn swiglu<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    gate: &impl DeviceRead<T, S>,
    up: &impl DeviceRead<T, S>,
    out: &mut impl DeviceWrite<T, S>,
) -> Result<Launched, Error> {
    let name = SwigluFwd::<T>::info().name;
    let (gate, up, out) = (gate.read(stream), up.read(stream), out.write(stream));
    let (gate, up, out) = (gate.view, up.view, out.view);
    let n = out.len;
    if n == 0 {
        return Err(shape_error(name, "at least one element"));
    }
    let (gb, ub, ob) = (gate.arg("gate"), up.arg("up"), out.arg("out"));
    gb.at_least(tensor_bytes::<T>(1, n))?;
    ub.at_least(tensor_bytes::<T>(1, n))?;
    check_disjoint(&[ob], &[gb, ub])?;
    // One wave of resident blocks (6 per SM where the cubin holds no more), fewer when there
    // is less work; the kernel loops.
    let chunks = (n as u64).div_ceil(u64::from(super::rows::chunk_elems::<T>()));
    let per_sm = super::rows::wave_blocks_per_sm(gpu, name, FLAT_THREADS, FLAT_BLOCKS_PER_SM);
    let wave = u64::from(gpu.device().sm_count.max(1) * per_sm);
    let blocks = chunks.div_ceil(u64::from(FLAT_THREADS)).clamp(1, wave) as u32;
    let launched = Launched {
        kernel: name,
        config: LaunchConfig::linear(blocks, FLAT_THREADS),
        choice: format!("flat n={n}").into(),
    };
    // SAFETY: gate and up hold at least n elements, out exactly n; out overlaps neither.
    unsafe {
        gpu.kernel::<SwigluFwd<T>>()?.launch(
            stream,
            &launched.config,
            (gate.ptr, up.ptr, out.ptr, n as u64),
        )?
    };
    Ok(launched)
}

/// `out[r][c] = silu(gate_up[r][c]) * gate_up[r][cols + c]`: gate_up holds `rows * 2 * cols`
/// elements, out `rows * cols`.
pub fn swiglu_interleaved<T: Dtype, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    gate_up: &impl DeviceRead<T, S>,
    out: &mut impl DeviceWrite<T, S>,
    rows: usize,
    cols: usize,
    threads: Threads,
) -> Result<Launched, Error> {
    let entry = SwigluFwdInterleaved::<T>::info().name;
    let (r, c, launched) = plan_rows::<T>(&INTERLEAVED, entry, rows, cols, threads)?;
    let (gate_up, out) = (gate_up.read(stream), out.write(stream));
    let (gate_up, out) = (gate_up.view, out.view);
    let (gub, ob) = (gate_up.arg("gate_up"), out.arg("out"));
    gub.at_least(2 * tensor_bytes::<T>(rows, cols))?;
    ob.at_least(tensor_bytes::<T>(rows, cols))?;
    check_disjoint(&[ob], &[gub])?;
    // SAFETY: gate_up covers rows * 2 * cols elements, out rows * cols; disjoint.
    unsafe {
        gpu.kernel::<SwigluFwdInterleaved<T>>()?.launch(
            stream,
            &launched.config,
            (gate_up.ptr, out.ptr, r, c),
        )?
    };
    Ok(launched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::rows::cu_constant;

    #[test]
    fn kernel_constants_match_cuda_swiglu_cu() {
        let cu = include_str!("../../cuda/swiglu.cu");
        assert_eq!(INTERLEAVED.resident_chunks, cu_constant(cu, "kUnits"));
        assert_eq!(INTERLEAVED.max_threads, cu_constant(cu, "kRowMaxThreads"));
        assert_eq!(FLAT_THREADS, cu_constant(cu, "kThreads"));
    }
}
