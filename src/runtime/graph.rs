//! [`Graph`]: work captured from a stream once and replayed as one CUDA graph launch, so a
//! sequence of small kernels costs one launch of host time.
//!
//! Capture runs in thread-local mode: a call on this thread that would make the captured
//! work wrong (a synchronous copy on the legacy stream, an allocation, a synchronize) fails
//! and invalidates the capture, which then ends in an `Err`; other threads are unaffected.
//! Whatever happens inside, the capture is ended before [`Gpu::capture`] returns (a panic
//! included), so the stream is usable again and no graph is leaked.
//!
//! ```no_run
//! use cubins::cust::memory::DeviceBuffer;
//! use cubins::ops::swiglu::swiglu;
//! use cubins::runtime::{Bf16, Error, Gpu};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let stream = gpu.stream()?;
//! let gate = DeviceBuffer::from_slice(&vec![Bf16::default(); 4096])?;
//! let up = DeviceBuffer::from_slice(&vec![Bf16::default(); 4096])?;
//! let mut out = DeviceBuffer::from_slice(&vec![Bf16::default(); 4096])?;
//! gpu.synchronize()?;
//! swiglu(&gpu, &stream, &gate, &up, &mut out)?; // loads the module, outside the capture
//! let graph = gpu.capture(&stream, |s| -> Result<(), Error> {
//!     swiglu(&gpu, s, &gate, &up, &mut out)?;
//!     Ok(())
//! })?;
//! for _ in 0..100 {
//!     // SAFETY: gate, up and out outlive the replays and nothing else writes them.
//!     unsafe { graph.launch(&stream)? };
//! }
//! stream.synchronize()?;
//! # Ok(()) }
//! ```

use super::driver::api::{self, Api, CUgraph, CUgraphExec, CUstream, CUDA_SUCCESS};
use super::driver::{check, check_with, driver};
use super::memory::{RawStream, StreamHandle};
use super::{Error, Gpu};
use std::marker::PhantomData;

/// An instantiated CUDA graph. Replays launch the kernels of its [`Gpu`] with the arguments
/// they were captured with: the same device pointers, so the same buffers.
///
/// `Send`, not `Sync`: the driver does not synchronize concurrent use of one graph.
pub struct Graph<'g> {
    graph: CUgraph,
    exec: CUgraphExec,
    driver: &'static Api,
    // Kernels of the Gpu's modules: the Gpu must outlive the graph. Raw pointers are !Sync.
    gpu: PhantomData<(&'g Gpu, *const ())>,
}

// SAFETY: the handles are valid on any thread with their context current, which `launch`
// and `Drop` do not need (graph calls take the context from the graph).
unsafe impl Send for Graph<'_> {}

impl Gpu {
    /// Captures what `enqueue` puts on `stream` (a stream of this device, never the legacy
    /// default stream) into a [`Graph`], without running it.
    ///
    /// Run each op once before capturing it: a first call loads the kernel's module, which
    /// is not stream work. An error of `enqueue` or of the capture (an uncapturable call
    /// invalidates it) is returned after the capture has ended, and no graph is kept.
    pub fn capture<'g, S: StreamHandle, E: From<Error>>(
        &'g self,
        stream: &S,
        enqueue: impl FnOnce(&S) -> Result<(), E>,
    ) -> Result<Graph<'g>, E> {
        self.bind()?;
        // SAFETY: `stream` is a live stream, and every launch `enqueue` makes through this
        // crate uses this Gpu's kernels, which the returned graph's lifetime keeps loaded.
        unsafe { Graph::capture_raw(stream.raw_stream(), || enqueue(stream)) }
    }
}

