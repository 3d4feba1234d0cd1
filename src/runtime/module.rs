//! A loaded module: one kernel file's artifact, on the route selection picked.

use super::driver::api::{self, CUfunction, CUmodule};
use super::driver::{check, check_with, driver};
use super::route::{count_ptx_fallback, ArtifactKind, Selected};
use super::Error;
use crate::registry::KernelFile;
use std::ffi::{c_uint, c_void};
use std::time::{Duration, Instant};

pub(crate) struct LoadedModule {
    raw: CUmodule,
    pub file: &'static KernelFile,
    pub selected: Selected,
    /// Wall time of `cuModuleLoadData(Ex)`, JIT included.
    pub load_time: Duration,
}

// SAFETY: a CUmodule is a driver handle usable from any thread with its context current;
// the runtime makes the context current before every call that uses it.
unsafe impl Send for LoadedModule {}
unsafe impl Sync for LoadedModule {}

const JIT_LOG_BYTES: usize = 8192;

impl LoadedModule {
    /// Loads `selected` (an artifact of `file`) into the current context.
    pub fn load(file: &'static KernelFile, selected: Selected) -> Result<LoadedModule, Error> {
        let start = Instant::now();
        let raw = load_image(selected.image, selected.kind, || {
            format!(
                "loading kernel file `{}` ({:?} {}, sha256 {})",
                file.name, selected.kind, selected.arch, selected.sha256
            )
        })?;
        let load_time = start.elapsed();
        if selected.kind == ArtifactKind::PtxJit {
            count_ptx_fallback();
        }
        Ok(LoadedModule {
            raw,
            file,
            selected,
            load_time,
        })
    }

    /// The entry point `symbol`.
    pub fn function(&self, symbol: &str) -> Result<CUfunction, Error> {
        let name = std::ffi::CString::new(symbol).map_err(|_| Error::Driver {
            call: "cuModuleGetFunction",
            code: 1,
            name: "CUDA_ERROR_INVALID_VALUE".into(),
            context: format!("symbol {symbol:?} contains a NUL byte"),
        })?;
        let mut f: CUfunction = std::ptr::null_mut();
        // SAFETY: `self.raw` is a live module; `name` is NUL-terminated and outlives the call.
        check_with(
            "cuModuleGetFunction",
            unsafe { (driver()?.cuModuleGetFunction)(&mut f, self.raw, name.as_ptr()) },
            || {
                format!(
                    "looking up entry point `{symbol}` in kernel file `{}` ({})",
                    self.file.name, self.selected.arch
                )
            },
        )?;
        Ok(f)
    }
}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        // SAFETY: the module was loaded by us (so the driver is loaded) and is unloaded once;
        // errors at teardown have no reader.
        if let Ok(d) = driver() {
            let _ = check("cuModuleUnload", unsafe { (d.cuModuleUnload)(self.raw) });
        }
    }
}

/// `cuModuleLoadData` for a cubin; for PTX, `cuModuleLoadDataEx` with an error log, so a
/// JIT failure says what the JIT said.
pub(crate) fn load_image(
    image: &[u8],
    kind: ArtifactKind,
    what: impl Fn() -> String,
) -> Result<CUmodule, Error> {
    let d = driver()?;
    let mut module: CUmodule = std::ptr::null_mut();
    match kind {
        ArtifactKind::Cubin => {
            // `include_bytes!` promises no alignment; hand the driver an 8-byte aligned ELF image.
            let mut aligned = vec![0u64; image.len().div_ceil(8)];
            bytemuck::cast_slice_mut::<u64, u8>(&mut aligned)[..image.len()].copy_from_slice(image);
            // SAFETY: `aligned` holds a complete cubin and outlives the call (the driver copies it).
            check_with(
                "cuModuleLoadData",
                unsafe { (d.cuModuleLoadData)(&mut module, aligned.as_ptr().cast()) },
                what,
            )?;
        }
        ArtifactKind::PtxJit => {
            let mut log = vec![0u8; JIT_LOG_BYTES];
            let mut options = [
                api::CU_JIT_ERROR_LOG_BUFFER,
                api::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            ];
            let mut values: [*mut c_void; 2] =
                [log.as_mut_ptr().cast(), JIT_LOG_BYTES as *mut c_void];
            // SAFETY: `image` is NUL-terminated PTX; the option arrays and the log buffer outlive the call.
            let status = unsafe {
                (d.cuModuleLoadDataEx)(
                    &mut module,
                    image.as_ptr().cast(),
                    options.len() as c_uint,
                    options.as_mut_ptr(),
                    values.as_mut_ptr(),
                )
            };
            check_with("cuModuleLoadDataEx", status, || {
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                format!(
                    "{} (PTX JIT log: {})",
                    what(),
                    String::from_utf8_lossy(&log[..end]).trim()
                )
            })?;
        }
    }
    Ok(module)
}
