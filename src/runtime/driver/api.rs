//! The CUDA driver API as the runtime calls it: `libcuda.so.1` opened at run time and the
//! entry points it uses looked up by their exported (versioned) names. Nothing links
//! libcuda, so a crate using the runtime builds and starts on a machine without a driver
//! and says so at the first call, and any runtime (`cust`, `cudarc`) can sit on top.
//!
//! The types and constants are cuda.h's (CUDA 12.0 and later keep their values).

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

pub type CUresult = c_int;
pub type CUdevice = c_int;
pub type CUcontext = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUgraph = *mut c_void;
pub type CUgraphExec = *mut c_void;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;

/// `CUdevice_attribute` values.
pub mod device_attribute {
    use std::ffi::c_int;
    pub const MAX_THREADS_PER_BLOCK: c_int = 1;
    pub const MAX_BLOCK_DIM_X: c_int = 2;
    pub const MAX_BLOCK_DIM_Y: c_int = 3;
    pub const MAX_BLOCK_DIM_Z: c_int = 4;
    pub const MAX_GRID_DIM_X: c_int = 5;
    pub const MAX_GRID_DIM_Y: c_int = 6;
    pub const MAX_GRID_DIM_Z: c_int = 7;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 8;
    pub const MULTIPROCESSOR_COUNT: c_int = 16;
    pub const COMPUTE_CAPABILITY_MAJOR: c_int = 75;
    pub const COMPUTE_CAPABILITY_MINOR: c_int = 76;
    pub const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
}

/// `CUfunction_attribute` values.
pub mod function_attribute {
    use std::ffi::c_int;
    pub const MAX_THREADS_PER_BLOCK: c_int = 0;
    pub const SHARED_SIZE_BYTES: c_int = 1;
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
}

/// `CUjit_option` values.
pub const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
pub const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
/// `CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL`.
pub const CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: c_int = 1;

/// The library names tried, in order.
pub const LIBRARY_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

macro_rules! driver_api {
    (
        required {
            $( $name:ident = $symbol:literal : fn($($arg:ty),*); )*
        }
        optional {
            $( $opt:ident = $opt_symbol:literal : fn($($opt_arg:ty),*); )*
        }
    ) => {
        /// The driver's entry points, resolved once per process. The optional ones are
        /// `None` where the library lacks them (an older driver, the link stub); only the
        /// calls that need them fail, each saying which entry point is missing.
        pub struct Api {
            $( pub $name: unsafe extern "C" fn($($arg),*) -> CUresult, )*
            $( pub $opt: Option<unsafe extern "C" fn($($opt_arg),*) -> CUresult>, )*
            // Keeps the library mapped while the pointers above are used.
            _library: libloading::Library,
        }

        impl Api {
            fn load() -> Result<Api, String> {
                let mut tried = Vec::new();
                let library = LIBRARY_NAMES.iter().find_map(|name| {
                    // SAFETY: libcuda's initializers have no preconditions.
                    match unsafe { libloading::Library::new(name) } {
                        Ok(l) => Some(l),
                        Err(e) => { tried.push(e.to_string()); None }
                    }
                }).ok_or_else(|| tried.join("; "))?;
                // SAFETY: each symbol is looked up by its exported name and given the type
                // cuda.h declares for that (versioned) name.
                unsafe {
                    Ok(Api {
                        $( $name: *library.get($symbol).map_err(|e| format!(
                            "the driver library has no {}: {e}",
                            String::from_utf8_lossy(&$symbol[..$symbol.len() - 1])
                        ))?, )*
                        $( $opt: library.get($opt_symbol).ok().map(|s| *s), )*
                        _library: library,
                    })
                }
            }
        }
    };
}

