//! CUDA C++ kernels compiled ahead of time for each selected GPU arch, inspected,
//! contract-checked and embedded with their identity.
//!
//! - [`mod@registry`]: the embedded cubins and PTX with SHA-256, toolkit, flags, source digest,
//!   entry points and resource facts; no GPU or driver needed.
//! - [`params`]: the flag bits kernels share with Rust (generated with
//!   `cuda/include/cubins/params.h` from `cuda/gemm_catalogue.toml`).
//! - [`kernels`]: the typed launchers of this crate's kernels; [`Library`] and
//!   [`include_kernels!`] give a crate that builds its own kernels (through `cubins-build`)
//!   the same.
//! - [`runtime`]: route selection, the driver preflight, launch checks and the launcher
//!   types; with the `cust` feature, `runtime::Gpu` loads modules and launches, and
//!   `runtime::Graph` replays captured work.
//! - [`build_info()`]: how this crate's kernels were built; `Display` prints it.
//! - `ops` (feature `cust`): safe operations over the typed launchers.

// The generated code names this crate `::cubins`, as it does in a dependent.
extern crate self as cubins;

mod library;
pub mod params;
pub mod registry;
pub mod runtime;

/// cubins' own kernels: the [`Library`] `LIBRARY`, the launcher table `KERNELS` and one
/// marker type per kernel of `cuda/kernels.toml` (`CopyVec16` for `copy_vec16`), generated
/// by `cubins-build` as for any crate (see [`include_kernels!`]).
pub mod kernels {
    crate::include_kernels!();
}

#[cfg(feature = "cudarc")]
pub use cudarc;
#[cfg(feature = "cust")]
pub use cust;
pub use half;
pub use library::Library;

#[cfg(feature = "driver")]
pub mod ops;

/// The build's kernel reports (`OUT_DIR/reports.json`), for the snapshot tests.
#[doc(hidden)]
pub const REPORTS_JSON: &str = concat!(env!("OUT_DIR"), "/reports.json");

pub use registry::{
    build_info, find_entry_point, kernel_file, kernel_files, registry, BuildSummary, Registry,
    RegistryError,
};
