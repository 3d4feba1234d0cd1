//! Driver calls `cust` 0.3.2 does not wrap (graphs from stream capture, primary-context
//! checks, PCI bus id), each turned into a `Result` that names the call.

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

/// An instantiated CUDA graph, captured from work enqueued on a stream.
pub struct GraphExec {
    graph: cu::CUgraph,
    exec: cu::CUgraphExec,
}

impl GraphExec {
    /// Captures whatever `enqueue` puts on `stream` (which must not be the legacy default
    /// stream) and instantiates it for replay.
    pub fn capture(
        stream: cu::CUstream,
        enqueue: impl FnOnce() -> Result<()>,
    ) -> Result<GraphExec> {
        let mode = cu::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        check("cuStreamBeginCapture", unsafe {
            cu::cuStreamBeginCapture_v2(stream, mode)
        })?;
        let enqueued = enqueue();
        let mut graph: cu::CUgraph = std::ptr::null_mut();
        // Always end the capture, even when enqueueing failed, so the stream is usable again.
        let ended = check("cuStreamEndCapture", unsafe {
            cu::cuStreamEndCapture(stream, &mut graph)
        });
        if let Err(e) = enqueued.and(ended) {
            if !graph.is_null() {
                unsafe { cu::cuGraphDestroy(graph) };
            }
            return Err(format!("capturing a CUDA graph: {e}"));
        }
        let mut exec: cu::CUgraphExec = std::ptr::null_mut();
        if let Err(e) = check("cuGraphInstantiateWithFlags", unsafe {
            cu::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
        }) {
            unsafe { cu::cuGraphDestroy(graph) };
            return Err(e);
        }
        Ok(GraphExec { graph, exec })
    }

    pub fn launch(&self, stream: cu::CUstream) -> Result<()> {
        check("cuGraphLaunch", unsafe {
            cu::cuGraphLaunch(self.exec, stream)
        })
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        // SAFETY: both handles came from successful calls and are destroyed exactly once.
        unsafe {
            cu::cuGraphExecDestroy(self.exec);
            cu::cuGraphDestroy(self.graph);
        }
    }
}
