//! Driver calls `cust` 0.3.2 does not wrap (primary-context checks, PCI bus id), each turned
//! into a `Result` that names the call, and the runtime's CUDA graphs in the same terms.

use cubins::runtime::Graph;
use cust::sys as cu;
use std::ffi::CStr;
use std::os::raw::c_char;

pub type Result<T> = std::result::Result<T, String>;

/// `Err("<call> failed with CUDA_ERROR_... (code)")` for a failed driver status.
pub fn check(call: &str, status: cu::CUresult) -> Result<()> {
    if status == cu::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{call} failed with {status:?} ({})", status as u32))
    }
}

/// The message of a failed `cust` call. `CudaError`'s `Display` asks the driver for a
/// string, which a link stub cannot give, so this uses `Debug`.
pub fn cust_error(call: &str, e: cust::error::CudaError) -> String {
    format!("{call} failed with {e:?}")
}

/// `CUdevice` of an ordinal.
pub fn device(ordinal: u32) -> Result<cu::CUdevice> {
    let mut d: cu::CUdevice = 0;
    check("cuDeviceGet", unsafe {
        cu::cuDeviceGet(&mut d, ordinal as i32)
    })?;
    Ok(d)
}

pub fn attribute(device: cu::CUdevice, attribute: cu::CUdevice_attribute) -> Result<i32> {
    let mut v = 0;
    check("cuDeviceGetAttribute", unsafe {
        cu::cuDeviceGetAttribute(&mut v, attribute, device)
    })?;
    Ok(v)
}

/// Waits for all work in the current context, on every stream. Buffer setup (uploads, the
/// poison memsets) runs on the legacy stream, which a non-blocking stream does not wait for.
pub fn synchronize_context() -> Result<()> {
    check("cuCtxSynchronize", unsafe { cu::cuCtxSynchronize() })
}

/// `0000:00:04.0`, the key NVML finds the same device by.
pub fn pci_bus_id(device: cu::CUdevice) -> Result<String> {
    let mut buf = [0 as c_char; 32];
    // SAFETY: the buffer is writable for its full length, which is passed.
    check("cuDeviceGetPCIBusId", unsafe {
        cu::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, device)
    })?;
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// Whether the context current on this thread is `device`'s primary context, the one
/// cuBLAS (through the CUDA runtime) uses.
pub fn current_is_primary(device: cu::CUdevice) -> Result<bool> {
    let mut current: cu::CUcontext = std::ptr::null_mut();
    check("cuCtxGetCurrent", unsafe {
        cu::cuCtxGetCurrent(&mut current)
    })?;
    let mut primary: cu::CUcontext = std::ptr::null_mut();
    check("cuDevicePrimaryCtxRetain", unsafe {
        cu::cuDevicePrimaryCtxRetain(&mut primary, device)
    })?;
    // The retain above only took a reference to compare against; give it back.
    check("cuDevicePrimaryCtxRelease", unsafe {
        cu::cuDevicePrimaryCtxRelease_v2(device)
    })?;
    Ok(!current.is_null() && current == primary)
}

/// A CUDA graph captured from work enqueued on a stream: the runtime's `Graph` behind the
/// harness's `String` errors and raw stream handles.
pub struct GraphExec(Graph<'static>);

/// A capture's error as the harness reports it: the enqueued work's own or the runtime's.
struct CaptureFailed(String);

impl From<cubins::runtime::Error> for CaptureFailed {
    fn from(e: cubins::runtime::Error) -> Self {
        CaptureFailed(e.to_string())
    }
}

impl GraphExec {
    /// Captures whatever `enqueue` puts on `stream` (which must not be the legacy default
    /// stream) and instantiates it for replay.
    pub fn capture(
        stream: cu::CUstream,
        enqueue: impl FnOnce() -> Result<()>,
    ) -> Result<GraphExec> {
        // SAFETY: callers capture on streams they own, launching kernels of a `Gpu` that
        // outlives the graph.
        unsafe { Graph::capture_raw(stream.cast(), || enqueue().map_err(CaptureFailed)) }
            .map(GraphExec)
            .map_err(|CaptureFailed(e)| format!("capturing a CUDA graph: {e}"))
    }

    pub fn launch(&self, stream: cu::CUstream) -> Result<()> {
        // SAFETY: callers replay on their own live stream, while the buffers the captured
        // work uses are still allocated.
        unsafe { self.0.launch_raw(stream.cast()) }.map_err(|e| e.to_string())
    }
}
