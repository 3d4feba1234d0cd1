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
