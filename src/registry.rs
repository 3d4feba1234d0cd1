//! The embedded registry: every kernel file a crate was built with, its artifacts and
//! their identity. Runtime-agnostic: nothing here needs a GPU, a driver or `cust`, so a
//! runtime on `cudarc` or raw driver calls can load these bytes itself.

use std::fmt;

/// One compiled kernel file (`cuda/<name>.cu`).
#[derive(Debug)]
pub struct KernelFile {
    /// File stem: `copy` for `cuda/copy.cu`.
    pub name: &'static str,
    /// SHA-256 over the source and every header it includes from `cuda/`.
    pub source_digest: &'static str,
    /// CUDA toolkit that built it (`13.0.88`).
    pub toolkit: &'static str,
    /// nvcc flags shared by every artifact of this build (target flags aside).
    pub flags: &'static [&'static str],
    /// Whether this build compiled the artifacts or embedded verified prebuilt ones.
    pub origin: Origin,
    /// One cubin per built arch, ascending.
    pub cubins: &'static [Cubin],
    /// PTX for the lowest built arch: the driver-JIT fallback.
    pub ptx: Option<Ptx>,
    /// Entry points (`__global__` functions) the file defines.
    pub entry_points: &'static [EntryPoint],
}

/// Where a build's artifacts came from. Either way they are byte-identical to what nvcc makes
/// of the same sources, toolkit and flags in any checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Compiled by nvcc in this crate's build.
    Nvcc,
    /// Prebuilt artifacts (`CUBINS_PREBUILT`), checked at build time against their recorded
    /// SHA-256 and against the kernel sources this crate ships.
    Prebuilt,
}

impl Origin {
    /// `nvcc` or `prebuilt`, as STAMP lines print it.
    pub fn label(self) -> &'static str {
        match self {
            Origin::Nvcc => "nvcc",
            Origin::Prebuilt => "prebuilt",
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Machine code for one arch.
#[derive(Debug)]
pub struct Cubin {
    /// `sm_90`, `sm_90a`.
    pub arch: &'static str,
    /// Compute capability times ten (90 for sm_90 and sm_90a).
    pub cc: u32,
    /// Arch-specific (`sm_90a`): runs only on exactly this compute capability.
    pub arch_specific: bool,
    pub bytes: &'static [u8],
    pub sha256: &'static str,
    /// Per entry point resource facts for this arch.
    pub resources: &'static [Resources],
}

/// PTX text for a virtual arch.
#[derive(Debug)]
pub struct Ptx {
    /// `compute_80`.
    pub arch: &'static str,
    pub cc: u32,
    /// NUL-terminated, as `cuModuleLoadData` wants it; [`Ptx::text`] strips the NUL.
    pub bytes_with_nul: &'static [u8],
    pub sha256: &'static str,
}

impl Ptx {
    pub fn text(&self) -> &'static str {
        let b = &self.bytes_with_nul[..self.bytes_with_nul.len().saturating_sub(1)];
        std::str::from_utf8(b).unwrap_or("")
    }
}

/// An entry point's symbol and parameter table.
#[derive(Debug)]
pub struct EntryPoint {
    pub mangled: &'static str,
    pub demangled: &'static str,
    /// (offset, size) in bytes of each parameter, from the cubin's `.nv.info` table.
    pub params: &'static [(u32, u32)],
}

/// Resource facts of one entry point on one arch (from ptxas and cuobjdump).
#[derive(Debug)]
pub struct Resources {
    pub mangled: &'static str,
    pub registers: u32,
    pub static_smem_bytes: u32,
    pub stack_bytes: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    /// `__launch_bounds__` limit, when the kernel declares one.
    pub max_threads_per_block: Option<u32>,
    /// (block size, dynamic smem bytes, resident blocks per SM) at the declared launch shapes.
    pub occupancy: &'static [(u32, u32, u32)],
}

/// How this crate was built, for messages and STAMP lines.
#[derive(Debug)]
pub struct BuildInfo {
    /// `Some(reason)` when kernels were not compiled (`DOCS_RS`, `CUBINS_NO_BUILD=1`).
    pub without_kernels: Option<&'static str>,
    pub toolkit: &'static str,
    /// Arches built, ascending (`sm_80`, `sm_90`).
    pub archs: &'static [&'static str],
    /// Where the artifacts came from (`None` without kernels).
    pub origin: Option<Origin>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The crate was built without compiling kernels.
    BuiltWithoutKernels { reason: &'static str },
    UnknownKernelFile {
        name: String,
        available: Vec<&'static str>,
    },
    UnknownEntryPoint {
        file: &'static str,
        name: String,
        available: Vec<&'static str>,
    },
    ArchNotBuilt {
        file: &'static str,
        arch: String,
        built: Vec<&'static str>,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::BuiltWithoutKernels { reason } => {
                write!(f, "cubins was built without kernels ({reason}); rebuild with a CUDA toolkit to embed them")
            }
            RegistryError::UnknownKernelFile { name, available } => {
                write!(
                    f,
                    "no kernel file `{name}`; built kernel files: {}",
                    list(available)
                )
            }
            RegistryError::UnknownEntryPoint {
                file: "*",
                name,
                available,
            } => write!(
                f,
                "no kernel file defines entry point `{name}`; entry points: {}",
                list(available)
            ),
            RegistryError::UnknownEntryPoint {
                file,
                name,
                available,
            } => write!(
                f,
                "kernel file `{file}` has no entry point `{name}`; it has: {}",
                list(available)
            ),
            RegistryError::ArchNotBuilt { file, arch, built } => {
                write!(
                    f,
                    "kernel file `{file}` was not built for {arch}; built: {}",
                    list(built)
                )
            }
        }
    }
}