impl Graph<'static> {
    /// [`Gpu::capture`] for code that holds only the driver's stream handle
    /// ([`StreamHandle::raw_stream`]); the calling thread's current context is the one captured in.
    ///
    /// # Safety
    /// `stream` must be a live stream of the current context, and the modules of every
    /// kernel `enqueue` launches must stay loaded as long as the graph is used.
    pub unsafe fn capture_raw<E: From<Error>>(
        stream: RawStream,
        enqueue: impl FnOnce() -> Result<(), E>,
    ) -> Result<Graph<'static>, E> {
        let d = driver()?;
        let mode = api::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: the caller vouches for `stream`.
        check("cuStreamBeginCapture", unsafe {
            (d.cuStreamBeginCapture)(stream, mode)
        })?;
        let capture = Capturing { stream, driver: d };
        let enqueued = enqueue();
        let ended = capture.end();
        // The closure's error first: an invalidated capture is usually its consequence.
        let graph = match (enqueued, ended) {
            (Ok(()), ended) => ended?,
            (Err(e), ended) => {
                if let Ok(graph) = ended {
                    // SAFETY: made by this capture, destroyed once.
                    unsafe { (d.cuGraphDestroy)(graph) };
                }
                return Err(e);
            }
        };
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: `graph` is the live graph the capture made; `exec` an out-pointer.
        let instantiated = check("cuGraphInstantiateWithFlags", unsafe {
            (d.cuGraphInstantiateWithFlags)(&mut exec, graph, 0)
        });
        if let Err(e) = instantiated {
            // SAFETY: created by the capture above, destroyed once.
            unsafe { (d.cuGraphDestroy)(graph) };
            return Err(e.into());
        }
        Ok(Graph {
            graph,
            exec,
            driver: d,
            gpu: PhantomData,
        })
    }
}

impl Graph<'_> {
    /// Replays the graph on `stream`, ordered after the work already there (a replay also
    /// waits for the previous replay of the same graph).
    ///
    /// # Safety
    /// Every buffer the captured work reads or writes must still be allocated, and not be
    /// written by other streams while the replay runs: the kernels use the pointers they
    /// were captured with, past the checks their safe ops made at capture time.
    pub unsafe fn launch(&self, stream: &impl StreamHandle) -> Result<(), Error> {
        // SAFETY: the caller vouches for the buffers; `stream` is live.
        unsafe { self.launch_raw(stream.raw_stream()) }
    }

    /// [`Graph::launch`] on the driver's stream handle.
    ///
    /// # Safety
    /// As [`Graph::launch`], and `stream` must be a live stream of the graph's context.
    pub unsafe fn launch_raw(&self, stream: RawStream) -> Result<(), Error> {
        // SAFETY: `exec` is live until drop; the caller vouches for the rest.
        check("cuGraphLaunch", unsafe {
            (self.driver.cuGraphLaunch)(self.exec, stream)
        })
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        // SAFETY: both handles came from successful calls and are destroyed exactly once; a
        // replay still running keeps its own reference in the driver.
        unsafe {
            (self.driver.cuGraphExecDestroy)(self.exec);
            (self.driver.cuGraphDestroy)(self.graph);
        }
    }
}

/// A capture in progress on `stream`: ended on every path, a panic in the closure included,
/// so the stream never stays in capture mode.
struct Capturing {
    stream: CUstream,
    driver: &'static Api,
}

impl Capturing {
    fn end(self) -> Result<CUgraph, Error> {
        let (stream, d) = (self.stream, self.driver);
        std::mem::forget(self);
        end_capture(d, stream)
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        // Reached only when the closure panicked: end the capture and discard the graph.
        if let Ok(graph) = end_capture(self.driver, self.stream) {
            // SAFETY: made by this capture, destroyed once.
            unsafe { (self.driver.cuGraphDestroy)(graph) };
        }
    }
}

/// Ends the capture on `stream`: the graph, or why there is none (a capture that an
/// uncapturable call invalidated ends with `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`).
fn end_capture(d: &Api, stream: CUstream) -> Result<CUgraph, Error> {
    let mut graph: CUgraph = std::ptr::null_mut();
    // SAFETY: the stream is capturing (begun by `capture_raw`); `graph` is an out-pointer.
    let status = unsafe { (d.cuStreamEndCapture)(stream, &mut graph) };
    if status != CUDA_SUCCESS && !graph.is_null() {
        // SAFETY: a failed capture's graph, if the driver returned one, destroyed once.
        unsafe { (d.cuGraphDestroy)(graph) };
    }
    check_with("cuStreamEndCapture", status, || {
        "ending a CUDA graph capture".into()
    })?;
    Ok(graph)
}
