//! The few raw driver calls the runtime makes itself (through `cust::sys`), so that it sees
//! the driver's own status codes: `cust` folds codes it does not know, the stub's among
//! them, into `UnknownError`.

use super::Error;
use cust::sys as cu;
use std::ffi::c_int;

/// `Ok` for `CUDA_SUCCESS`, else the error for `call`; `context` is computed only on failure.
pub(crate) fn check_with(
    call: &'static str,
    status: cu::CUresult,
    context: impl FnOnce() -> String,
) -> Result<(), Error> {
    if status == cu::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::from_status(
            call,
            status as u32,
            &format!("{status:?}"),
            context(),
        ))
    }
}

pub(crate) fn check(call: &'static str, status: cu::CUresult) -> Result<(), Error> {
    check_with(call, status, String::new)
}

/// An error from a `cust` call (which reports `cust::error::CudaError`, not the raw status).
pub(crate) fn from_cust(call: &'static str, e: cust::error::CudaError) -> Error {
    // `CudaError`'s Display asks the driver for a string, which a stub cannot give: use Debug.
    Error::from_status(call, e as u32, &format!("{e:?}"), "")
}

pub(crate) fn device_attribute(
    device: cu::CUdevice,
    attribute: cu::CUdevice_attribute,
) -> Result<u32, Error> {
    let mut value: c_int = 0;
    // SAFETY: `value` outlives the call; the driver writes one int.
    check_with(
        "cuDeviceGetAttribute",
        unsafe { cu::cuDeviceGetAttribute(&mut value, attribute, device) },
        || format!("reading {attribute:?}"),
    )?;
    Ok(value.max(0) as u32)
}

pub(crate) fn function_attribute(
    function: cu::CUfunction,
    attribute: cu::CUfunction_attribute,
) -> Result<u32, Error> {
    let mut value: c_int = 0;
    // SAFETY: `function` is a live handle of a loaded module; the driver writes one int.
    check_with(
        "cuFuncGetAttribute",
        unsafe { cu::cuFuncGetAttribute(&mut value, attribute, function) },
        || format!("reading {attribute:?}"),
    )?;
    Ok(value.max(0) as u32)
}

/// `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: the kernel
/// may be scheduled while the previous kernel in the stream drains, and must itself wait
/// (`griddepcontrol.wait`) before touching memory that kernel writes. `cust` binds the CUDA 11
/// driver API, which has no `cuLaunchKernelEx` (CUDA 12.0): it is looked up at run time, so the
/// crate still links and runs against a driver without it. Drivers before 12.3 count as
/// without it: they cannot capture such launches into a graph.
pub(crate) mod programmatic {
    use super::cu;
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
        stream: cu::CUstream,
        attrs: *mut LaunchAttribute,
        num_attrs: c_uint,
    }

    type LaunchKernelEx = unsafe extern "C" fn(
        *const LaunchConfigEx,
        cu::CUfunction,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> cu::CUresult;

    /// Drivers before CUDA 12.3 cannot capture programmatic launches into a graph.
    const MIN_DRIVER_VERSION: i32 = 12030;

    /// The driver's `cuLaunchKernelEx`, looked up once (`None`: the driver has none, or is
    /// older than [`MIN_DRIVER_VERSION`]).
    fn entry() -> Option<LaunchKernelEx> {
        static ENTRY: OnceLock<Option<usize>> = OnceLock::new();
        let address = *ENTRY.get_or_init(|| {
            let mut version = 0;
            // SAFETY: an out-pointer to one int.
            let status = unsafe { cu::cuDriverGetVersion(&mut version) };
            if status != cu::CUresult::CUDA_SUCCESS || version < MIN_DRIVER_VERSION {
                return None;
            }
            let mut pfn: *mut c_void = std::ptr::null_mut();
            // SAFETY: a NUL-terminated name and an out-pointer; 12000 asks for the CUDA 12.0
            // ABI of the function, the one `LaunchKernelEx` declares.
            let status = unsafe {
                cu::cuGetProcAddress(
                    c"cuLaunchKernelEx".as_ptr(),
                    &mut pfn,
                    12000,
                    cu::CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_DEFAULT as u64,
                )
            };
            (status == cu::CUresult::CUDA_SUCCESS && !pfn.is_null()).then_some(pfn as usize)
        });
        // SAFETY: the address the driver returned for this name and ABI version.
        address.map(|a| unsafe { std::mem::transmute::<usize, LaunchKernelEx>(a) })
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
        function: cu::CUfunction,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem_bytes: u32,
        stream: cu::CUstream,
        params: *mut *mut c_void,
    ) -> cu::CUresult {
        let Some(launch) = entry() else {
            return cu::CUresult::CUDA_ERROR_NOT_SUPPORTED;
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
        unsafe { launch(&config, function, params, std::ptr::null_mut()) }
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
