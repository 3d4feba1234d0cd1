//! Prebuilt artifacts: what a build with a CUDA toolkit exports per arch (cubins, PTX,
//! inspection reports, the kernels' declarations), so that a build without one embeds them,
//! after checking every byte against the export's manifest and the export's source closures
//! against the kernel sources the crate ships.
//!
//! An export folder holds one folder per artifact arch (`sm_90/`, `sm_90a/`, ...), each
//! complete on its own (it can ship alone): the artifacts and [`MANIFEST`]
//! ([`ArchManifest`]). A folder holds, per kernel file built for that arch:
//! - `<file>.<sm_XX>.cubin` and `<file>.<compute_XX>.ptx` (the PTX a build whose lowest arch for
//!   the file is this one embeds);
//! - `<file>.<sm_XX>.report.json`: the cubin's inspection report ([`CubinReport`]); the build
//!   recomputes its occupancy at the launch shapes its own `kernels.toml` declares;
//! - `<file>.<sm_XX>.decls.i`: the file's lines of `nvcc -E` for this arch, from which the
//!   launcher check reads the kernels' declared parameter types.
//!
//! The identity of a folder's artifacts is the toolkit, the compile procedure, the flags and
//! each file's source closure; artifacts compiled in any checkout are byte-identical
//! (`portable`), so a folder equals what a fresh build of the same sources makes.

use crate::analyze::{analyze_cubin, declared_occupancy};
use crate::arch::Arch;
use crate::launcher::signature::{self, Sources};
use crate::manifest::Manifest;
use crate::model::CubinReport;
use crate::occupancy::KernelResources;
use crate::pipeline::{self, Artifact, BuildOutput, KernelFileBuild, Plan};
use crate::shapes::LaunchShapes;
use crate::toolchain::cache::{sha256_hex, Cache};
use crate::toolchain::nvcc::OutputKind;
use crate::toolchain::{NvccNotFound, Toolchain, ToolchainError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The variable that points cubins' build at an export folder (absolute path); every crate
/// built through the builder has its own ([`Vars`]).
pub const ENV: &str = "CUBINS_PREBUILT";

/// Where a crate may hold an export folder of its own (`<crate>/prebuilt/`): used when no
/// nvcc is found.
pub const CRATE_DIR: &str = "prebuilt";

/// Each arch folder's manifest.
pub const MANIFEST: &str = "prebuilt.json";

/// The manifest's format; a build refuses any other.
pub const FORMAT: &str = "cubins-prebuilt-v1";

/// A crate's prebuilt variables, named after the crate: `CUBINS_PREBUILT` and
/// `CUBINS_EXPORT_PREBUILT` for cubins, `MY_KERNELS_PREBUILT` and
/// `MY_KERNELS_EXPORT_PREBUILT` for a crate `my-kernels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vars {
    /// The crate's package name (what `cargo build -p` takes).
    pub crate_name: String,
    /// An export folder the build embeds, verified, instead of compiling ([`ENV`] for cubins).
    pub prebuilt: String,
    /// A folder a build with a toolkit exports its kernels into, for each arch it selects.
    pub export: String,
}

impl Vars {
    pub fn of(crate_name: &str) -> Vars {
        let upper: String = crate_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        Vars {
            crate_name: crate_name.to_string(),
            prebuilt: format!("{upper}_PREBUILT"),
            export: format!("{upper}_EXPORT_PREBUILT"),
        }
    }

    /// The command that exports the crate's kernels for `archs` (as `CUBINS_ARCHS` takes
    /// them) into `dir`.
    pub fn export_command(&self, dir: &str, archs: &str) -> String {
        format!(
            "{}={dir} CUBINS_ARCHS=\"{archs}\" cargo build -p {}",
            self.export, self.crate_name
        )
    }

    /// What a build tells a user to run when the prebuilt artifacts in `dir` do not serve
    /// `arch`.
    fn how_to_rebuild(&self, dir: &Path, arch: &str) -> String {
        format!(
            "to export them again, run `{}` with a CUDA toolkit, in this version of {} or a \
             crate that depends on it; or build from source: unset {} and give nvcc (NVCC, \
             CUDA_HOME or PATH)",
            self.export_command(&dir.display().to_string(), arch.trim_start_matches("sm_")),
            self.crate_name,
            self.prebuilt
        )
    }
}

