//! [`Library`]: one crate's embedded kernels, as `cubins-build` generates them for it
//! (`cubins::include_kernels!()`): the registry of what its build compiled and the table
//! of its typed launchers. cubins' own kernels are [`crate::kernels::LIBRARY`]; a crate
//! that builds its own kernels through `cubins-build` has its own, launched the same way.

use crate::registry::Registry;
use crate::runtime::KernelInfo;

/// The kernels one crate's build embedded.
#[derive(Debug)]
pub struct Library {
    /// The crate whose build compiled them (`CARGO_PKG_NAME`).
    pub crate_name: &'static str,
    /// Its kernel files, their artifacts and identity.
    pub registry: Registry,
    /// Its kernels with typed launchers, in manifest order (sorted by name).
    pub kernels: &'static [KernelInfo],
}

impl Library {
    /// The launcher table entry for `name`.
    pub fn kernel_info(&self, name: &str) -> Result<&'static KernelInfo, crate::runtime::Error> {
        self.kernels.iter().find(|k| k.name == name).ok_or_else(|| {
            crate::runtime::Error::UnknownKernel {
                name: name.to_string(),
                available: self.kernels.iter().map(|k| k.name).collect(),
            }
        })
    }

    /// Whether `self` and `other` are the same library (one static per crate).
    pub fn is(&self, other: &Library) -> bool {
        std::ptr::eq(self, other)
    }
}

/// Includes the kernels `cubins-build` compiled for this crate: the [`Library`] `LIBRARY`,
/// the launcher table `KERNELS` and one marker type per kernel (`CopyVec16` for
/// `copy_vec16`) for `Gpu::kernel::<CopyVec16>()`. Use it once, in a module of its own:
///
/// ```ignore
/// mod kernels {
///     cubins::include_kernels!();
/// }
/// ```
#[macro_export]
macro_rules! include_kernels {
    () => {
        include!(concat!(env!("OUT_DIR"), "/cubins_kernels.rs"));
    };
}
