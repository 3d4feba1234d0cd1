//! cuBLAS opened at run time from the machine's CUDA (no link-time dependency), with the
//! library path, version, compute type and math mode of every call on record.
//!
//! cuBLAS works in the context current on the calling thread; the harness makes the device's
//! primary context current (the one `cust::context::Context::new` retains), so cuBLAS and
//! the crate's kernels share one context and one stream. `Session` checks this at start.

use super::driver::Result;
use crate::harness::host::gemm::{GemmTypes, RowMajorGemm};
use cust::memory::DeviceBuffer;
use cust::stream::Stream;
use libloading::Library;
use std::mem::ManuallyDrop;
use std::os::raw::{c_int, c_void};

type Handle = *mut c_void;
type CreateFn = unsafe extern "C" fn(*mut Handle) -> c_int;
type DestroyFn = unsafe extern "C" fn(Handle) -> c_int;
type SetStreamFn = unsafe extern "C" fn(Handle, *mut c_void) -> c_int;
type SetMathModeFn = unsafe extern "C" fn(Handle, c_int) -> c_int;
type SetWorkspaceFn = unsafe extern "C" fn(Handle, *mut c_void, usize) -> c_int;
type GetPropertyFn = unsafe extern "C" fn(c_int, *mut c_int) -> c_int;
#[rustfmt::skip]
type GemmExFn = unsafe extern "C" fn(
    Handle, c_int, c_int, c_int, c_int, c_int,
    *const c_void, *const c_void, c_int, c_int, *const c_void, c_int, c_int,
    *const c_void, *mut c_void, c_int, c_int, c_int, c_int,
) -> c_int;

/// `CUBLAS_GEMM_DEFAULT`: cuBLAS picks the algorithm, as a user of the library would get.
const CUBLAS_GEMM_DEFAULT: c_int = -1;

/// Where the library is looked for, in order; `$CUBINS_CUBLAS` (a path) comes first.
const CANDIDATES: &[&str] = &[
    "/usr/local/cuda/lib64/libcublas.so.13",
    "/usr/local/cuda/lib64/libcublas.so.12",
    "/usr/local/cuda/lib64/libcublas.so",
    "libcublas.so.13",
    "libcublas.so.12",
    "libcublas.so",
];

/// cuBLAS needs a workspace; giving it one up front keeps it from allocating during timing
/// or graph capture (32 MiB is what NVIDIA recommends for Hopper).
const WORKSPACE_BYTES: usize = 32 << 20;

fn status(call: &str, s: c_int) -> Result<()> {
    if s == 0 {
        Ok(())
    } else {
        Err(format!("{call} returned cublasStatus_t {s}"))
    }
}

pub struct Cublas {
    handle: Handle,
    gemm_ex: GemmExFn,
    set_math_mode: SetMathModeFn,
    destroy: DestroyFn,
    /// The file that loaded.
    pub path: String,
    /// `13.0.2`.
    pub version: String,
    _workspace: DeviceBuffer<u8>,
    // Keeps the function pointers valid. Never unloaded: a CUDA library closed before the
    // process exits can leave exit handlers pointing into unmapped code.
    _lib: ManuallyDrop<Library>,
}