/// One arch folder's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchManifest {
    /// [`FORMAT`].
    pub format: String,
    /// `sm_90`: the folder's artifact arch.
    pub arch: String,
    /// `13.0.88`
    pub toolkit: String,
    /// `13.0`
    pub toolkit_major_minor: String,
    /// `portable::PROCEDURE` of the compiles.
    pub procedure: String,
    /// The nvcc flags that identify the build ([`Plan::flags_for_identity`]).
    pub flags: Vec<String>,
    /// One entry per kernel file built for this arch, by name.
    pub files: Vec<FileEntry>,
}

/// One kernel file's artifacts in an arch folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// `copy` for `copy.cu`.
    pub name: String,
    /// [`pipeline::source_digest`] of the closure below.
    pub source_digest: String,
    /// The kernel file and every header it includes from the kernel folder, relative to it.
    pub closure: Vec<Hashed>,
    pub cubin: Hashed,
    pub ptx: Hashed,
    pub report: Hashed,
    /// The declarations text, or why `nvcc -E` could not make it.
    pub declarations: Result<Hashed, String>,
}

/// A file and its SHA-256 (the path relative to its folder, with `/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hashed {
    pub path: String,
    pub sha256: String,
}

/// Why prebuilt artifacts cannot serve a build. Every message names the file and says how to
/// get artifacts that do.
#[derive(Debug)]
#[non_exhaustive]
pub enum PrebuiltError {
    /// The prebuilt variable is not an absolute path (a build script's working directory is
    /// not the user's).
    NotAbsolute { var: String, value: String },
    /// No folder for an arch the build needs.
    NoArch {
        dir: PathBuf,
        arch: String,
        available: Vec<String>,
    },
    /// A kernel file the build compiles has no artifacts in the arch's folder.
    MissingFile {
        manifest: PathBuf,
        file: String,
        arch: String,
    },
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A manifest or report that does not parse, or of another format.
    Malformed { path: PathBuf, problem: String },
    /// An artifact whose bytes differ from its recorded SHA-256.
    Tampered {
        path: PathBuf,
        manifest: PathBuf,
        recorded: String,
        found: String,
    },
    /// The export does not match the sources or flags of this build.
    Stale {
        manifest: PathBuf,
        arch: String,
        what: String,
    },
    /// Arch folders exported by different toolkits.
    MixedToolkits {
        first: (PathBuf, String),
        second: (PathBuf, String),
    },
}

impl PrebuiltError {
    fn export_dir(manifest: &Path) -> &Path {
        manifest
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."))
    }
}

impl PrebuiltError {
    /// The error as the build of the crate with `vars` shows it: its how-to names that
    /// crate's variables.
    pub fn message(&self, vars: &Vars) -> String {
        Shown(self, vars).to_string()
    }
}

/// cubins' own build's message.
impl fmt::Display for PrebuiltError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Shown(self, &Vars::of("cubins")).fmt(f)
    }
}

