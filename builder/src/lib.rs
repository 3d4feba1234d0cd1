//! Offline inspection of CUDA kernels: the toolchain driver and build pipeline, parsers for
//! `ptxas -v`, `cuobjdump -res-usage`, `cuobjdump -sass` and `.nv.info`, normalized SASS,
//! occupancy, kernel contracts, and reports.

pub mod arch;
pub mod manifest;
pub mod model;
pub mod occupancy;
pub mod parse;
pub mod pipeline;
pub mod portable;
pub mod prebuilt;
pub mod toolchain;
pub mod validate;

pub use arch::Arch;
pub use builder::{Build, Built, Error};
pub use manifest::Level;
pub mod analyze;
pub mod builder;
pub mod compile;
pub mod contract;
pub mod diff;
pub mod launcher;
pub mod registry_gen;
pub mod report;
pub mod sass;
pub mod schema;
pub mod shapes;
#[cfg(feature = "snapshots")]
pub mod snapshots;
