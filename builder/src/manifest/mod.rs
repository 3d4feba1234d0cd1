//! `cuda/kernels.toml`: per entry point, how it is launched (typed launcher parameters,
//! block sizes to report occupancy for) and its contract (what its resources and SASS
//! must satisfy).
//!
//! [`Manifest`] is the expanded form everything downstream reads: one [`KernelEntry`] per
//! entry point. The file may say it shorter (docs/manifest.md): defaults, families expanded
//! over axes, arch groups, named sets and included fragments (`format` is that syntax,
//! `expand` turns it into entries). A file of plain `[kernels.NAME]` entries reads as is.

mod arch_groups;
mod condition;
mod expand;
mod family;
mod format;
mod include;
mod template;
#[cfg(test)]
mod tests;

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
    /// The family that made the entry (`None` for a plain `[kernels.NAME]` entry): what the
    /// launcher generator groups entries by. Not a field of the file.
    #[serde(skip)]
    pub family: Option<Provenance>,
}

/// The axis that names a family's element type (`bf16`, `f16`, `f32`): entries that differ
/// only in it share one generic launcher.
pub const DTYPE_AXIS: &str = "dtype";

/// Which family made an entry, and from which axis values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The family's key: `rope` for `[families.rope]`.
    pub family: String,
    /// Each axis's value, a table value by its `name`: `style = neox`, `dtype = bf16`.
    pub axes: BTreeMap<String, String>,
    /// The entry's name with the `dtype` axis's value written `{dtype}` (`rope_neox_{dtype}`),
    /// where the family has a `dtype` axis and its name uses it.
    pub dtype_pattern: Option<String>,
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
    /// `true`: the runtime launches the kernel as a programmatic dependent of the stream's
    /// previous kernel, so on sm_90 and later its SASS must wait on the grid dependency
    /// (`griddepcontrol.wait`, opcode class `ACQBULK`) before it touches memory.
    pub waits_on_grid: Option<bool>,
    /// `true`: the kernel lets the stream's next kernel launch before it finishes
    /// (`griddepcontrol.launch_dependents`, opcode class `PREEXIT`, on sm_90 and later), a
    /// launch overlap its measured speed depends on.
    pub releases_grid: Option<bool>,
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

impl ManifestError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> ManifestError {
        ManifestError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl Manifest {
    /// The manifest `text` (named `path` in errors), expanded. It has no folder to read
    /// fragments from, so an `include` is an error here: use [`Manifest::load`].
    pub fn parse(text: &str, path: &str) -> Result<Manifest, ManifestError> {
        let files = include::from_text(text, path, &include::NoFiles)?;
        expand::manifest(files)
    }

    /// The manifest at `path`, with the fragments it includes (relative to it), expanded.
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let files = include::from_file(path, &include::Disk)?;
        expand::manifest(files)
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
            c.overlay_rules(o);
        }
        Some(c)
    }
}

/// Names the rule fields of [`Contract`] to `$then!` (one list for every field-wise walk).
macro_rules! with_rule_fields {
    ($then:ident) => {
        $then!(
            max_registers,
            spills,
            max_stack_bytes,
            require,
            forbid,
            min_blocks_per_sm,
            waits_on_grid,
            releases_grid,
            exception,
            level
        )
    };
}

impl Contract {
    /// Takes every rule `o` sets; its launch fact (`dynamic_smem_bytes`) stays.
    fn overlay_rules(&mut self, o: &Contract) {
        macro_rules! take {
            ($($f:ident),*) => { $( if o.$f.is_some() { self.$f = o.$f.clone(); } )* };
        }
        with_rule_fields!(take);
    }

    /// Takes every field `o` sets, rules and launch fact: one layer of an entry over another.
    fn overlay(&mut self, o: &Contract) {
        self.overlay_rules(o);
        if o.dynamic_smem_bytes.is_some() {
            self.dynamic_smem_bytes = o.dynamic_smem_bytes;
        }
    }
}
