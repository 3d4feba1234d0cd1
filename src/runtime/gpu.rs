//! [`Gpu`]: the driver initialized, one device's primary context held, and each kernel file's
//! module loaded lazily, once per `Gpu`, on the route selection picks.

use super::driver::api::{device_attribute as A, CUcontext, CUdevice};
use super::driver::{check, device_attribute, driver};
use super::kernel::{Kernel, KernelState};
use super::launch::DeviceLimits;
use super::launchers::KernelSpec;
use super::module::LoadedModule;
use super::preflight::check_driver;
use super::route::{self, ArtifactKind, DeviceId, Route, RoutePolicy, Selected};
use super::Error;
use crate::registry::{self, KernelFile};
use crate::Library;
use std::ffi::c_char;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The device a [`Gpu`] runs on.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub ordinal: u32,
    pub name: Arc<str>,
    /// Compute capability times ten (90 for 9.0).
    pub cc: u32,
    pub sm_count: u32,
    pub limits: DeviceLimits,
    /// `cuDriverGetVersion`: 13000 for CUDA 13.0.
    pub driver_version: u32,
}

impl DeviceInfo {
    pub fn id(&self) -> DeviceId {
        DeviceId {
            name: self.name.clone(),
            cc: self.cc,
        }
    }
}

/// A device, its primary context and the kernels loaded into it: cubins' own and those of
/// any crate built through `cubins-build` (each a [`Library`]). `Send + Sync`: share it
/// across threads by reference or `Arc`; every call makes the context current first.
///
/// The primary context is the one the CUDA runtime (and so cuBLAS) uses, so buffers and
/// streams interoperate with libraries loaded next to this crate.
///
/// A `Gpu` is one device ordinal: open one per device (`Gpu::with_policy(1, ..)` for the
/// second). Each selects routes for its own device's compute capability and loads its own
/// modules, so devices of different arches each run their own cubins.
pub struct Gpu {
    // Dropped in declaration order: each library's kernels and modules, then the context
    // they live in. cubins' own library is held apart, so its launches take no lock; the
    // others are boxed, so a state's address survives the vector growing (handed-out
    // references point into the boxes).
    own: LibraryState,
    #[allow(clippy::vec_box)]
    libraries: Mutex<Vec<Box<LibraryState>>>,
    load_lock: Mutex<()>,
    policy: RoutePolicy,
    device: DeviceInfo,
    context: PrimaryContext,
}

/// The device's primary context, retained while the `Gpu` lives.
struct PrimaryContext {
    raw: CUcontext,
    device: CUdevice,
}

// SAFETY: a context handle is usable from any thread (made current before each use).
unsafe impl Send for PrimaryContext {}
unsafe impl Sync for PrimaryContext {}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            // SAFETY: retained once in `Gpu::with_policy`, released once here.
            unsafe { (d.cuDevicePrimaryCtxRelease)(self.device) };
        }
    }
}

/// What a [`Gpu`] holds of one library: each kernel file's module and each kernel, loaded
/// on first use.
struct LibraryState {
    library: &'static Library,
    // Kernels before modules: a function handle must not outlive its module.
    kernels: Box<[OnceLock<KernelState>]>,
    modules: Box<[OnceLock<LoadedModule>]>,
}

impl LibraryState {
    fn new(library: &'static Library) -> LibraryState {
        let files = library.registry.files.len();
        LibraryState {
            library,
            kernels: (0..library.kernels.len())
                .map(|_| OnceLock::new())
                .collect(),
            modules: (0..files).map(|_| OnceLock::new()).collect(),
        }
    }

