//! Device copies as workloads: the crate's own copy kernel (`copy_vec16`, also the kernel the
//! harness self-test times twice), another build's, and the driver's device-to-device copy
//! (`cuMemcpyDtoDAsync`). The faster of this build's kernel and the driver's copy, measured in
//! the same run, is the bandwidth ceiling every memory-bound kernel is judged against.

use super::baseline::BaselineKernel;
use super::buffers::{download, poisoned, upload};
use super::driver::Result;
use super::session::route_of;
use super::timer::{Identity, Workload};
use crate::harness::host::random;
use crate::harness::host::reading::Work;
use crate::harness::host::rotation::{Residency, RotationPlan};
use crate::harness::host::stamp::{Geometry, Route};
use cubins::ops::copy::{copy, default_config, CopyKernel, VECTOR_BYTES};
use cubins::runtime::{Gpu, LaunchConfig};
use cust::memory::{DeviceBuffer, DevicePointer};
use cust::stream::Stream;
use std::os::raw::c_void;

enum Launcher<'g> {
    /// This build's kernel through the runtime's checked launcher.
    Embedded(&'g Gpu),
    /// Another build's cubin of the same kernel.
    Baseline(BaselineKernel),
    /// The driver's device-to-device copy.
    Driver,
}

pub struct CopyWorkload<'g> {
    launcher: Launcher<'g>,
    identity: Identity,
    plan: RotationPlan,
    config: LaunchConfig,
    n_vec: u64,
    expected: Vec<u32>,
    src: Vec<DeviceBuffer<u32>>,
    dst: Vec<DeviceBuffer<u32>>,
}

/// The driver call the driver copy makes.
pub const DRIVER_COPY: &str = "cuMemcpyDtoDAsync";

/// `64 MiB`, `1 GiB`: sizes as the tables show them.
pub fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes % (1 << 30) == 0 {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} B")
    }
}

impl<'g> CopyWorkload<'g> {
    /// Copies of `bytes` (a multiple of 16) through this build's `copy_vec16`.
    pub fn new(
        gpu: &'g Gpu,
        bytes: u64,
        l2_bytes: u64,
        residency: Residency,
        seed: u64,
    ) -> Result<CopyWorkload<'g>> {
        let route = gpu
            .route(CopyKernel::Vec16.name())
            .map_err(|e| e.to_string())?;
        let id = |config: &LaunchConfig| Identity {
            kernel: CopyKernel::Vec16.name().into(),
            route: route_of(&route),
            toolkit: route.toolkit.into(),
            geometry: Some(geometry(config)),
            dtype: "u8x16".into(),
            shape: size_label(bytes),
            name: format!("{} (this build, {})", CopyKernel::Vec16.name(), route.arch),
        };
        Self::build(
            gpu,
            Launcher::Embedded(gpu),
            bytes,
            l2_bytes,
            residency,
            seed,
            id,
        )
    }

    /// The same copies through another build's `copy_vec16` cubin (loaded by the caller).
    pub fn baseline(
        gpu: &'g Gpu,
        kernel: BaselineKernel,
        bytes: u64,
        l2_bytes: u64,
        residency: Residency,
        seed: u64,
    ) -> Result<CopyWorkload<'g>> {
        let (route, toolkit) = (kernel.route.clone(), kernel.toolkit.clone());
        let id = |config: &LaunchConfig| Identity {
            kernel: CopyKernel::Vec16.name().into(),
            route: route.clone(),
            toolkit: toolkit.clone(),
            geometry: Some(geometry(config)),
            dtype: "u8x16".into(),
            shape: size_label(bytes),
            name: format!("{} (baseline build, {route})", CopyKernel::Vec16.name()),
        };
        Self::build(
            gpu,
            Launcher::Baseline(kernel),
            bytes,
            l2_bytes,
            residency,
            seed,
            id,
        )
    }

    /// The same copies through the driver (`cuMemcpyDtoDAsync`).
    pub fn driver(
        gpu: &'g Gpu,
        bytes: u64,
        l2_bytes: u64,
        residency: Residency,
        seed: u64,
    ) -> Result<CopyWorkload<'g>> {
        let version = gpu.device().driver_version;
        let id = |_: &LaunchConfig| Identity {
            kernel: DRIVER_COPY.into(),
            route: Route::Library {
                name: "CUDA driver".into(),
                version: format!("{}.{}", version / 1000, (version % 1000) / 10),
                path: "libcuda".into(),
            },
            toolkit: "-".into(),
            geometry: None,
            dtype: "u8x16".into(),
            shape: size_label(bytes),
            name: format!("driver device copy ({DRIVER_COPY})"),
        };
        Self::build(gpu, Launcher::Driver, bytes, l2_bytes, residency, seed, id)
    }

    fn build(
        gpu: &'g Gpu,
        launcher: Launcher<'g>,
        bytes: u64,
        l2_bytes: u64,
        residency: Residency,
        seed: u64,
        identity: impl FnOnce(&LaunchConfig) -> Identity,
    ) -> Result<CopyWorkload<'g>> {
        if bytes == 0 || bytes % u64::from(VECTOR_BYTES) != 0 {
            return Err(format!(
                "copy size {bytes} is not a positive multiple of {VECTOR_BYTES} bytes"
            ));
        }
        let n_vec = bytes / u64::from(VECTOR_BYTES);
        let plan = RotationPlan::new(2 * bytes, l2_bytes, residency);
        let config = default_config(gpu, CopyKernel::Vec16, n_vec);
        let expected = random::words((bytes / 4) as usize, seed);
        let mut src = Vec::with_capacity(plan.sets);
        let mut dst = Vec::with_capacity(plan.sets);
        for _ in 0..plan.sets {
            src.push(upload(&expected)?);
            dst.push(poisoned::<u32>(expected.len())?);
        }
        Ok(CopyWorkload {
            launcher,
            identity: identity(&config),
            plan,
            config,
            n_vec,
            expected,
            src,
            dst,
        })
    }
}

