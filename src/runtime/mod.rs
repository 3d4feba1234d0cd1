//! Launching the embedded kernels: route selection, modules loaded lazily per context, and
//! typed launchers checked at build time against each cubin's parameter table and at launch
//! time against the device. See `docs/runtime.md`.
//!
//! Without the `driver` feature (which `cust` and `cudarc` turn on) this module holds the
//! parts that need no driver (route selection, the driver preflight, launch checks, the
//! launcher table, device pointer types); with it, `Gpu`, `Kernel` and `Graph`, on the
//! driver loaded at run time, and the traits through which the ops take `cust`'s or
//! `cudarc`'s buffers and streams.

mod error;
mod launch;
pub mod launchers;
mod memory;
mod preflight;
mod route;
mod tensor_map;
mod vector;

#[cfg(feature = "driver")]
mod driver;
#[cfg(feature = "driver")]
mod gpu;
#[cfg(feature = "driver")]
mod graph;
#[cfg(feature = "driver")]
mod interop;
#[cfg(feature = "driver")]
mod kernel;
#[cfg(feature = "driver")]
mod module;

pub use error::{Error, CUDA_ERROR_NO_DEVICE, CUDA_ERROR_STUB_LIBRARY};
pub use launch::{
    check as check_launch, BufferArg, DeviceLimits, KernelLimits, LaunchConfig, LaunchError,
    SmemPlan,
};
pub use launchers::{kernel_info, Dtype, DtypeKind, KernelInfo, KernelSpec, LaunchArgs, ParamInfo};
pub use memory::{Access, DevicePtr, DeviceRead, DeviceView, DeviceWrite, RawStream, StreamHandle};
pub use preflight::{check_driver, driver_needed, DriverNeed, DriverTooOld};
pub use route::{
    ptx_fallbacks, select, ArtifactKind, DeviceId, NoRoute, Route, RoutePolicy, Selected,
    FORCE_ROUTE_ENV,
};
pub use tensor_map::{Swizzle, TensorMap, Tiled2d, TmaElem, MAX_BOX};
pub use vector::{Bf16, U8x16, F16};

#[cfg(feature = "driver")]
pub use gpu::{DeviceInfo, Gpu};
#[cfg(feature = "driver")]
pub use graph::Graph;
#[cfg(feature = "driver")]
pub use kernel::Kernel;
