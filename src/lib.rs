//! CUDA C++ kernels compiled ahead of time for each selected GPU arch, inspected,
//! contract-checked and embedded with their identity.
//!
//! - [`registry`]: the embedded cubins and PTX with SHA-256, toolkit, flags, source digest,
//!   entry points and resource facts; no GPU or driver needed.
//! - [`params`]: argument structs shared with the kernels (bindgen output of
//!   `cuda/include/cubins/params.h`).
//! - [`runtime`]: route selection, launch checks and the typed launcher table; with the
//!   `cust` feature, [`runtime::Gpu`] loads modules and launches.
//! - `ops` (feature `cust`): safe operations over the typed launchers.

pub mod params;
pub mod registry;
pub mod runtime;

#[cfg(feature = "cust")]
pub mod ops;

/// The build's kernel reports (`OUT_DIR/reports.json`), for the snapshot tests.
#[doc(hidden)]
pub const REPORTS_JSON: &str = concat!(env!("OUT_DIR"), "/reports.json");

pub use registry::{
    build_info, find_entry_point, kernel_file, kernel_files, registry, Registry, RegistryError,
};