    fn file_index(&self, file: &str) -> Result<usize, Error> {
        let files = self.library.registry.kernel_files()?;
        files.iter().position(|f| f.name == file).ok_or_else(|| {
            Error::Registry(registry::RegistryError::UnknownKernelFile {
                name: file.to_string(),
                available: files.iter().map(|f| f.name).collect(),
            })
        })
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("device", &self.device)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// Device 0, with the route policy `CUBINS_FORCE_ROUTE` asks for (automatic when unset).
    pub fn new() -> Result<Gpu, Error> {
        Gpu::with_policy(0, RoutePolicy::from_env()?)
    }

    /// Device `ordinal` with an explicit route policy (`CUBINS_FORCE_ROUTE` is not read).
    pub fn with_policy(ordinal: u32, policy: RoutePolicy) -> Result<Gpu, Error> {
        let d = driver()?;
        // SAFETY: plain driver calls writing into locals that outlive them.
        check("cuInit", unsafe { (d.cuInit)(0) })?;
        let mut driver_version = 0;
        check("cuDriverGetVersion", unsafe {
            (d.cuDriverGetVersion)(&mut driver_version)
        })?;
        let mut count = 0;
        check("cuDeviceGetCount", unsafe {
            (d.cuDeviceGetCount)(&mut count)
        })?;
        check_ordinal(ordinal, count)?;
        let mut dev: CUdevice = 0;
        check("cuDeviceGet", unsafe {
            (d.cuDeviceGet)(&mut dev, ordinal as i32)
        })?;
        let mut name = [0 as c_char; 256];
        check("cuDeviceGetName", unsafe {
            (d.cuDeviceGetName)(name.as_mut_ptr(), name.len() as i32, dev)
        })?;
        // SAFETY: the driver wrote a NUL-terminated string into `name` (zero-initialized, so terminated anyway).
        let name: Arc<str> = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into();
        let attr = |a| device_attribute(dev, a);
        let device = DeviceInfo {
            ordinal,
            name,
            cc: attr(A::COMPUTE_CAPABILITY_MAJOR)? * 10 + attr(A::COMPUTE_CAPABILITY_MINOR)?,
            sm_count: attr(A::MULTIPROCESSOR_COUNT)?,
            limits: DeviceLimits {
                max_threads_per_block: attr(A::MAX_THREADS_PER_BLOCK)?,
                max_block: [
                    attr(A::MAX_BLOCK_DIM_X)?,
                    attr(A::MAX_BLOCK_DIM_Y)?,
                    attr(A::MAX_BLOCK_DIM_Z)?,
                ],
                max_grid: [
                    attr(A::MAX_GRID_DIM_X)?,
                    attr(A::MAX_GRID_DIM_Y)?,
                    attr(A::MAX_GRID_DIM_Z)?,
                ],
                max_smem_per_block: attr(A::MAX_SHARED_MEMORY_PER_BLOCK)?,
                max_smem_per_block_optin: attr(A::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            },
            driver_version: driver_version.max(0) as u32,
        };
        let mut raw: CUcontext = std::ptr::null_mut();
        check("cuDevicePrimaryCtxRetain", unsafe {
            (d.cuDevicePrimaryCtxRetain)(&mut raw, dev)
        })?;
        let context = PrimaryContext { raw, device: dev };
        // Current on the creating thread, as a runtime's allocations and streams expect.
        // SAFETY: the context was just retained and lives as long as the Gpu.
        check("cuCtxSetCurrent", unsafe { (d.cuCtxSetCurrent)(raw) })?;
        Ok(Gpu {
            own: LibraryState::new(&crate::kernels::LIBRARY),
            libraries: Mutex::new(Vec::new()),
            load_lock: Mutex::new(()),
            policy,
            device,
            context,
        })
    }

    /// Checks, without loading anything, that every kernel file of `library` has a route on
    /// this device and that the driver runs it (version against the toolkit that built it);
    /// the first failure, naming versions and what to do. Module loads check the same, one
    /// file at a time; this says it at startup.
    pub fn preflight(&self, library: &'static Library) -> Result<(), Error> {
        for file in library.registry.kernel_files()? {
            self.select(file, self.policy)?;
        }
        Ok(())
    }

    /// The artifact of `file` that runs here under `policy`, once the driver is known to run it.
    fn select(&self, file: &'static KernelFile, policy: RoutePolicy) -> Result<Selected, Error> {
        let selected = route::select(file, self.device.cc, policy)?;
        check_driver(self.device.driver_version, file, &selected, self.device.cc)?;
        Ok(selected)
    }

    pub fn device(&self) -> &DeviceInfo {
        &self.device
    }

    /// Whether the driver launches programmatic dependents (`cuLaunchKernelEx`; a CUDA 12.3
    /// driver or later, which also captures them into graphs), which
    /// `LaunchConfig::programmatic_dependent` asks for.
    pub fn programmatic_launch(&self) -> bool {
        super::driver::programmatic::available()
    }

    /// Whether a kernel on `route` may launch as a programmatic dependent here: sm_90 code or
    /// later (where `griddepcontrol.wait` exists) on a driver that launches them. The kernel
    /// itself must wait on the grid dependency before its first memory access.
    pub fn programmatic_route(&self, route: &Route) -> bool {
        route.code_cc >= 90 && self.programmatic_launch()
    }

    pub fn policy(&self) -> RoutePolicy {
        self.policy
    }

    /// The driver's handle of the primary context (`CUcontext`), for runtimes that wrap one.
    pub fn raw_context(&self) -> *mut std::ffi::c_void {
        self.context.raw
    }

    /// Makes this device's context current on the calling thread (`Gpu::new` does on its
    /// own thread; needed before `cust` allocations or streams on another thread).
    pub fn bind(&self) -> Result<(), Error> {
        let d = driver()?;
        let mut current: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle into a local.
        check("cuCtxGetCurrent", unsafe {
            (d.cuCtxGetCurrent)(&mut current)
        })?;
        if current != self.context.raw {
            // SAFETY: the context is retained by `self` and outlives this call.
            check("cuCtxSetCurrent", unsafe {
                (d.cuCtxSetCurrent)(self.context.raw)
            })?;
        }
        Ok(())
    }

    /// A new non-blocking stream on this device: it does not wait for the legacy default
    /// stream, on which `cust`'s synchronous copies (`copy_from`, `copy_to`, `from_slice`)
    /// run, nor does that stream wait for it. Synchronize this stream after launching and
    /// before such a copy reads the results (and the context before launching on data such
    /// a copy just wrote, if it may still be in flight).
    #[cfg(feature = "cust")]
    pub fn stream(&self) -> Result<cust::stream::Stream, Error> {
        self.bind()?;
        cust::stream::Stream::new(cust::stream::StreamFlags::NON_BLOCKING, None)
            .map_err(|e| super::driver::from_cust("cuStreamCreate", e))
    }

    /// This device's primary context as `cudarc` holds it (the same context as the `Gpu`'s:
    /// its streams and buffers are the ops' to use). Its `default_stream()` is the legacy
    /// stream; `new_stream()` makes a stream that does not synchronize with it.
    #[cfg(feature = "cudarc")]
    pub fn cudarc_context(&self) -> Result<std::sync::Arc<cudarc::driver::CudaContext>, Error> {
        cudarc::driver::CudaContext::new(self.device.ordinal as usize)
            .map_err(|e| super::driver::from_cudarc("cuDevicePrimaryCtxRetain", e))
    }

    /// Waits for all work on this device's context.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.bind()?;
        // SAFETY: no arguments.
        check("cuCtxSynchronize", unsafe {
            (driver()?.cuCtxSynchronize)()
        })
    }

    /// The kernel `K` (of any library), its module loaded on first use.
    pub fn kernel<K: KernelSpec>(&self) -> Result<Kernel<'_, K>, Error> {
        Ok(Kernel::new(
            self,
            self.kernel_state(self.library(K::LIBRARY), K::INDEX)?,
        ))
    }