impl Cublas {
    /// Loads cuBLAS, creates a handle bound to `stream` with its own workspace.
    pub fn open(stream: &Stream) -> Result<Cublas> {
        let mut tried = Vec::new();
        let env = std::env::var("CUBINS_CUBLAS")
            .ok()
            .filter(|p| !p.is_empty());
        let mut found = None;
        for name in env
            .iter()
            .map(String::as_str)
            .chain(CANDIDATES.iter().copied())
        {
            match unsafe { Library::new(name) } {
                Ok(lib) => {
                    found = Some((lib, name.to_string()));
                    break;
                }
                Err(e) => tried.push(format!("{name}: {e}")),
            }
        }
        let (lib, path) =
            found.ok_or_else(|| format!("cuBLAS not found; tried:\n  {}", tried.join("\n  ")))?;
        // SAFETY: the signatures match cublas_api.h; `_lib` keeps the pointers valid.
        unsafe {
            let sym = |name: &[u8]| -> Result<*mut c_void> {
                lib.get::<*mut c_void>(name)
                    .map(|s| *s)
                    .map_err(|e| format!("{path}: {e}"))
            };
            let create: CreateFn = std::mem::transmute(sym(b"cublasCreate_v2\0")?);
            let destroy: DestroyFn = std::mem::transmute(sym(b"cublasDestroy_v2\0")?);
            let set_stream: SetStreamFn = std::mem::transmute(sym(b"cublasSetStream_v2\0")?);
            let set_math_mode: SetMathModeFn = std::mem::transmute(sym(b"cublasSetMathMode\0")?);
            let set_workspace: SetWorkspaceFn =
                std::mem::transmute(sym(b"cublasSetWorkspace_v2\0")?);
            let get_property: GetPropertyFn = std::mem::transmute(sym(b"cublasGetProperty\0")?);
            let gemm_ex: GemmExFn = std::mem::transmute(sym(b"cublasGemmEx\0")?);

            let mut v = [0; 3];
            for (i, out) in v.iter_mut().enumerate() {
                status("cublasGetProperty", get_property(i as c_int, out))?;
            }
            let mut handle: Handle = std::ptr::null_mut();
            status("cublasCreate_v2", create(&mut handle))?;
            let workspace = DeviceBuffer::<u8>::zeroed(WORKSPACE_BYTES)
                .map_err(|e| format!("cuBLAS workspace: {e}"))?;
            let bound = status(
                "cublasSetStream_v2",
                set_stream(handle, stream.as_inner() as *mut c_void),
            )
            .and_then(|_| {
                status(
                    "cublasSetWorkspace_v2",
                    set_workspace(
                        handle,
                        workspace.as_device_ptr().as_raw() as *mut c_void,
                        WORKSPACE_BYTES,
                    ),
                )
            });
            if let Err(e) = bound {
                destroy(handle);
                return Err(e);
            }
            Ok(Cublas {
                handle,
                gemm_ex,
                set_math_mode,
                destroy,
                path,
                version: format!("{}.{}.{}", v[0], v[1], v[2]),
                _workspace: workspace,
                _lib: ManuallyDrop::new(lib),
            })
        }
    }

    /// Enqueues row-major `C = op(A) op(B)` (alpha 1, beta 0) with exactly `types`, on the
    /// handle's stream. Operands are raw bytes; their lengths are checked against the shape.
    pub fn gemm(
        &self,
        shape: &RowMajorGemm,
        types: &GemmTypes,
        a: &DeviceBuffer<u8>,
        b: &DeviceBuffer<u8>,
        c: &mut DeviceBuffer<u8>,
    ) -> Result<()> {
        shape.validate()?;
        let (na, nb, nc) = shape.elements();
        let (si, so) = (types.input.size_bytes(), types.output.size_bytes());
        for (name, have, need) in [
            ("A", a.len(), na * si),
            ("B", b.len(), nb * si),
            ("C", c.len(), nc * so),
        ] {
            if have < need {
                return Err(format!(
                    "cuBLAS GEMM {shape}: {name} holds {have} bytes, needs {need}"
                ));
            }
        }
        let args = shape.cublas_args();
        let (alpha, beta) = (1.0f32, 0.0f32);
        let ptr = |buf: &DeviceBuffer<u8>| buf.as_device_ptr().as_raw() as *mut c_void;
        // SAFETY: lengths were checked above; alpha/beta are fp32 host scalars, which every
        // CUBLAS_COMPUTE_32F* type takes; the handle is live and bound to a stream.
        unsafe {
            status(
                "cublasSetMathMode",
                (self.set_math_mode)(self.handle, types.math.cublas_value()),
            )?;
            status(
                "cublasGemmEx",
                (self.gemm_ex)(
                    self.handle,
                    args.transa as c_int,
                    args.transb as c_int,
                    args.m as c_int,
                    args.n as c_int,
                    args.k as c_int,
                    &alpha as *const f32 as *const c_void,
                    ptr(b),
                    types.input.cuda_value(),
                    args.ld_first as c_int,
                    ptr(a),
                    types.input.cuda_value(),
                    args.ld_second as c_int,
                    &beta as *const f32 as *const c_void,
                    ptr(c),
                    types.output.cuda_value(),
                    args.ldc as c_int,
                    types.compute.cublas_value(),
                    CUBLAS_GEMM_DEFAULT,
                ),
            )
        }
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        unsafe { (self.destroy)(self.handle) };
    }
}