fn geometry(c: &LaunchConfig) -> Geometry {
    Geometry {
        grid: c.grid,
        block: c.block,
        dynamic_smem_bytes: c.dynamic_smem_bytes,
    }
}

impl Workload for CopyWorkload<'_> {
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn work(&self) -> Option<Work> {
        Some(Work::Bytes(self.plan.bytes_per_launch))
    }

    fn rotation(&self) -> RotationPlan {
        self.plan
    }

    fn enqueue(&mut self, stream: &Stream, set: usize) -> Result<()> {
        let (src, dst) = (&self.src[set], &mut self.dst[set]);
        match &self.launcher {
            Launcher::Embedded(gpu) => copy(gpu, stream, CopyKernel::Vec16, src, dst)
                .map(drop)
                .map_err(|e| e.to_string()),
            Launcher::Baseline(k) => {
                let mut s: DevicePointer<u32> = src.as_device_ptr();
                let mut d: DevicePointer<u32> = dst.as_device_ptr();
                let mut n = self.n_vec;
                let mut params = [
                    &mut s as *mut _ as *mut c_void,
                    &mut d as *mut _ as *mut c_void,
                    &mut n as *mut _ as *mut c_void,
                ];
                // SAFETY: `build` sized both buffers to n_vec 16-byte vectors (cust allocations
                // are 256-byte aligned) and they are distinct allocations; the parameter list
                // is copy_vec16's (src, dst, n_vec).
                unsafe { k.launch(stream, &self.config, &mut params) }
            }
            Launcher::Driver => {
                let bytes = self.n_vec as usize * VECTOR_BYTES as usize;
                // SAFETY: both buffers hold `bytes` and are distinct allocations of this context.
                let r = unsafe {
                    cust::sys::cuMemcpyDtoDAsync_v2(
                        dst.as_device_ptr().as_raw(),
                        src.as_device_ptr().as_raw(),
                        bytes,
                        stream.as_inner(),
                    )
                };
                match r {
                    cust::sys::cudaError_enum::CUDA_SUCCESS => Ok(()),
                    e => Err(format!("{DRIVER_COPY}: {e:?}")),
                }
            }
        }
    }

    fn verify(&mut self, stream: &Stream) -> Result<()> {
        stream
            .synchronize()
            .map_err(|e| format!("cuStreamSynchronize: {e:?}"))?;
        for (set, dst) in self.dst.iter().enumerate() {
            let got = download(dst)?;
            if let Some(i) = got.iter().zip(&self.expected).position(|(g, e)| g != e) {
                return Err(format!(
                    "set {set}: word {i} is {:#010x}, expected {:#010x}{}",
                    got[i],
                    self.expected[i],
                    if got[i] == u32::from_ne_bytes([0xFF; 4]) {
                        " (poison left: never written)"
                    } else {
                        ""
                    }
                ));
            }
        }
        Ok(())
    }
}
