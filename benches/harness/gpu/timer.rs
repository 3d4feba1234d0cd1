//! CUDA-event timing of launch windows. A [`Workload`] enqueues one launch on a buffer set;
//! the [`Timer`] warms it up, sizes its windows from a first estimate and the rotation plan,
//! and times each window between two events on one stream (eager launches, or the window
//! captured once as a CUDA graph and replayed).

use super::driver::{cust_error, synchronize_context, GraphExec, Result};
use crate::harness::host::reading::Work;
use crate::harness::host::rotation::RotationPlan;
use crate::harness::host::stamp::{Geometry, Route};
use cust::event::{Event, EventFlags};
use cust::stream::Stream;

/// What a workload is, as its STAMP line states it.
#[derive(Debug, Clone)]
pub struct Identity {
    /// Entry point, or the library call (`cublasGemmEx`).
    pub kernel: String,
    pub route: Route,
    pub toolkit: String,
    pub geometry: Option<Geometry>,
    pub dtype: String,
    pub shape: String,
    /// Its literal name when it is the comparator (`cuBLAS bf16 in, ...`).
    pub name: String,
}

/// Something to time: one launch per call, on buffer set `set` of its rotation.
pub trait Workload {
    fn identity(&self) -> &Identity;
    /// The work of one launch, for GB/s or TFLOP/s; `None` where it is not meaningful.
    fn work(&self) -> Option<Work>;
    fn rotation(&self) -> RotationPlan;
    /// Enqueues one launch on `stream` using buffer set `set` (`set < rotation().sets`).
    fn enqueue(&mut self, stream: &Stream, set: usize) -> Result<()>;
    /// After timing: checks the outputs are right (and every poisoned element overwritten).
    /// An `Err` marks the reading WRONG; it is kept, never dropped.
    fn verify(&mut self, stream: &Stream) -> Result<()>;
}

/// A workload ready for timed windows.
pub struct Armed<'w> {
    pub workload: &'w mut dyn Workload,
    pub launches_per_window: usize,
    graph: Option<GraphExec>,
}

pub struct Timer {
    pub stream: Stream,
    start: Event,
    stop: Event,
    /// Replay each window as a CUDA graph (for launch-bound shapes).
    pub graph: bool,
    /// Windows aim to last this long, so event resolution (~0.5 us) is noise.
    pub target_window_us: f64,
}

impl Timer {
    pub fn new(stream: Stream, graph: bool, target_window_us: f64) -> Result<Timer> {
        let event = || Event::new(EventFlags::DEFAULT).map_err(|e| cust_error("cuEventCreate", e));
        Ok(Timer {
            stream,
            start: event()?,
            stop: event()?,
            graph,
            target_window_us,
        })
    }

    pub fn mode(&self) -> &'static str {
        if self.graph {
            "graph"
        } else {
            "eager"
        }
    }

    /// Microseconds between events recorded before and after what `enqueue` puts on the stream.
    fn time(&self, enqueue: impl FnOnce() -> Result<()>) -> Result<f64> {
        self.start
            .record(&self.stream)
            .map_err(|e| cust_error("cuEventRecord", e))?;
        enqueue()?;
        self.stop
            .record(&self.stream)
            .map_err(|e| cust_error("cuEventRecord", e))?;
        self.stop
            .synchronize()
            .map_err(|e| cust_error("cuEventSynchronize", e))?;
        let ms = self
            .stop
            .elapsed_time_f32(&self.start)
            .map_err(|e| cust_error("cuEventElapsedTime", e))?;
        Ok(f64::from(ms) * 1e3)
    }

    fn pass(stream: &Stream, w: &mut dyn Workload, launches: usize) -> Result<()> {
        let sets = w.rotation().sets.max(1);
        (0..launches).try_for_each(|i| w.enqueue(stream, i % sets))
    }

    /// Warm-up (every buffer set once, which also overwrites the poison and loads the
    /// module), then a launch-time estimate (the faster of two short passes) that sizes the
    /// window; in graph mode the window is captured here, once.
    pub fn arm<'w>(&self, w: &'w mut dyn Workload) -> Result<Armed<'w>> {
        // The workload's uploads and poison memsets must land before its first launch.
        synchronize_context()?;
        let plan = w.rotation();
        self.time(|| Self::pass(&self.stream, w, plan.sets))?;
        let n = plan.sets.max(3);
        let mut estimate = f64::INFINITY;
        for _ in 0..2 {
            estimate = estimate.min(self.time(|| Self::pass(&self.stream, w, n))? / n as f64);
        }
        let launches_per_window = plan.launches_per_window(estimate, self.target_window_us);
        let graph = if self.graph {
            let g = GraphExec::capture(self.stream.as_inner(), || {
                Self::pass(&self.stream, w, launches_per_window)
            })?;
            // One replay before timing: the first launch of a graph uploads it.
            self.time(|| g.launch(self.stream.as_inner()))?;
            Some(g)
        } else {
            None
        };
        Ok(Armed {
            workload: w,
            launches_per_window,
            graph,
        })
    }

    /// One timed window: microseconds per launch.
    pub fn window(&self, a: &mut Armed<'_>) -> Result<f64> {
        let launches = a.launches_per_window;
        let us = match &a.graph {
            Some(g) => self.time(|| g.launch(self.stream.as_inner()))?,
            None => self.time(|| Self::pass(&self.stream, a.workload, launches))?,
        };
        Ok(us / launches as f64)
    }
}