    /// The route of cubins' own kernel `name` (one with a typed launcher), loading its
    /// module if needed.
    pub fn route(&self, name: &str) -> Result<Route, Error> {
        self.route_in(&crate::kernels::LIBRARY, name)
    }

    /// The route of kernel `name` of `library`, loading its module if needed.
    pub fn route_in(&self, library: &'static Library, name: &str) -> Result<Route, Error> {
        let index = library
            .kernels
            .iter()
            .position(|k| k.name == name)
            .ok_or_else(|| Error::UnknownKernel {
                name: name.to_string(),
                available: library.kernels.iter().map(|k| k.name).collect(),
            })?;
        Ok(self
            .kernel_state(self.library(library), index)?
            .route
            .clone())
    }

    /// Blocks of `threads` (with `dynamic_smem_bytes`) an SM holds of kernel `name` on its
    /// route, by the build's offline occupancy of that cubin (the launch shapes kernels.toml
    /// declares); `None` on a PTX route or a shape the build did not model. A plan that sizes
    /// a wave needs no driver call for it.
    pub fn modelled_blocks_per_sm(
        &self,
        name: &str,
        threads: u32,
        dynamic_smem_bytes: u32,
    ) -> Result<Option<u32>, Error> {
        let route = self.route(name)?;
        if route.kind != ArtifactKind::Cubin {
            return Ok(None);
        }
        let file = crate::kernels::LIBRARY.registry.kernel_file(route.file)?;
        Ok(file
            .cubin(route.arch)?
            .resources(name)
            .and_then(|r| {
                r.occupancy
                    .iter()
                    .find(|&&(t, smem, _)| t == threads && smem == dynamic_smem_bytes)
            })
            .map(|&(_, _, blocks)| blocks))
    }

    /// Wall time the module of cubins' kernel file `file` took to load (JIT included),
    /// loading it if needed.
    pub fn module_load_time(&self, file: &str) -> Result<Duration, Error> {
        let own = &self.own;
        let index = own.file_index(file)?;
        if let Some(m) = own.modules[index].get() {
            return Ok(m.load_time);
        }
        let _guard = self.lock();
        Ok(self.module_locked(own, index)?.load_time)
    }