struct Shown<'a>(&'a PrebuiltError, &'a Vars);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vars = self.1;
        match self.0 {
            PrebuiltError::NotAbsolute { var, value } => write!(
                f,
                "{var}={value}: not an absolute path; the build script runs in the package's \
                 folder, not yours (in .cargo/config.toml: [env] {var} = {{ value = \
                 \"{value}\", relative = true }})"
            ),
            PrebuiltError::NoArch {
                dir,
                arch,
                available,
            } => write!(
                f,
                "no prebuilt {arch} artifacts: {} does not exist (prebuilt arches there: {}); {}",
                dir.join(arch).join(MANIFEST).display(),
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                },
                vars.how_to_rebuild(dir, arch)
            ),
            PrebuiltError::MissingFile {
                manifest,
                file,
                arch,
            } => write!(
                f,
                "{} has no artifacts of kernel file {file}.cu for {arch}: it was exported before \
                 that file (or its {arch} build) existed; {}",
                manifest.display(),
                vars.how_to_rebuild(PrebuiltError::export_dir(manifest), arch)
            ),
            PrebuiltError::Unreadable { path, error } => {
                write!(f, "cannot read prebuilt {}: {error}", path.display())
            }
            PrebuiltError::Malformed { path, problem } => {
                write!(f, "{} is not a {FORMAT} file: {problem}", path.display())
            }
            PrebuiltError::Tampered {
                path,
                manifest,
                recorded,
                found,
            } => {
                let arch = manifest
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                write!(
                    f,
                    "prebuilt artifact {} was modified after export: its SHA-256 is {found}, {} \
                     records {recorded}; {}",
                    path.display(),
                    manifest.display(),
                    vars.how_to_rebuild(PrebuiltError::export_dir(manifest), &arch)
                )
            }
            PrebuiltError::Stale {
                manifest,
                arch,
                what,
            } => write!(
                f,
                "prebuilt {arch} artifacts in {} are stale: {what}; {}",
                manifest.parent().unwrap_or(manifest).display(),
                vars.how_to_rebuild(PrebuiltError::export_dir(manifest), arch)
            ),
            PrebuiltError::MixedToolkits { first, second } => write!(
                f,
                "prebuilt arch folders from different toolkits cannot make one build: {} was \
                 exported with CUDA {}, {} with CUDA {}; export every arch with one toolkit",
                first.0.display(),
                first.1,
                second.0.display(),
                second.1
            ),
        }
    }
}

impl std::error::Error for PrebuiltError {}

/// What a build embeds from an export folder: the same build output, reports and
/// declarations a fresh build makes of the same sources.
#[derive(Debug)]
pub struct Loaded {
    pub build: BuildOutput,
    /// Per kernel file, per cubin (in `build`'s order), occupancy recomputed for this build's
    /// `kernels.toml`.
    pub reports: Vec<Vec<CubinReport>>,
    pub toolkit: String,
    pub toolkit_major_minor: String,
    /// As [`signature::of_build`] gives them for a fresh build.
    pub declarations: Sources,
    /// The arch folders read (for `cargo:rerun-if-changed`).
    pub folders: Vec<PathBuf>,
}

/// The export folder the variable `var` names, if set: an error unless it is absolute.
pub fn dir_from_env(
    env: &dyn Fn(&str) -> Option<String>,
    var: &str,
) -> Result<Option<PathBuf>, PrebuiltError> {
    match env(var).filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(v) if Path::new(&v).is_absolute() => Ok(Some(PathBuf::from(v))),
        Some(value) => Err(PrebuiltError::NotAbsolute {
            var: var.to_string(),
            value,
        }),
    }
}

/// Where a build's kernels come from.
#[derive(Debug)]
pub enum Source {
    /// Compiled by this nvcc.
    Nvcc(Toolchain),
    /// Loaded from an export folder: the one [`ENV`] names, or the crate's own
    /// ([`CRATE_DIR`]) when no nvcc was found (`no_nvcc` says what was tried).
    Prebuilt {
        dir: PathBuf,
        no_nvcc: Option<NvccNotFound>,
    },
}

/// Why a build has no source of kernels.
#[derive(Debug)]
#[non_exhaustive]
pub enum ChooseError {
    Prebuilt(PrebuiltError),
    Toolchain(ToolchainError),
}

