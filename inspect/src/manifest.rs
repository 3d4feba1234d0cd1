//! `cuda/kernels.toml`: per entry point, how it is launched (typed launcher parameters,
//! block sizes to report occupancy for) and its contract (what its resources and SASS
//! must satisfy).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Which kernel files are built for arch-specific variants; absent: every file.
    pub arch_specific: Option<ArchSpecific>,
    /// Keyed by entry-point name: the `extern "C"` symbol or the demangled C++ name.
    #[serde(default)]
    pub kernels: BTreeMap<String, KernelEntry>,
}

/// `[arch_specific]`: the kernel files that use arch-specific instructions (wgmma,
/// setmaxnreg). Only they are compiled for arch-specific variants such as `sm_90a`; every
/// other file is compiled for the plain arch (`sm_90`) instead, which gives the same code.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchSpecific {
    /// File names under `cuda/`, e.g. `gemm_wgmma.cu`.
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelEntry {
    /// Kernel file under `cuda/` that defines the entry point, e.g. `copy.cu`.
    pub file: String,
    /// Parameters in order, as `name: type`; types are `*const T`, `*mut T`
    /// (T: u8 u16 u32 u64 i32 f32 f64 bf16 f16 u8x16), scalars `u32 i32 u64 i64 f32 f64`,
    /// or a struct from `cuda/include/cubins/params.h` passed by value.
    #[serde(default)]
    pub params: Vec<String>,
    /// Block sizes the kernel is launched with; occupancy is reported for each.
    #[serde(default)]
    pub block_sizes: Vec<u32>,
    /// Dynamic shared memory per block at launch, bytes (for occupancy).
    #[serde(default)]
    pub dynamic_smem_bytes: u32,
    #[serde(default)]
    pub contract: Contract,
    /// Per-arch overrides of the contract, keyed by arch (`sm_80`).
    #[serde(default)]
    pub arch: BTreeMap<String, Contract>,
}

impl KernelEntry {
    /// Dynamic shared memory per block on `arch` (`sm_86`).
    pub fn dynamic_smem_on(&self, arch: &str) -> u32 {
        self.arch
            .get(arch)
            .and_then(|c| c.dynamic_smem_bytes)
            .unwrap_or(self.dynamic_smem_bytes)
    }
}

/// Bounds a kernel's build must satisfy. Unset fields are not checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    pub max_registers: Option<u32>,
    /// `false`: any spill store or load fails the contract.
    pub spills: Option<bool>,
    pub max_stack_bytes: Option<u32>,
    /// Opcode classes that must appear at least once (`LDGSTS`, `HMMA`, `LDG.128`).
    pub require: Option<Vec<String>>,
    /// Opcode classes that must not appear (`LDL`, `STL`).
    pub forbid: Option<Vec<String>>,
    /// Minimum resident blocks per SM at a block size.
    pub min_blocks_per_sm: Option<MinBlocks>,
    /// A reviewed exception: the violations named in `allow` do not fail the build,
    /// and `reason` says why they are acceptable.
    pub exception: Option<Exception>,
    /// `warn`: violations print but do not fail the build.
    pub level: Option<Level>,
    /// Not a rule but a launch fact: the dynamic shared memory the kernel takes on this arch,
    /// where its ring differs from the entry's `dynamic_smem_bytes` (set under an arch table).
    pub dynamic_smem_bytes: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinBlocks {
    pub block_size: u32,
    pub blocks: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exception {
    /// Rule names this exception covers: `max_registers`, `spills`, `max_stack_bytes`,
    /// `require`, `forbid`, `min_blocks_per_sm`.
    pub allow: Vec<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warn,
}

#[derive(Debug)]
pub struct ManifestError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ManifestError {}

impl Manifest {
    pub fn parse(text: &str, path: &str) -> Result<Manifest, ManifestError> {
        toml::from_str(text).map_err(|e| ManifestError {
            path: path.to_string(),
            message: e.to_string(),
        })
    }

    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Manifest::parse(&text, &path.display().to_string())
    }

    /// The files declared arch-specific; `None` when the manifest declares none, so every file
    /// is built for every selected arch as given (a standalone file, an older manifest).
    pub fn arch_specific_files(&self) -> Option<&[String]> {
        self.arch_specific.as_ref().map(|a| a.files.as_slice())
    }

    /// Whether kernel file `file` (`copy.cu`) is built for arch-specific variants.
    pub fn uses_arch_specific(&self, file: &str) -> bool {
        self.arch_specific_files()
            .map_or(true, |files| files.iter().any(|f| f == file))
    }

    /// The contract for `kernel` on `arch`: the per-arch table's set fields override the base.
    pub fn contract_for(&self, kernel: &str, arch: &str) -> Option<Contract> {
        let entry = self.kernels.get(kernel)?;
        let mut c = entry.contract.clone();
        if let Some(o) = entry.arch.get(arch) {
            macro_rules! over {
                ($($f:ident),*) => { $( if o.$f.is_some() { c.$f = o.$f.clone(); } )* };
            }
            over!(
                max_registers,
                spills,
                max_stack_bytes,
                require,
                forbid,
                min_blocks_per_sm,
                exception,
                level
            );
        }
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_specific_files_are_declared_once() {
        let m = Manifest::parse(
            "[arch_specific]\nfiles = [\"gemm_wgmma.cu\"]\n\n[kernels.copy_vec16]\nfile = \"copy.cu\"\n",
            "kernels.toml",
        )
        .unwrap();
        assert_eq!(
            m.arch_specific_files(),
            Some(&["gemm_wgmma.cu".to_string()][..])
        );
        assert!(m.uses_arch_specific("gemm_wgmma.cu"));
        assert!(!m.uses_arch_specific("copy.cu"));
        // Without the table every file keeps every selected arch.
        let m = Manifest::parse("[kernels.copy_vec16]\nfile = \"copy.cu\"\n", "k.toml").unwrap();
        assert_eq!(m.arch_specific_files(), None);
        assert!(m.uses_arch_specific("copy.cu"));
        let e = Manifest::parse("[arch_specific]\nfile = [\"x.cu\"]\n", "k.toml").unwrap_err();
        assert!(e.to_string().contains("unknown field `file`"), "{e}");
    }
}