    /// Times loading one artifact of kernel file `file` into a context created for the purpose
    /// (so nothing is cached in it), resolving every entry point with a typed launcher, which
    /// completes lazy loading. The context is destroyed afterwards and this `Gpu`'s context
    /// made current again. A measurement aid: `kind` picks cubin or PTX regardless of policy;
    /// PTX loads are counted as fallbacks like any other.
    pub fn time_fresh_load(
        &self,
        file: &str,
        kind: ArtifactKind,
    ) -> Result<(Selected, Duration), Error> {
        let own = self.own.library;
        let kernel_file: &'static KernelFile =
            &own.registry.kernel_files()?[self.own.file_index(file)?];
        let policy = match kind {
            ArtifactKind::Cubin => RoutePolicy::ForceCubin,
            ArtifactKind::PtxJit => RoutePolicy::ForcePtx,
        };
        let selected = self.select(kernel_file, policy)?;
        let d = driver()?;
        let mut fresh: CUcontext = std::ptr::null_mut();
        // SAFETY: plain driver calls on locals; the context created here is destroyed below.
        check("cuCtxCreate_v2", unsafe {
            (d.cuCtxCreate)(&mut fresh, 0, self.context.device)
        })?;
        let timed = (|| -> Result<Duration, Error> {
            let start = Instant::now();
            let module = LoadedModule::load(kernel_file, selected)?;
            for k in own.kernels.iter().filter(|k| k.file == file) {
                module.function(k.symbol)?;
            }
            let elapsed = start.elapsed();
            drop(module);
            Ok(elapsed)
        })();
        // SAFETY: `fresh` was created above and nothing else refers to it.
        let destroyed = check("cuCtxDestroy_v2", unsafe { (d.cuCtxDestroy)(fresh) });
        self.bind()?;
        let elapsed = timed?;
        destroyed?;
        Ok((selected, elapsed))
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.load_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// This `Gpu`'s state of `library`, created on first use.
    fn library(&self, library: &'static Library) -> &LibraryState {
        if library.is(self.own.library) {
            return &self.own;
        }
        let mut states = self
            .libraries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let state: *const LibraryState = match states.iter().find(|s| s.library.is(library)) {
            Some(s) => &**s,
            None => {
                states.push(Box::new(LibraryState::new(library)));
                &**states.last().expect("just pushed")
            }
        };
        // SAFETY: states are boxed, never removed and never moved out of their box before
        // `self` drops, so the reference lives as long as the borrow of `self`.
        unsafe { &*state }
    }

    fn kernel_state<'s>(
        &'s self,
        library: &'s LibraryState,
        index: usize,
    ) -> Result<&'s KernelState, Error> {
        if let Some(s) = library.kernels[index].get() {
            return Ok(s);
        }
        let _guard = self.lock();
        if let Some(s) = library.kernels[index].get() {
            return Ok(s);
        }
        let info = &library.library.kernels[index];
        let module = self.module_locked(library, library.file_index(info.file)?)?;
        let state = KernelState::resolve(self, info, module)?;
        Ok(library.kernels[index].get_or_init(|| state))
    }

    /// Loads the module of kernel file `index` unless loaded; the caller holds `load_lock`.
    fn module_locked<'s>(
        &'s self,
        library: &'s LibraryState,
        index: usize,
    ) -> Result<&'s LoadedModule, Error> {
        if let Some(m) = library.modules[index].get() {
            return Ok(m);
        }
        let kernel_file = &library.library.registry.kernel_files()?[index];
        let selected = self.select(kernel_file, self.policy)?;
        self.bind()?;
        let module = LoadedModule::load(kernel_file, selected)?;
        Ok(library.modules[index].get_or_init(|| module))
    }

    pub(crate) fn route_for(&self, kernel: &'static str, module: &LoadedModule) -> Route {
        Route {
            kernel,
            file: module.file.name,
            kind: module.selected.kind,
            arch: module.selected.arch,
            code_cc: module.selected.cc,
            sha256: module.selected.sha256,
            toolkit: module.file.toolkit,
            origin: module.file.origin,
            device: self.device.id(),
            policy: self.policy,
        }
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // Modules unload from the context that is current: make it ours.
        let _ = self.bind();
    }
}

/// `Ok` when `ordinal` is one of the `count` devices the driver shows.
fn check_ordinal(ordinal: u32, count: i32) -> Result<(), Error> {
    if ordinal < count.max(0) as u32 {
        return Ok(());
    }
    Err(Error::NoDevice {
        detail: format!(
            "device {ordinal} requested, the driver shows {count} (CUDA_VISIBLE_DEVICES={})",
            std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "unset".into())
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinal_past_the_devices_is_no_device() {
        assert_eq!(check_ordinal(0, 1), Ok(()));
        assert_eq!(check_ordinal(3, 4), Ok(()));
        for (ordinal, count) in [(0, 0), (1, 1), (0, -1)] {
            let e = check_ordinal(ordinal, count).unwrap_err();
            assert!(matches!(e, Error::NoDevice { .. }), "{e:?}");
            let m = e.to_string();
            assert!(
                m.starts_with(&format!(
                    "no CUDA device: device {ordinal} requested, the driver shows {count}"
                )),
                "{m}"
            );
        }
    }
}
