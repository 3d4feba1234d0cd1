//! The runtime's one error type. Messages name what was asked, what the machine has and
//! what to do; nothing here calls the driver, so an error formats even where no driver loads.

use super::launch::LaunchError;
use super::preflight::{cuda_text, driver_needed, DriverTooOld};
use super::route::{ArtifactKind, NoRoute};
use crate::registry::RegistryError;
use std::fmt;

/// `CUDA_ERROR_STUB_LIBRARY`: what every entry point of a link stub returns.
pub const CUDA_ERROR_STUB_LIBRARY: u32 = 34;
/// `CUDA_ERROR_NO_DEVICE`.
pub const CUDA_ERROR_NO_DEVICE: u32 = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The process loaded a stub `libcuda.so.1`, not the NVIDIA driver.
    NoDriver {
        call: &'static str,
    },
    /// No CUDA driver library could be loaded (`tried`: each name and the loader's reason).
    DriverNotFound {
        tried: String,
    },
    /// The driver loaded but shows no usable device.
    NoDevice {
        detail: String,
    },
    /// A driver call failed.
    Driver {
        call: &'static str,
        code: u32,
        name: String,
        context: String,
    },
    Registry(RegistryError),
    NoRoute(NoRoute),
    /// The driver is older than the artifact a route loads needs.
    DriverTooOld(DriverTooOld),
    Launch(LaunchError),
    /// A kernel name that has no typed launcher (not in `cuda/kernels.toml`).
    UnknownKernel {
        name: String,
        available: Vec<&'static str>,
    },
    /// An environment variable the runtime reads holds a value it does not accept.
    BadEnv {
        var: &'static str,
        value: String,
        expected: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver { call } => write!(
                f,
                "no CUDA driver: {call} returned CUDA_ERROR_STUB_LIBRARY ({CUDA_ERROR_STUB_LIBRARY}): this process \
                 loaded the build stub (target/cuda-stub from `cargo xtask link-stub`), not the NVIDIA \
                 driver's libcuda.so.1; run it on a machine with the driver, without the stub folder on \
                 LD_LIBRARY_PATH{}",
                driver_wanted()
            ),
            Error::DriverNotFound { tried } => write!(
                f,
                "no CUDA driver: the NVIDIA driver's libcuda.so.1 could not be loaded ({tried}); install \
                 the NVIDIA driver{}, or run where it is installed",
                driver_wanted()
            ),
            Error::NoDevice { detail } => write!(
                f,
                "no CUDA device: {detail}; check that nvidia-smi lists the device and that \
                 CUDA_VISIBLE_DEVICES (when set) names it"
            ),
            Error::Driver { call, code, name, context } => {
                write!(f, "{call} failed with {name} ({code})")?;
                if !context.is_empty() {
                    write!(f, " {context}")?;
                }
                Ok(())
            }
            Error::Registry(e) => e.fmt(f),
            Error::NoRoute(e) => e.fmt(f),
            Error::DriverTooOld(e) => e.fmt(f),
            Error::Launch(e) => write!(f, "launch rejected: {e}"),
            Error::UnknownKernel { name, available } => write!(
                f,
                "no typed launcher for kernel `{name}` (not declared in cuda/kernels.toml); kernels with launchers: {}",
                available.join(", ")
            ),
            Error::BadEnv { var, value, expected } => write!(f, "{var}={value:?} is not understood; expected {expected}"),
        }
    }
}

// Display forwards to the wrapped error's message, so `source` stays `None` (a chain would
// print it twice).
impl std::error::Error for Error {}

impl std::error::Error for NoRoute {}

/// `" (cubins' kernels, built by CUDA 13.0.88, need a CUDA 13.0 driver: ...)"`, or nothing
/// for a build without kernels.
fn driver_wanted() -> String {
    let toolkit = crate::build_info().toolkit;
    match driver_needed(toolkit, ArtifactKind::Cubin) {
        Some(need) => format!(
            " (cubins' kernels, built by CUDA {toolkit}, need a CUDA {} driver or newer{})",
            cuda_text(need.version),
            need.linux_driver
                .map(|d| format!(", on Linux {d} or newer"))
                .unwrap_or_default()
        ),
        None => String::new(),
    }
}

impl From<RegistryError> for Error {
    fn from(e: RegistryError) -> Self {
        Error::Registry(e)
    }
}

impl From<NoRoute> for Error {
    fn from(e: NoRoute) -> Self {
        Error::NoRoute(e)
    }
}

impl From<DriverTooOld> for Error {
    fn from(e: DriverTooOld) -> Self {
        Error::DriverTooOld(e)
    }
}

impl From<LaunchError> for Error {
    fn from(e: LaunchError) -> Self {
        Error::Launch(e)
    }
}

impl Error {
    /// Turns a failed driver status into an error: the stub's status and "no device" get
    /// their own variants, because they are what a machine without a GPU answers.
    pub fn from_status(
        call: &'static str,
        code: u32,
        name: &str,
        context: impl Into<String>,
    ) -> Error {
        match code {
            CUDA_ERROR_STUB_LIBRARY => Error::NoDriver { call },
            CUDA_ERROR_NO_DEVICE => Error::NoDevice {
                detail: format!(
                    "{call} returned CUDA_ERROR_NO_DEVICE ({code}); CUDA_VISIBLE_DEVICES={}",
                    std::env::var("CUDA_VISIBLE_DEVICES")
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_else(|_| "(unset)".into())
                ),
            },
            _ => Error::Driver {
                call,
                code,
                name: name.to_string(),
                context: context.into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stub_and_no_device_statuses_get_their_own_messages() {
        let e = Error::from_status("cuInit", 34, "CUDA_ERROR_STUB_LIBRARY", "");
        assert_eq!(e, Error::NoDriver { call: "cuInit" });
        let m = e.to_string();
        assert!(
            m.starts_with("no CUDA driver: cuInit returned CUDA_ERROR_STUB_LIBRARY (34)"),
            "{m}"
        );
        assert!(m.contains("loaded the build stub"), "{m}");
        let e = Error::from_status("cuInit", 100, "CUDA_ERROR_NO_DEVICE", "");
        assert!(
            e.to_string()
                .starts_with("no CUDA device: cuInit returned CUDA_ERROR_NO_DEVICE (100)"),
            "{e}"
        );
        let e = Error::from_status(
            "cuModuleLoadData",
            218,
            "CUDA_ERROR_INVALID_PTX",
            "loading copy (PTX compute_80)",
        );
        assert_eq!(e.to_string(), "cuModuleLoadData failed with CUDA_ERROR_INVALID_PTX (218) loading copy (PTX compute_80)");
    }
}