driver_api! {
    required {
        cuInit = b"cuInit\0": fn(c_uint);
        cuDriverGetVersion = b"cuDriverGetVersion\0": fn(*mut c_int);
        cuGetErrorName = b"cuGetErrorName\0": fn(CUresult, *mut *const c_char);
        cuDeviceGetCount = b"cuDeviceGetCount\0": fn(*mut c_int);
        cuDeviceGet = b"cuDeviceGet\0": fn(*mut CUdevice, c_int);
        cuDeviceGetName = b"cuDeviceGetName\0": fn(*mut c_char, c_int, CUdevice);
        cuDeviceGetAttribute = b"cuDeviceGetAttribute\0": fn(*mut c_int, c_int, CUdevice);
        cuDevicePrimaryCtxRetain = b"cuDevicePrimaryCtxRetain\0": fn(*mut CUcontext, CUdevice);
        cuDevicePrimaryCtxRelease = b"cuDevicePrimaryCtxRelease_v2\0": fn(CUdevice);
        cuCtxCreate = b"cuCtxCreate_v2\0": fn(*mut CUcontext, c_uint, CUdevice);
        cuCtxDestroy = b"cuCtxDestroy_v2\0": fn(CUcontext);
        cuCtxGetCurrent = b"cuCtxGetCurrent\0": fn(*mut CUcontext);
        cuCtxSetCurrent = b"cuCtxSetCurrent\0": fn(CUcontext);
        cuCtxSynchronize = b"cuCtxSynchronize\0": fn();
        cuModuleLoadData = b"cuModuleLoadData\0": fn(*mut CUmodule, *const c_void);
        cuModuleLoadDataEx = b"cuModuleLoadDataEx\0":
            fn(*mut CUmodule, *const c_void, c_uint, *mut c_int, *mut *mut c_void);
        cuModuleGetFunction = b"cuModuleGetFunction\0": fn(*mut CUfunction, CUmodule, *const c_char);
        cuModuleUnload = b"cuModuleUnload\0": fn(CUmodule);
        cuFuncGetAttribute = b"cuFuncGetAttribute\0": fn(*mut c_int, c_int, CUfunction);
        cuFuncSetAttribute = b"cuFuncSetAttribute\0": fn(CUfunction, c_int, c_int);
        cuOccupancyMaxActiveBlocksPerMultiprocessor =
            b"cuOccupancyMaxActiveBlocksPerMultiprocessor\0": fn(*mut c_int, CUfunction, c_int, usize);
        cuLaunchKernel = b"cuLaunchKernel\0": fn(
            CUfunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CUstream,
            *mut *mut c_void, *mut *mut c_void
        );
        cuStreamBeginCapture = b"cuStreamBeginCapture_v2\0": fn(CUstream, c_int);
        cuStreamEndCapture = b"cuStreamEndCapture\0": fn(CUstream, *mut CUgraph);
        cuGraphInstantiateWithFlags = b"cuGraphInstantiateWithFlags\0":
            fn(*mut CUgraphExec, CUgraph, u64);
        cuGraphLaunch = b"cuGraphLaunch\0": fn(CUgraphExec, CUstream);
        cuGraphExecDestroy = b"cuGraphExecDestroy\0": fn(CUgraphExec);
        cuGraphDestroy = b"cuGraphDestroy\0": fn(CUgraph);
    }
    optional {
        // CUDA 12.0 and later.
        cuLaunchKernelEx = b"cuLaunchKernelEx\0": fn(
            *const c_void, CUfunction, *mut *mut c_void, *mut *mut c_void
        );
        cuTensorMapEncodeTiled = b"cuTensorMapEncodeTiled\0": fn(
            *mut crate::runtime::TensorMap, c_int, c_uint, *mut c_void, *const u64, *const u64,
            *const c_uint, *const c_uint, c_int, c_int, c_int, c_int
        );
    }
}

/// The driver, loaded on first use; the error says which libraries were tried and why
/// each failed.
pub fn api() -> Result<&'static Api, &'static str> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(Api::load).as_ref().map_err(String::as_str)
}
