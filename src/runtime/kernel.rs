//! [`Kernel`]: one entry point resolved on a [`Gpu`], with its route and limits; the
//! generated typed launchers are methods on it, and all of them end in [`Kernel::launch_raw`].

use super::driver::api::{function_attribute as F, CUfunction};
use super::driver::{check, check_with, driver, function_attribute, programmatic};
use super::launch::{self, KernelLimits, LaunchConfig, LaunchError, SmemPlan};
use super::launchers::{KernelInfo, KernelSpec, LaunchArgs};
use super::memory::{RawStream, StreamHandle};
use super::module::LoadedModule;
use super::route::Route;
use super::{Error, Gpu};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// What a [`Gpu`] keeps per resolved kernel.
pub(crate) struct KernelState {
    info: &'static KernelInfo,
    function: CUfunction,
    pub route: Route,
    max_threads_per_block: u32,
    static_smem_bytes: u32,
    max_dynamic_smem_bytes: AtomicU32,
    /// Serializes raising the dynamic shared memory limit, so it only ever grows.
    raise: Mutex<()>,
}

// SAFETY: a CUfunction is a driver handle, valid on any thread while its module is loaded
// (the module outlives it: both live in the same `Gpu`, modules dropped after kernels).
unsafe impl Send for KernelState {}
unsafe impl Sync for KernelState {}

impl KernelState {
    pub fn resolve(
        gpu: &Gpu,
        info: &'static KernelInfo,
        module: &LoadedModule,
    ) -> Result<KernelState, Error> {
        let function = module.function(info.symbol)?;
        let attr = |a| function_attribute(function, a);
        Ok(KernelState {
            info,
            function,
            route: gpu.route_for(info.name, module),
            max_threads_per_block: attr(F::MAX_THREADS_PER_BLOCK)?,
            static_smem_bytes: attr(F::SHARED_SIZE_BYTES)?,
            max_dynamic_smem_bytes: AtomicU32::new(attr(F::MAX_DYNAMIC_SHARED_SIZE_BYTES)?),
            raise: Mutex::new(()),
        })
    }
}

/// An entry point ready to launch: `K` is its generated marker type (`CopyVec16`).
pub struct Kernel<'g, K> {
    gpu: &'g Gpu,
    state: &'g KernelState,
    spec: PhantomData<fn() -> K>,
}

impl<K> Clone for Kernel<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Kernel<'_, K> {}