/// `a, b, c`, or `none`.
fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

impl std::error::Error for RegistryError {}

/// A set of kernel files with the build that produced them: one crate's, in its
/// [`crate::Library`]. [`registry()`] is cubins' own.
#[derive(Debug, Clone, Copy)]
pub struct Registry {
    pub info: &'static BuildInfo,
    pub files: &'static [KernelFile],
}

/// The registry of cubins' own kernels.
pub fn registry() -> Registry {
    crate::kernels::LIBRARY.registry
}

/// How the crate was built; `Display` prints it with the kernel files.
pub fn build_info() -> BuildSummary {
    registry().summary()
}

/// A registry's [`BuildInfo`] (which it derefs to) and its kernel files. `Display` prints
/// toolkit, origin, arches, nvcc flags and kernel files, or why the build has none.
#[derive(Debug, Clone, Copy)]
pub struct BuildSummary {
    registry: Registry,
}

impl std::ops::Deref for BuildSummary {
    type Target = BuildInfo;

    fn deref(&self) -> &BuildInfo {
        self.registry.info
    }
}

impl fmt::Display for BuildSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.registry.info;
        if let Some(reason) = info.without_kernels {
            return write!(f, "built without kernels: {reason}");
        }
        let origin = info.origin.map_or("unknown", Origin::label);
        writeln!(
            f,
            "CUDA toolkit {}, origin {origin}, arches {}",
            info.toolkit,
            info.archs.join(", ")
        )?;
        // Every artifact of one build shares its flags; a registry assembled otherwise
        // prints each distinct set.
        let mut flag_sets: Vec<&[&str]> = Vec::new();
        for file in self.registry.files {
            if !flag_sets.contains(&file.flags) {
                flag_sets.push(file.flags);
            }
        }
        let flags: Vec<String> = flag_sets.iter().map(|set| set.join(" ")).collect();
        writeln!(f, "nvcc flags: {}", flags.join(" | "))?;
        let names: Vec<&str> = self.registry.files.iter().map(|file| file.name).collect();
        write!(f, "kernel files ({}): {}", names.len(), names.join(", "))
    }
}

/// Every kernel file, sorted by name. Errors if the crate was built without kernels.
pub fn kernel_files() -> Result<&'static [KernelFile], RegistryError> {
    registry().kernel_files()
}

/// The kernel file `name` (`copy` for `cuda/copy.cu`).
pub fn kernel_file(name: &str) -> Result<&'static KernelFile, RegistryError> {
    registry().kernel_file(name)
}

/// Finds the kernel file that defines entry point `name` (mangled or demangled).
pub fn find_entry_point(
    name: &str,
) -> Result<(&'static KernelFile, &'static EntryPoint), RegistryError> {
    registry().find_entry_point(name)
}

impl Registry {
    /// Its build facts with its kernel files, for printing.
    pub fn summary(&self) -> BuildSummary {
        BuildSummary { registry: *self }
    }

    pub fn kernel_files(&self) -> Result<&'static [KernelFile], RegistryError> {
        match self.info.without_kernels {
            Some(reason) => Err(RegistryError::BuiltWithoutKernels { reason }),
            None => Ok(self.files),
        }
    }

    pub fn kernel_file(&self, name: &str) -> Result<&'static KernelFile, RegistryError> {
        let files = self.kernel_files()?;
        files
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| RegistryError::UnknownKernelFile {
                name: name.to_string(),
                available: files.iter().map(|f| f.name).collect(),
            })
    }

    pub fn find_entry_point(
        &self,
        name: &str,
    ) -> Result<(&'static KernelFile, &'static EntryPoint), RegistryError> {
        let files = self.kernel_files()?;
        for f in files {
            if let Some(e) = f
                .entry_points
                .iter()
                .find(|e| e.mangled == name || e.demangled == name)
            {
                return Ok((f, e));
            }
        }
        Err(RegistryError::UnknownEntryPoint {
            file: "*",
            name: name.to_string(),
            available: files
                .iter()
                .flat_map(|f| f.entry_points.iter().map(|e| e.demangled))
                .collect(),
        })
    }
}