impl fmt::Display for ChooseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChooseError::Prebuilt(e) => write!(f, "cubins: {e}"),
            // Toolchain messages name cubins themselves.
            ChooseError::Toolchain(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ChooseError {}

/// The crate's prebuilt variable if set; else the toolchain (the repo-local one looked for
/// under `toolchain_root`); else, when no nvcc exists at all, the crate's own export folder
/// if it has one. Any other toolchain problem is the error.
pub fn choose(
    env: &dyn Fn(&str) -> Option<String>,
    vars: &Vars,
    crate_dir: &Path,
    toolchain_root: &Path,
) -> Result<Source, ChooseError> {
    if let Some(dir) = dir_from_env(env, &vars.prebuilt).map_err(ChooseError::Prebuilt)? {
        return Ok(Source::Prebuilt { dir, no_nvcc: None });
    }
    match Toolchain::discover(toolchain_root) {
        Ok(tc) => Ok(Source::Nvcc(tc)),
        Err(ToolchainError::NotFound(e)) if !available(&crate_dir.join(CRATE_DIR)).is_empty() => {
            Ok(Source::Prebuilt {
                dir: crate_dir.join(CRATE_DIR),
                no_nvcc: Some(NvccNotFound {
                    vars: vars.clone(),
                    ..e
                }),
            })
        }
        Err(e) => Err(ChooseError::Toolchain(naming(e, vars))),
    }
}

/// `e`, whose advice names the prebuilt variables of the crate with `vars`.
pub(crate) fn naming(e: ToolchainError, vars: &Vars) -> ToolchainError {
    match e {
        ToolchainError::NotFound(n) => ToolchainError::NotFound(NvccNotFound {
            vars: vars.clone(),
            ..n
        }),
        other => other,
    }
}

/// The arch folders an export folder holds.
pub fn available(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let e = e.ok()?;
            e.path()
                .join(MANIFEST)
                .is_file()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

/// Loads and verifies the artifacts of `plan` from export folder `dir`: every job's artifact,
/// report and declarations, each against its SHA-256; every kernel file's closure against
/// the sources in `plan.source_dir`; the flags against the plan's.
pub fn load(dir: &Path, plan: &Plan, manifest: &Manifest) -> Result<Loaded, PrebuiltError> {
    let shapes = LaunchShapes::of(manifest);
    let mut folders: BTreeMap<String, (PathBuf, ArchManifest)> = BTreeMap::new();
    let flags = plan.flags_for_identity();
    let mut open = |arch: Arch| -> Result<(PathBuf, ArchManifest), PrebuiltError> {
        let name = arch.sm_name();
        if let Some(f) = folders.get(&name) {
            return Ok(f.clone());
        }
        let path = dir.join(&name).join(MANIFEST);
        if !path.is_file() {
            return Err(PrebuiltError::NoArch {
                dir: dir.to_path_buf(),
                arch: name,
                available: available(dir),
            });
        }
        let m = read_manifest(&path)?;
        let stale = |what: String| PrebuiltError::Stale {
            manifest: path.clone(),
            arch: name.clone(),
            what,
        };
        if m.arch != name {
            return Err(stale(format!("its manifest is for {}", m.arch)));
        }
        if m.procedure != crate::portable::PROCEDURE {
            return Err(stale(format!(
                "compiled by procedure {}, this cubins compiles by {}",
                m.procedure,
                crate::portable::PROCEDURE
            )));
        }
        if m.flags != flags {
            return Err(stale(format!(
                "compiled with flags {:?}, this build compiles with {:?}",
                m.flags, flags
            )));
        }
        if let Some((first, fm)) = folders.values().next() {
            if fm.toolkit != m.toolkit {
                return Err(PrebuiltError::MixedToolkits {
                    first: (first.clone(), fm.toolkit.clone()),
                    second: (path, m.toolkit),
                });
            }
        }
        folders.insert(name, (path.clone(), m.clone()));
        Ok((path, m))
    };

    let mut files = Vec::new();
    let mut reports = Vec::new();
    let mut declarations = Sources::new();
    for src in &plan.sources {
        let name = src
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut cubins = Vec::new();
        let mut file_reports = Vec::new();
        let mut ptx = None;
        let mut source_digest = String::new();
        // Ascending: the first arch is the file's lowest, whose PTX and declarations a fresh
        // build takes.
        for (i, arch) in plan.archs_for(src).into_iter().enumerate() {
            let (path, m) = open(arch)?;
            let folder = path.parent().unwrap_or(dir).to_path_buf();
            let entry = m.files.iter().find(|e| e.name == name).ok_or_else(|| {
                PrebuiltError::MissingFile {
                    manifest: path.clone(),
                    file: name.clone(),
                    arch: arch.sm_name(),
                }
            })?;
            let closure = verify_closure(entry, &plan.source_dir, &path, &arch.sm_name())?;
            source_digest = entry.source_digest.clone();
            let bytes = read_verified(&folder, &entry.cubin, &path)?;
            cubins.push(artifact(
                arch,
                OutputKind::Cubin,
                &folder,
                &entry.cubin,
                bytes,
                &closure,
            ));
            let report_path = folder.join(&entry.report.path);
            let report = read_verified(&folder, &entry.report, &path)?;
            let report = parse_report(&report_path, &report, arch)?;
            file_reports.push(with_declared_occupancy(report, &shapes));
            if i == 0 {
                let bytes = read_verified(&folder, &entry.ptx, &path)?;
                ptx = Some(artifact(
                    arch,
                    OutputKind::Ptx,
                    &folder,
                    &entry.ptx,
                    bytes,
                    &closure,
                ));
                let decls = match &entry.declarations {
                    Ok(h) => {
                        let text = read_verified(&folder, h, &path)?;
                        Ok(signature::declarations(&String::from_utf8_lossy(&text)))
                    }
                    Err(why) => Err(why.clone()),
                };
                declarations.insert(name.clone(), decls);
            }
        }
        files.push(KernelFileBuild {
            name,
            source: src.clone(),
            source_digest,
            cubins,
            ptx,
        });
        reports.push(file_reports);
    }
    let (toolkit, toolkit_major_minor) = folders
        .values()
        .next()
        .map(|(_, m)| (m.toolkit.clone(), m.toolkit_major_minor.clone()))
        .unwrap_or_default();
    Ok(Loaded {
        build: BuildOutput {
            files,
            compiled: Vec::new(),
            cache_notes: Vec::new(),
        },
        reports,
        toolkit,
        toolkit_major_minor,
        declarations,
        folders: folders
            .into_values()
            .filter_map(|(p, _)| p.parent().map(Path::to_path_buf))
            .collect(),
    })
}

fn read_manifest(path: &Path) -> Result<ArchManifest, PrebuiltError> {
    let text = fs::read_to_string(path).map_err(|error| PrebuiltError::Unreadable {
        path: path.to_path_buf(),
        error,
    })?;
    let m: ArchManifest = serde_json::from_str(&text).map_err(|e| PrebuiltError::Malformed {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    if m.format != FORMAT {
        return Err(PrebuiltError::Malformed {
            path: path.to_path_buf(),
            problem: format!("its format is `{}`", m.format),
        });
    }
    Ok(m)
}

/// The bytes of `h` in `folder`, if they match its SHA-256.
fn read_verified(folder: &Path, h: &Hashed, manifest: &Path) -> Result<Vec<u8>, PrebuiltError> {
    if h.path.is_empty() || h.path.contains(['/', '\\']) {
        return Err(PrebuiltError::Malformed {
            path: manifest.to_path_buf(),
            problem: format!("artifact `{}` is not a file name in its folder", h.path),
        });
    }
    let path = folder.join(&h.path);
    let bytes = fs::read(&path).map_err(|error| PrebuiltError::Unreadable {
        path: path.clone(),
        error,
    })?;
    let found = sha256_hex(&bytes);
    if found != h.sha256 {
        return Err(PrebuiltError::Tampered {
            path,
            manifest: manifest.to_path_buf(),
            recorded: h.sha256.clone(),
            found,
        });
    }
    Ok(bytes)
}

/// Checks the file's recorded closure against the sources now in `source_dir`; returns the
/// closure's files (absolute) on success.
fn verify_closure(
    entry: &FileEntry,
    source_dir: &Path,
    manifest: &Path,
    arch: &str,
) -> Result<Vec<PathBuf>, PrebuiltError> {
    let stale = |what: String| PrebuiltError::Stale {
        manifest: manifest.to_path_buf(),
        arch: arch.to_string(),
        what,
    };
    let shown = |rel: &str| {
        let dir = source_dir.file_name().unwrap_or_default().to_string_lossy();
        format!("{dir}/{rel}")
    };
    let mut closure = Vec::new();
    let mut files = Vec::new();
    for h in &entry.closure {
        let rel = Path::new(&h.path);
        if !rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            return Err(PrebuiltError::Malformed {
                path: manifest.to_path_buf(),
                problem: format!(
                    "closure file `{}` is not a path inside the kernel folder",
                    h.path
                ),
            });
        }
        let path = source_dir.join(rel);
        let now = match fs::read(&path) {
            Ok(bytes) => sha256_hex(&bytes),
            Err(_) => {
                return Err(stale(format!(
                    "{} was exported with {}, which is not in the crate any more",
                    shown(&format!("{}.cu", entry.name)),
                    shown(&h.path)
                )))
            }
        };
        if now != h.sha256 {
            return Err(stale(format!(
                "{} changed after the export (SHA-256 {now}, exported from {})",
                shown(&h.path),
                h.sha256
            )));
        }
        closure.push((h.path.clone(), now));
        files.push(path);
    }
    if pipeline::closure_digest(&closure) != entry.source_digest {
        return Err(stale(format!(
            "the source digest of {} does not match its closure",
            shown(&format!("{}.cu", entry.name))
        )));
    }
    Ok(files)
}

fn parse_report(path: &Path, bytes: &[u8], arch: Arch) -> Result<CubinReport, PrebuiltError> {
    let report: CubinReport =
        serde_json::from_slice(bytes).map_err(|e| PrebuiltError::Malformed {
            path: path.to_path_buf(),
            problem: e.to_string(),
        })?;
    if report.arch != arch {
        return Err(PrebuiltError::Malformed {
            path: path.to_path_buf(),
            problem: format!("it reports on {}, not {arch}", report.arch),
        });
    }
    Ok(report)
}

/// `report` with every kernel's occupancy at `shapes` (the build's manifest's), as the
/// analysis of a fresh build computes it.
pub fn with_declared_occupancy(mut report: CubinReport, shapes: &LaunchShapes) -> CubinReport {
    for k in &mut report.kernels {
        let resources = KernelResources {
            registers: k.registers.value,
            static_smem_bytes: k.smem_bytes.value,
            barriers: k.barriers.unwrap_or(0),
            max_threads_per_block: k.max_threads_per_block,
        };
        k.occupancy = declared_occupancy(k.arch, &k.mangled, &resources, shapes);
    }
    report
}

fn artifact(
    arch: Arch,
    kind: OutputKind,
    folder: &Path,
    h: &Hashed,
    bytes: Vec<u8>,
    closure: &[PathBuf],
) -> Artifact {
    Artifact {
        arch,
        kind,
        path: folder.join(&h.path),
        sha256: h.sha256.clone(),
        bytes,
        deps: closure.to_vec(),
        outputs: Default::default(),
        compiled: false,
    }
}

/// One arch folder an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// `sm_90`
    pub arch: String,
    pub dir: PathBuf,
    /// Files in it, its manifest included, and their total size.
    pub files: usize,
    pub bytes: u64,
}

/// Why an export failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ExportError {
    Build(pipeline::BuildError),
    Inspect {
        file: String,
        arch: String,
        error: String,
    },
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Build(e) => e.fmt(f),
            ExportError::Inspect { file, arch, error } => {
                write!(f, "inspecting {file} for {arch}: {error}")
            }
            ExportError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for ExportError {}

/// Compiles the kernels of `base` (its folder, files and flags) for each of `archs` as a
/// build selecting that arch alone would (through `cache`), and writes their artifacts,
/// reports and declarations into one folder per artifact arch under `out`, replacing those
/// folders.
pub fn export(
    tc: &Toolchain,
    base: &Plan,
    manifest: &Manifest,
    archs: &[Arch],
    cache: &Cache,
    out: &Path,
    jobs: usize,
) -> Result<Vec<Exported>, ExportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| ExportError::Io { path, error }
    };
    let mut manifests: BTreeMap<String, ArchManifest> = BTreeMap::new();
    for &selected in archs {
        let plan = Plan {
            archs: vec![selected],
            ..base.clone()
        };
        let build = pipeline::build(tc, &plan, cache, jobs).map_err(ExportError::Build)?;
        for f in &build.files {
            let (Some(c), Some(ptx)) = (f.cubins.first(), f.ptx.as_ref()) else {
                continue;
            };
            let arch = c.arch.sm_name();
            let folder = out.join(&arch);
            let m = match manifests.get_mut(&arch) {
                Some(m) => m,
                None => {
                    // A folder is written whole by one export.
                    match fs::remove_dir_all(&folder) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                            return Err(io(&folder)(e))
                        }
                        _ => {}
                    }
                    fs::create_dir_all(&folder).map_err(io(&folder))?;
                    manifests.entry(arch.clone()).or_insert(ArchManifest {
                        format: FORMAT.into(),
                        arch: arch.clone(),
                        toolkit: tc.version.full.clone(),
                        toolkit_major_minor: tc.version.major_minor(),
                        procedure: crate::portable::PROCEDURE.into(),
                        flags: plan.flags_for_identity(),
                        files: Vec::new(),
                    })
                }
            };
            // Another selected arch (sm_90a) builds this file for this arch too.
            if m.files.iter().any(|e| e.name == f.name) {
                continue;
            }
            let inspect_err = |error: String| ExportError::Inspect {
                file: format!("{}.cu", f.name),
                arch: arch.clone(),
                error,
            };
            let report = analyze_cubin(c.arch, &c.outputs, &LaunchShapes::of(manifest))
                .map_err(|e| inspect_err(e.to_string()))?;
            let report =
                serde_json::to_vec_pretty(&report).map_err(|e| inspect_err(e.to_string()))?;
            let closure = pipeline::source_closure(&plan.source_dir, &c.deps)
                .map_err(io(&plan.source_dir))?;
            let put = |name: String, bytes: &[u8]| -> Result<Hashed, ExportError> {
                let path = folder.join(&name);
                fs::write(&path, bytes).map_err(io(&path))?;
                Ok(Hashed {
                    path: name,
                    sha256: sha256_hex(bytes),
                })
            };
            let declarations = match signature::preprocess(tc, &f.source, c.arch, &plan.flags) {
                Ok(text) => Ok(put(
                    format!("{}.{arch}.decls.i", f.name),
                    declarations_text(&text, &plan.source_dir).as_bytes(),
                )?),
                Err(why) => Err(why),
            };
            m.files.push(FileEntry {
                name: f.name.clone(),
                source_digest: f.source_digest.clone(),
                closure: closure
                    .into_iter()
                    .map(|(path, sha256)| Hashed { path, sha256 })
                    .collect(),
                cubin: put(format!("{}.{arch}.cubin", f.name), &c.bytes)?,
                ptx: put(
                    format!("{}.{}.ptx", f.name, ptx.arch.compute_name()),
                    &ptx.bytes,
                )?,
                report: put(format!("{}.{arch}.report.json", f.name), &report)?,
                declarations,
            });
        }
    }
    let mut exported = Vec::new();
    for (arch, m) in &manifests {
        let folder = out.join(arch);
        let path = folder.join(MANIFEST);
        let text = serde_json::to_string_pretty(m).map_err(|e| ExportError::Io {
            path: path.clone(),
            error: std::io::Error::other(e),
        })?;
        fs::write(&path, text + "\n").map_err(io(&path))?;
        let mut files = 0;
        let mut bytes = 0;
        for e in fs::read_dir(&folder).map_err(io(&folder))? {
            let e = e.map_err(io(&folder))?;
            files += 1;
            bytes += e.metadata().map_err(io(&e.path()))?.len();
        }
        exported.push(Exported {
            arch: arch.clone(),
            dir: folder,
            files,
            bytes,
        });
    }
    Ok(exported)
}

