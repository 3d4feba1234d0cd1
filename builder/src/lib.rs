//! Builds a crate's CUDA kernels: compiled with nvcc for each selected GPU arch through a
//! verified, shared cache, inspected offline (registers, spills, stack, shared memory,
//! occupancy, normalized SASS), checked against the manifest's contracts, and generated
//! into code that `cubins::include_kernels!()` includes: the embedded artifacts with their
//! identity and a typed launcher per kernel, launched through cubins' runtime.
//!
//! In a build script:
//!
//! ```no_run
//! cubins_build::Build::new().compile();
//! ```
//!
//! and in a test, with the feature `snapshots`: `cubins_build::snapshot_tests!();`.
//!
//! The builder's API is [`Build`], [`Built`], [`Error`], [`Arch`], [`Level`] and
//! `snapshot_tests!` (feature `snapshots`). The other public modules are the inspection library the
//! `cubins-inspect` command line, cubins' developer tasks and tests are written against;
//! they are hidden from these docs and may change without notice.

pub use arch::Arch;
pub use builder::{Build, Built, Error};
pub use manifest::Level;

pub mod builder;
#[cfg(feature = "snapshots")]
pub mod snapshots;

#[doc(hidden)]
pub mod analyze;
#[doc(hidden)]
pub mod arch;
#[doc(hidden)]
pub mod compile;
#[doc(hidden)]
pub mod contract;
#[doc(hidden)]
pub mod diff;
#[doc(hidden)]
pub mod launcher;
#[doc(hidden)]
pub mod manifest;
#[doc(hidden)]
pub mod model;
#[doc(hidden)]
pub mod occupancy;
#[doc(hidden)]
pub mod parse;
#[doc(hidden)]
pub mod pipeline;
#[doc(hidden)]
pub mod prebuilt;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod sass;
#[doc(hidden)]
pub mod schema;
#[doc(hidden)]
pub mod shapes;
#[doc(hidden)]
pub mod toolchain;

mod portable;
mod registry_gen;
mod validate;
