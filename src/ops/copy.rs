//! Device-to-device copies through the two starter kernels: `copy_vec16` (one 16-byte vector
//! a thread, a block per 256 vectors: the driver's copy speed) and `copy_cp_async` (staged
//! through shared memory with cp.async). The copy is the bandwidth ceiling other
//! memory-bound kernels are judged against.
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::copy::{copy, CopyKernel};
//! use cubins::runtime::Gpu;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let src = DeviceBuffer::from_slice(&vec![7u32; 1 << 20])?;
//! let mut dst = DeviceBuffer::from_slice(&vec![0u32; 1 << 20])?;
//! gpu.synchronize()?; // the uploads ran on the legacy stream; `stream` does not wait for it
//! let launched = copy(&gpu, &stream, CopyKernel::Vec16, &src, &mut dst)?;
//! stream.synchronize()?;
//! println!("{}", launched.stamp(&gpu)?); // STAMP kernel=copy_vec16 ... grid=1024x1x1 block=256x1x1
//! # Ok(()) }
//! ```

use super::Launched;
use crate::kernels::{CopyCpAsync, CopyVec16};
use crate::runtime::{
    DevicePtr, DeviceRead, DeviceView, DeviceWrite, Error, Gpu, LaunchConfig, LaunchError,
    StreamHandle, U8x16,
};

/// Which copy kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyKernel {
    Vec16,
    CpAsync,
}

impl CopyKernel {
    pub const ALL: [CopyKernel; 2] = [CopyKernel::Vec16, CopyKernel::CpAsync];

    /// Entry-point name.
    pub fn name(self) -> &'static str {
        match self {
            CopyKernel::Vec16 => "copy_vec16",
            CopyKernel::CpAsync => "copy_cp_async",
        }
    }

    /// Threads per block the kernel is written for (`copy_cp_async` stages one 16-byte slot
    /// per thread of a 256-thread tile and works only with exactly that block).
    pub const BLOCK: u32 = 256;
}

/// `copy_cp_async`'s resident blocks per SM (its contract) where an SM holds 2048 threads.
const CP_ASYNC_BLOCKS_PER_SM: u32 = 6;

/// The largest grid the driver takes in x.
const MAX_GRID_X: u64 = (1 << 31) - 1;

/// Bytes each thread moves per access.
pub const VECTOR_BYTES: u32 = 16;

/// The grid `copy` uses for `n_vec` 16-byte vectors. `copy_vec16`: a block per 256 vectors
/// (one a thread), which on the H200 moves 1.006-1.011x the driver's device copy where a
/// one-wave striding grid moved 0.93x (bench/results/2026-12-02-h200/run60). `copy_cp_async`:
/// one wave of its contract's blocks per SM, no more than the route's cubin holds (fewer
/// where an SM holds 1536 threads), fewer when there is less work. Both loop over what the
/// grid does not cover.
pub fn default_config(gpu: &Gpu, kernel: CopyKernel, n_vec: u64) -> LaunchConfig {
    let needed = n_vec.div_ceil(u64::from(CopyKernel::BLOCK)).max(1);
    let blocks = match kernel {
        CopyKernel::Vec16 => needed.min(MAX_GRID_X),
        CopyKernel::CpAsync => {
            let per_sm = crate::ops::rows::wave_blocks_per_sm(
                gpu,
                kernel.name(),
                CopyKernel::BLOCK,
                CP_ASYNC_BLOCKS_PER_SM,
            );
            needed.min(u64::from(gpu.device().sm_count.max(1) * per_sm))
        }
    };
    LaunchConfig::linear(blocks as u32, CopyKernel::BLOCK)
}

/// Copies `src` into `dst` on `stream` with the default geometry. Both must be 16-byte
/// aligned, of equal length, a multiple of 16 bytes, and disjoint. Empty buffers launch
/// nothing (the record's grid is empty).
pub fn copy<T, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    kernel: CopyKernel,
    src: &impl DeviceRead<T, S>,
    dst: &mut impl DeviceWrite<T, S>,
) -> Result<Launched, Error> {
    let (src, dst) = (src.read(stream), dst.write(stream));
    let (src, dst) = (src.view, dst.view);
    let n_vec = check_buffers(src, dst)?;
    if n_vec == 0 {
        return Ok(Launched {
            kernel: kernel.name(),
            config: LaunchConfig::linear(0, CopyKernel::BLOCK),
            choice: "nothing to copy".into(),
        });
    }
    launch(
        gpu,
        stream,
        kernel,
        src,
        dst,
        n_vec,
        &default_config(gpu, kernel, n_vec),
    )
}

/// [`copy`] with an explicit geometry (for sweeps); a geometry the kernel cannot run is an `Err`.
pub fn copy_with<T, S: StreamHandle>(
    gpu: &Gpu,
    stream: &S,
    kernel: CopyKernel,
    src: &impl DeviceRead<T, S>,
    dst: &mut impl DeviceWrite<T, S>,
    config: &LaunchConfig,
) -> Result<Launched, Error> {
    let (src, dst) = (src.read(stream), dst.write(stream));
    let (src, dst) = (src.view, dst.view);
    let n_vec = check_buffers(src, dst)?;
    if !config.is_linear() {
        return Err(LaunchError::Geometry {
            kernel: kernel.name(),
            requirement: "a one-dimensional grid and block",
            config: *config,
        }
        .into());
    }
    if kernel == CopyKernel::CpAsync && config.block[0] != CopyKernel::BLOCK {
        return Err(LaunchError::Geometry {
            kernel: kernel.name(),
            requirement: "blocks of exactly 256 threads",
            config: *config,
        }
        .into());
    }
    launch(gpu, stream, kernel, src, dst, n_vec, config)
}

/// Checks what the kernels need of their buffers; returns the number of 16-byte vectors.
fn check_buffers<T>(src: DeviceView<T>, dst: DeviceView<T>) -> Result<u64, LaunchError> {
    let (s, d) = (src.arg("src"), dst.arg("dst"));
    s.same_length(&d)?;
    for b in [&s, &d] {
        b.multiple_of(VECTOR_BYTES)?;
        b.aligned(VECTOR_BYTES)?;
    }
    s.disjoint(&d)?;
    Ok(s.bytes / u64::from(VECTOR_BYTES))
}

fn launch<T>(
    gpu: &Gpu,
    stream: &impl StreamHandle,
    kernel: CopyKernel,
    src: DeviceView<T>,
    dst: DeviceView<T>,
    n_vec: u64,
    config: &LaunchConfig,
) -> Result<Launched, Error> {
    let s: DevicePtr<U8x16> = src.ptr.cast();
    let d: DevicePtr<U8x16> = dst.ptr.cast();
    // SAFETY: `check_buffers` proved both buffers hold `n_vec` aligned 16-byte vectors and do
    // not overlap; the kernels touch exactly indices 0..n_vec of each.
    unsafe {
        match kernel {
            CopyKernel::Vec16 => {
                gpu.kernel::<CopyVec16>()?
                    .launch(stream, config, (s, d, n_vec))?
            }
            CopyKernel::CpAsync => {
                gpu.kernel::<CopyCpAsync>()?
                    .launch(stream, config, (s, d, n_vec))?
            }
        }
    }
    Ok(Launched {
        kernel: kernel.name(),
        config: *config,
        choice: "grid-stride".into(),
    })
}