/// What of `nvcc -E` output an export keeps for the launcher check: the lines of files in
/// the kernel folder (the kernels are declared there), without line markers. The whole text
/// when that would change what [`signature::declarations`] reads.
pub fn declarations_text(preprocessed: &str, kernel_dir: &Path) -> String {
    let roots = [
        crate::portable::normalize(&crate::portable::absolute(kernel_dir)),
        kernel_dir.canonicalize().unwrap_or_default(),
    ];
    let mut own = String::new();
    let mut keep = false;
    for line in preprocessed.lines() {
        if let Some(file) = line_marker_file(line) {
            let p = crate::portable::normalize(&crate::portable::absolute(Path::new(file)));
            keep = roots
                .iter()
                .any(|r| !r.as_os_str().is_empty() && p.starts_with(r));
            continue;
        }
        if keep {
            own.push_str(line);
            own.push('\n');
        }
    }
    if signature::declarations(&own) == signature::declarations(preprocessed) {
        own
    } else {
        preprocessed.to_string()
    }
}

/// `# 12 "path/file.cuh" 2` names the file the following lines come from.
fn line_marker_file(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("# ")?;
    let (number, rest) = rest.split_once(' ')?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = rest.strip_prefix('"')?;
    rest.find('"').map(|end| &rest[..end])
}
