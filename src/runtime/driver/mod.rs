//! The driver calls the runtime makes ([`api`]: libcuda loaded at run time) and the checks
//! that turn their status codes into [`Error`]s.

pub(crate) mod api;

use super::Error;
use api::{CUdevice, CUfunction, CUresult, CUDA_SUCCESS};
use std::ffi::{c_char, c_int};

/// The loaded driver, or the error saying it could not be loaded and what to do.
pub(crate) fn driver() -> Result<&'static api::Api, Error> {
    api::api().map_err(|tried| Error::DriverNotFound {
        tried: tried.to_string(),
    })
}

/// The driver's name of `status` (`CUDA_ERROR_INVALID_VALUE`), or its number where the
/// driver cannot say (a stub).
fn status_name(status: CUresult) -> String {
    let mut name: *const c_char = std::ptr::null();
    let known = driver().is_ok_and(|d| {
        // SAFETY: an out-pointer; the driver returns a static string.
        unsafe { (d.cuGetErrorName)(status, &mut name) == CUDA_SUCCESS && !name.is_null() }
    });
    if known {
        // SAFETY: a NUL-terminated static string from the driver.
        unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    } else {
        format!("CUresult {status}")
    }
}

/// `Ok` for `CUDA_SUCCESS`, else the error for `call`; `context` is computed only on failure.
pub(crate) fn check_with(
    call: &'static str,
    status: CUresult,
    context: impl FnOnce() -> String,
) -> Result<(), Error> {
    if status == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::from_status(
            call,
            status as u32,
            &status_name(status),
            context(),
        ))
    }
}

pub(crate) fn check(call: &'static str, status: CUresult) -> Result<(), Error> {
    check_with(call, status, String::new)
}

/// An error from a `cust` call (which reports `cust::error::CudaError`, not the raw status).
#[cfg(feature = "cust")]
pub(crate) fn from_cust(call: &'static str, e: cust::error::CudaError) -> Error {
    // `CudaError`'s Display asks the driver for a string, which a stub cannot give: use Debug.
    Error::from_status(call, e as u32, &format!("{e:?}"), "")
}

/// An error from a `cudarc` call (its `DriverError` holds the raw status).
#[cfg(feature = "cudarc")]
pub(crate) fn from_cudarc(call: &'static str, e: cudarc::driver::DriverError) -> Error {
    let code = e.0 as CUresult;
    Error::from_status(call, code as u32, &status_name(code), "")
}

pub(crate) fn device_attribute(device: CUdevice, attribute: c_int) -> Result<u32, Error> {
    let mut value: c_int = 0;
    // SAFETY: `value` outlives the call; the driver writes one int.
    check_with(
        "cuDeviceGetAttribute",
        unsafe { (driver()?.cuDeviceGetAttribute)(&mut value, attribute, device) },
        || format!("reading device attribute {attribute}"),
    )?;
    Ok(value.max(0) as u32)
}

pub(crate) fn function_attribute(function: CUfunction, attribute: c_int) -> Result<u32, Error> {
    let mut value: c_int = 0;
    // SAFETY: `function` is a live handle of a loaded module; the driver writes one int.
    check_with(
        "cuFuncGetAttribute",
        unsafe { (driver()?.cuFuncGetAttribute)(&mut value, attribute, function) },
        || format!("reading function attribute {attribute}"),
    )?;
    Ok(value.max(0) as u32)
}

/// `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: the kernel
/// may be scheduled while the previous kernel in the stream drains, and must itself wait
/// (`griddepcontrol.wait`) before touching memory that kernel writes. `cuLaunchKernelEx`
/// (CUDA 12.0) is optional in [`api`], so the runtime still starts on a driver without it.
/// Drivers before 12.3 count as without it: they cannot capture such launches into a graph.
pub(crate) mod programmatic {
    use super::api::{self, CUfunction, CUresult, CUstream, CUDA_SUCCESS};
    use std::ffi::{c_uint, c_void};
    use std::sync::OnceLock;

    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (cuda.h, CUDA 12.0 and later).
    const ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: c_uint = 6;

    /// `CUlaunchAttribute`: the id, padding to 8 bytes, a 64-byte value union (8-aligned).
    #[repr(C, align(8))]
    struct LaunchAttribute {
        id: c_uint,
        pad: [u8; 4],
        value: [u8; 64],
    }

    /// `CUlaunchConfig`.
    #[repr(C)]
    struct LaunchConfigEx {
        grid: [c_uint; 3],
        block: [c_uint; 3],
        shared_mem_bytes: c_uint,
        stream: CUstream,
        attrs: *mut LaunchAttribute,
        num_attrs: c_uint,
    }

    type LaunchKernelEx = unsafe extern "C" fn(
        *const c_void,
        CUfunction,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CUresult;

    /// Drivers before CUDA 12.3 cannot capture programmatic launches into a graph.
    const MIN_DRIVER_VERSION: i32 = 12030;

    /// The driver's `cuLaunchKernelEx` (`None`: the driver has none, or is older than
    /// [`MIN_DRIVER_VERSION`]).
    fn entry() -> Option<LaunchKernelEx> {
        static ENTRY: OnceLock<Option<LaunchKernelEx>> = OnceLock::new();
        *ENTRY.get_or_init(|| {
            let d = api::api().ok()?;
            let mut version = 0;
            // SAFETY: an out-pointer to one int.
            let status = unsafe { (d.cuDriverGetVersion)(&mut version) };
            if status != CUDA_SUCCESS || version < MIN_DRIVER_VERSION {
                return None;
            }
            d.cuLaunchKernelEx
        })
    }

    /// Whether the driver can launch programmatic dependents.
    pub(crate) fn available() -> bool {
        entry().is_some()
    }

    /// Launches `function` as a programmatic dependent of the stream's previous kernel.
    ///
    /// # Safety
    /// As `cuLaunchKernel`; and the kernel must wait on the grid dependency before it touches
    /// memory that earlier work in the stream writes or reads.
    pub(crate) unsafe fn launch(
        function: CUfunction,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem_bytes: u32,
        stream: CUstream,
        params: *mut *mut c_void,
    ) -> CUresult {
        let Some(launch) = entry() else {
            return api::CUDA_ERROR_NOT_SUPPORTED;
        };
        let mut attribute = LaunchAttribute {
            id: ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: [0; 64],
        };
        // `programmaticStreamSerializationAllowed` (an int) = 1.
        attribute.value[..4].copy_from_slice(&1i32.to_ne_bytes());
        let config = LaunchConfigEx {
            grid,
            block,
            shared_mem_bytes,
            stream,
            attrs: &mut attribute,
            num_attrs: 1,
        };
        // SAFETY: `config` and `attribute` outlive the call; the caller vouches for the rest.
        unsafe {
            launch(
                (&config as *const LaunchConfigEx).cast(),
                function,
                params,
                std::ptr::null_mut(),
            )
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn structs_match_cuda_h() {
            assert_eq!(std::mem::size_of::<LaunchAttribute>(), 72);
            assert_eq!(std::mem::align_of::<LaunchAttribute>(), 8);
            // 7 unsigned ints, pad to 8, stream, attrs, numAttrs, pad.
            assert_eq!(std::mem::size_of::<LaunchConfigEx>(), 56);
            assert_eq!(std::mem::offset_of!(LaunchConfigEx, stream), 32);
            assert_eq!(std::mem::offset_of!(LaunchConfigEx, num_attrs), 48);
        }
    }
}
