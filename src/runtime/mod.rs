//! Launching the embedded kernels: route selection, modules loaded lazily per context, and
//! typed launchers checked at build time against each cubin's parameter table and at launch
//! time against the device. See `docs/runtime.md`.
//!
//! Without the `cust` feature this module holds the parts that need no driver (route
//! selection, the driver preflight, launch checks, the launcher table); with it, `Gpu`,
//! `Kernel` and `Graph`.

mod error;
mod launch;
pub mod launchers;
mod preflight;
mod route;
mod vector;

#[cfg(feature = "cust")]
mod driver;
#[cfg(feature = "cust")]
mod gpu;
#[cfg(feature = "cust")]
mod graph;
#[cfg(feature = "cust")]
mod kernel;
#[cfg(feature = "cust")]
mod module;

pub use error::{Error, CUDA_ERROR_NO_DEVICE, CUDA_ERROR_STUB_LIBRARY};
pub use launch::{
    check as check_launch, BufferArg, DeviceLimits, KernelLimits, LaunchConfig, LaunchError,
    SmemPlan,
};
pub use launchers::{kernel_info, Dtype, DtypeKind, KernelInfo, KernelSpec, LaunchArgs, ParamInfo};
pub use preflight::{check_driver, driver_needed, DriverNeed, DriverTooOld};
pub use route::{
    ptx_fallbacks, select, ArtifactKind, DeviceId, NoRoute, Route, RoutePolicy, Selected,
    FORCE_ROUTE_ENV,
};
pub use vector::{Bf16, U8x16, F16};

#[cfg(feature = "cust")]
pub use gpu::{DeviceInfo, Gpu};
#[cfg(feature = "cust")]
pub use graph::Graph;
#[cfg(feature = "cust")]
pub use kernel::Kernel;
