//! The typed launchers generated at build time from `cuda/kernels.toml` (`OUT_DIR/launchers.rs`):
//! [`KERNELS`], and per kernel a marker type (`CopyVec16` for `copy_vec16`) whose
//! `Kernel<'_, CopyVec16>::launch` takes the kernel's parameters as typed arguments. Each
//! launcher's parameter count, offsets and sizes were checked against every cubin's own
//! parameter table when the crate was built.

/// A kernel with a typed launcher.
#[derive(Debug)]
pub struct KernelInfo {
    /// Entry-point name as declared in kernels.toml.
    pub name: &'static str,
    /// Symbol looked up in the module (mangled for C++ entry points).
    pub symbol: &'static str,
    /// Kernel file stem (`copy` for `cuda/copy.cu`).
    pub file: &'static str,
    pub params: &'static [ParamInfo],
}

/// One parameter: its declaration and place in the parameter buffer (natural C alignment).
#[derive(Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    /// As declared: `*const u8x16`, `u64`, a params.h struct name.
    pub ty: &'static str,
    pub offset: u32,
    pub size: u32,
}

/// Implemented by each generated marker type.
pub trait KernelSpec {
    /// Position in [`KERNELS`].
    const INDEX: usize;

    fn info() -> &'static KernelInfo {
        &KERNELS[Self::INDEX]
    }
}

/// The launcher table entry for `name`.
pub fn kernel_info(name: &str) -> Result<&'static KernelInfo, super::Error> {
    KERNELS
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| super::Error::UnknownKernel {
            name: name.to_string(),
            available: KERNELS.iter().map(|k| k.name).collect(),
        })
}

include!(concat!(env!("OUT_DIR"), "/launchers.rs"));