impl<'g, K: KernelSpec> Kernel<'g, K> {
    pub(crate) fn new(gpu: &'g Gpu, state: &'g KernelState) -> Self {
        Kernel {
            gpu,
            state,
            spec: PhantomData,
        }
    }

    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// Which artifact this kernel runs from; `Display` is its `STAMP` line.
    pub fn route(&self) -> &'g Route {
        &self.state.route
    }

    /// Whether this kernel may launch as a programmatic dependent here
    /// ([`Gpu::programmatic_route`]).
    pub fn programmatic_route(&self) -> bool {
        self.gpu.programmatic_route(self.route())
    }

    pub fn info(&self) -> &'static KernelInfo {
        self.state.info
    }

    /// The kernel's limits on this device, as launches are checked against them.
    pub fn limits(&self) -> KernelLimits {
        KernelLimits {
            max_threads_per_block: self.state.max_threads_per_block,
            static_smem_bytes: self.state.static_smem_bytes,
            max_dynamic_smem_bytes: self.state.max_dynamic_smem_bytes.load(Ordering::Acquire),
        }
    }

    /// The driver's function handle, for measurements against a bare `cuLaunchKernel`.
    pub fn raw_function(&self) -> CUfunction {
        self.state.function
    }

    /// Validates `config` against the device and kernel limits, then launches on `stream`
    /// with `args`, the kernel's arguments in declaration order.
    ///
    /// # Safety
    /// Every pointer among `args` must address device memory of this context that is valid
    /// for all accesses the kernel makes with these arguments; the safe wrappers in
    /// `cubins::ops` check lengths, alignment and aliasing before calling this.
    #[inline]
    pub unsafe fn launch(
        &self,
        stream: &impl StreamHandle,
        config: &LaunchConfig,
        mut args: K::Args,
    ) -> Result<(), Error> {
        let mut pointers = args.pointers();
        self.launch_raw(stream.raw_stream(), config, pointers.as_mut())
    }

    /// Checks `config`, raises the dynamic shared memory limit if the launch needs more than
    /// the function allows now, and launches with `params` (one pointer per kernel argument).
    ///
    /// # Safety
    /// `params[i]` must point to a value of the kernel's i-th parameter type, and every device
    /// pointer among them must be valid for the accesses the kernel makes. A programmatic
    /// dependent launch (`config.programmatic_dependent`) also needs a kernel that waits on
    /// the grid dependency (`griddepcontrol.wait`) before its first memory access.
    pub unsafe fn launch_raw(
        &self,
        stream: RawStream,
        config: &LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), Error> {
        let info = self.state.info;
        if params.len() != info.params.len() {
            return Err(LaunchError::ArgumentCount {
                kernel: info.name,
                expected: info.params.len(),
                actual: params.len(),
            }
            .into());
        }
        let plan = launch::check(config, &self.gpu.device().limits, &self.limits())?;
        self.gpu.bind()?;
        if let SmemPlan::Raise(bytes) = plan {
            self.raise_dynamic_smem(bytes)?;
        }
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        let context = || {
            format!(
                "launching {} (grid {:?}, block {:?}, dynamic smem {}{})",
                info.name,
                config.grid,
                config.block,
                config.dynamic_smem_bytes,
                if config.programmatic_dependent {
                    ", programmatic dependent"
                } else {
                    ""
                }
            )
        };
        if config.programmatic_dependent {
            return check_with(
                "cuLaunchKernelEx",
                programmatic::launch(
                    self.state.function,
                    config.grid,
                    config.block,
                    config.dynamic_smem_bytes,
                    stream,
                    params.as_mut_ptr(),
                ),
                context,
            );
        }
        check_with(
            "cuLaunchKernel",
            (driver()?.cuLaunchKernel)(
                self.state.function,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                config.dynamic_smem_bytes,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            ),
            context,
        )
    }

    /// Resident blocks per SM at `threads` per block and `dynamic_smem_bytes`, from the
    /// driver's occupancy calculator. The function's dynamic shared memory limit is raised
    /// first when the launch will need it: the calculator counts a block that needs more than
    /// the function's current limit as not resident at all, so asking before the raise would
    /// plan one geometry and launch another.
    pub fn max_active_blocks_per_sm(
        &self,
        threads: u32,
        dynamic_smem_bytes: u32,
    ) -> Result<u32, Error> {
        let total = u64::from(self.state.static_smem_bytes) + u64::from(dynamic_smem_bytes);
        let optin = self.gpu.device().limits.max_smem_per_block_optin;
        if total > u64::from(optin) {
            return Err(LaunchError::SharedMemory {
                static_bytes: self.state.static_smem_bytes,
                dynamic_bytes: dynamic_smem_bytes,
                limit: optin,
            }
            .into());
        }
        self.gpu.bind()?;
        self.raise_dynamic_smem(dynamic_smem_bytes)?;
        let mut blocks = 0i32;
        // SAFETY: a live function handle and a plain out-pointer.
        check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            (driver()?.cuOccupancyMaxActiveBlocksPerMultiprocessor)(
                &mut blocks,
                self.state.function,
                threads as i32,
                dynamic_smem_bytes as usize,
            )
        })?;
        Ok(blocks.max(0) as u32)
    }

    fn raise_dynamic_smem(&self, bytes: u32) -> Result<(), Error> {
        let _guard = self.state.raise.lock().unwrap_or_else(|p| p.into_inner());
        if bytes <= self.state.max_dynamic_smem_bytes.load(Ordering::Acquire) {
            return Ok(());
        }
        let attribute = F::MAX_DYNAMIC_SHARED_SIZE_BYTES;
        // SAFETY: a live function handle; the value was checked against the device's opt-in maximum.
        check("cuFuncSetAttribute", unsafe {
            (driver()?.cuFuncSetAttribute)(self.state.function, attribute, bytes as i32)
        })?;
        self.state
            .max_dynamic_smem_bytes
            .store(bytes, Ordering::Release);
        Ok(())
    }
}
