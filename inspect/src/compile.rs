//! Compiles kernel files through the build pipeline and inspects every cubin, outside the
//! build script: for the CLI (`report`, `diff` of git revisions, standalone `.cu` files) and
//! for tests. The result has the shape of the build's `reports.json`.

use crate::analyze::{analyze_cubin, AnalyzeError};
use crate::arch::Arch;
use crate::build_script::{CubinEntry, FileEntry, ReportsFile};
use crate::manifest::Manifest;
use crate::pipeline::{self, BuildError, BuildOutput, Plan};
use crate::toolchain::cache::Cache;
use crate::toolchain::Toolchain;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum InspectError {
    Io {
        what: String,
        error: std::io::Error,
    },
    Build(BuildError),
    Analyze {
        file: PathBuf,
        arch: Arch,
        error: AnalyzeError,
    },
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InspectError::Io { what, error } => write!(f, "{what}: {error}"),
            InspectError::Build(e) => e.fmt(f),
            InspectError::Analyze { file, arch, error } => {
                write!(f, "inspecting {} for {arch}: {error}", file.display())
            }
        }
    }
}

impl std::error::Error for InspectError {}

/// What to compile.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// Folder of kernel files (its `include/` is on the include path).
    pub source_dir: &'a Path,
    /// Only these files of `source_dir` (all `*.cu` when empty).
    pub only: Vec<PathBuf>,
    pub archs: Vec<Arch>,
    /// Flags added after the pipeline's own.
    pub extra_flags: Vec<String>,
    /// Artifact cache folder.
    pub cache_dir: &'a Path,
    pub jobs: usize,
}

impl Request<'_> {
    pub fn plan(&self) -> Result<Plan, InspectError> {
        let mut plan = Plan::discover(self.source_dir, self.archs.clone()).map_err(|error| {
            InspectError::Io {
                what: format!("reading {}", self.source_dir.display()),
                error,
            }
        })?;
        if !self.only.is_empty() {
            plan.sources
                .retain(|s| self.only.iter().any(|o| s.file_name() == o.file_name()));
        }
        plan.flags.extend(self.extra_flags.iter().cloned());
        Ok(plan)
    }
}

/// Compiles and inspects; returns the build (artifact paths, tool outputs) and its reports.
pub fn compile_and_inspect(
    tc: &Toolchain,
    req: &Request,
    manifest: &Manifest,
) -> Result<(BuildOutput, ReportsFile), InspectError> {
    let plan = req.plan()?;
    let cache = Cache::new(req.cache_dir.to_path_buf()).map_err(|error| InspectError::Io {
        what: format!("creating the cache {}", req.cache_dir.display()),
        error,
    })?;
    let build = pipeline::build(tc, &plan, &cache, req.jobs.max(1)).map_err(InspectError::Build)?;
    let reports = reports_of(tc, &build, manifest)?;
    Ok((build, reports))
}

/// Inspects every cubin of a finished build.
pub fn reports_of(
    tc: &Toolchain,
    build: &BuildOutput,
    manifest: &Manifest,
) -> Result<ReportsFile, InspectError> {
    let mut files = Vec::new();
    for f in &build.files {
        let mut cubins = Vec::new();
        for c in &f.cubins {
            let report = analyze_cubin(c.arch, &c.outputs, manifest).map_err(|error| {
                InspectError::Analyze {
                    file: f.source.clone(),
                    arch: c.arch,
                    error,
                }
            })?;
            cubins.push(CubinEntry {
                sha256: c.sha256.clone(),
                report,
            });
        }
        files.push(FileEntry {
            name: f.name.clone(),
            source_digest: f.source_digest.clone(),
            cubins,
        });
    }
    Ok(ReportsFile {
        toolkit: tc.version.full.clone(),
        toolkit_major_minor: tc.version.major_minor(),
        files,
    })
}
