//! The record every op returns: the entry point it launched and the geometry it chose, for
//! the STAMP line of a reading.

use crate::runtime::{Error, Gpu, Kernel, KernelSpec, LaunchConfig, StreamHandle};
use std::borrow::Cow;
use std::fmt;

/// The STAMP word of a launch made as a programmatic dependent of the stream's previous kernel.
pub(crate) const PROGRAMMATIC_STAMP: &str = "launch=programmatic-dependent";

/// What an op launched: the entry point and the geometry it chose. `stamp` joins it to the
/// route the runtime took. An op with nothing to do launches nothing and says so in `choice`
/// (its grid is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    pub kernel: &'static str,
    pub config: LaunchConfig,
    /// The geometry in words: `threads_per_row=64 rows_per_block=1 walk=resident` (fixed
    /// words cost a launch no allocation).
    pub choice: Cow<'static, str>,
}

impl Launched {
    /// Launches `kernel` with this record's geometry, as a programmatic dependent of the
    /// stream's previous kernel where its route allows it ([`Kernel::programmatic_route`]:
    /// its blocks may be scheduled while that kernel drains), and returns the record as
    /// launched.
    ///
    /// # Safety
    /// As [`Kernel::launch`]; and `kernel` waits on the grid dependency
    /// (`cubins::wait_for_previous_grid`) before its first memory access.
    pub unsafe fn launch_after_previous<K: KernelSpec>(
        mut self,
        kernel: &Kernel<'_, K>,
        stream: &impl StreamHandle,
        args: K::Args,
    ) -> Result<Launched, Error> {
        self.config.programmatic_dependent = kernel.programmatic_route();
        kernel.launch(stream, &self.config, args)?;
        Ok(self)
    }

    /// The route of `kernel` and this record: one STAMP line.
    pub fn stamp(&self, gpu: &Gpu) -> Result<String, Error> {
        Ok(format!("{} {}", gpu.route(self.kernel)?, self))
    }
}

impl fmt::Display for Launched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [gx, gy, gz] = self.config.grid;
        let [bx, by, bz] = self.config.block;
        write!(f, "grid={gx}x{gy}x{gz} block={bx}x{by}x{bz}")?;
        if self.config.dynamic_smem_bytes > 0 {
            write!(f, " smem={}", self.config.dynamic_smem_bytes)?;
        }
        write!(f, " {}", self.choice)?;
        if self.config.programmatic_dependent {
            write!(f, " {PROGRAMMATIC_STAMP}")?;
        }
        Ok(())
    }
}