impl KernelFile {
    /// The cubin built for exactly `arch` (`sm_90`).
    pub fn cubin(&self, arch: &str) -> Result<&'static Cubin, RegistryError> {
        self.cubins
            .iter()
            .find(|c| c.arch == arch)
            .ok_or_else(|| RegistryError::ArchNotBuilt {
                file: self.name,
                arch: arch.to_string(),
                built: self.cubins.iter().map(|c| c.arch).collect(),
            })
    }

    pub fn entry_point(&self, name: &str) -> Result<&'static EntryPoint, RegistryError> {
        self.entry_points
            .iter()
            .find(|e| e.mangled == name || e.demangled == name)
            .ok_or_else(|| RegistryError::UnknownEntryPoint {
                file: self.name,
                name: name.to_string(),
                available: self.entry_points.iter().map(|e| e.demangled).collect(),
            })
    }
}

impl Cubin {
    pub fn resources(&self, mangled: &str) -> Option<&'static Resources> {
        self.resources.iter().find(|r| r.mangled == mangled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_KERNELS: BuildInfo = BuildInfo {
        without_kernels: Some("CUBINS_NO_BUILD=1 was set at build time"),
        toolkit: "",
        archs: &[],
        origin: None,
    };

    static BUILT: BuildInfo = BuildInfo {
        without_kernels: None,
        toolkit: "13.0.88",
        archs: &["sm_80", "sm_90"],
        origin: Some(Origin::Prebuilt),
    };

    const fn file(name: &'static str, flags: &'static [&'static str]) -> KernelFile {
        KernelFile {
            name,
            source_digest: "",
            toolkit: "13.0.88",
            flags,
            origin: Origin::Prebuilt,
            cubins: &[],
            ptx: None,
            entry_points: &[],
        }
    }

    static FILES: &[KernelFile] = &[
        file("copy", &["-O3", "-lineinfo"]),
        file("rmsnorm", &["-O3", "-lineinfo"]),
    ];

    #[test]
    fn build_info_prints_toolkit_origin_arches_flags_and_files() {
        let r = Registry {
            info: &BUILT,
            files: FILES,
        };
        assert_eq!(
            r.summary().to_string(),
            "CUDA toolkit 13.0.88, origin prebuilt, arches sm_80, sm_90\n\
             nvcc flags: -O3 -lineinfo\n\
             kernel files (2): copy, rmsnorm"
        );
        assert_eq!(r.summary().toolkit, "13.0.88", "derefs to BuildInfo");
        let empty = Registry {
            info: &NO_KERNELS,
            files: &[],
        };
        assert_eq!(
            empty.summary().to_string(),
            "built without kernels: CUBINS_NO_BUILD=1 was set at build time"
        );
    }

    #[test]
    fn registry_errors_name_what_was_asked_and_what_exists() {
        let r = Registry {
            info: &BUILT,
            files: FILES,
        };
        assert_eq!(
            r.kernel_file("gemm").unwrap_err().to_string(),
            "no kernel file `gemm`; built kernel files: copy, rmsnorm"
        );
        assert_eq!(
            r.kernel_file("copy")
                .unwrap()
                .cubin("sm_89")
                .unwrap_err()
                .to_string(),
            "kernel file `copy` was not built for sm_89; built: none"
        );
        assert_eq!(
            r.find_entry_point("copy_vec16").unwrap_err().to_string(),
            "no kernel file defines entry point `copy_vec16`; entry points: none"
        );
        let e: &dyn std::error::Error = &RegistryError::BuiltWithoutKernels { reason: "DOCS_RS" };
        assert!(e.to_string().contains("built without kernels (DOCS_RS)"));
    }

    #[test]
    fn a_build_without_kernels_says_why_on_every_lookup() {
        let r = Registry {
            info: &NO_KERNELS,
            files: &[],
        };
        for err in [
            r.kernel_files().unwrap_err(),
            r.kernel_file("copy").unwrap_err(),
            r.find_entry_point("copy_vec16").unwrap_err(),
        ] {
            let msg = err.to_string();
            assert!(
                msg.contains("built without kernels") && msg.contains("CUBINS_NO_BUILD=1"),
                "{msg}"
            );
        }
    }
}
