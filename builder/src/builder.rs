//! The builder ([`Build`]): what a crate's build script runs to compile its own kernels,
//! as cubins' own does. Select arches, find the toolchain and compile through the cache and
//! inspect (or load verified prebuilt artifacts and their reports, [`crate::prebuilt`]),
//! check contracts, generate the registry and launchers for `cubins::include_kernels!()`.

use crate::analyze::analyze_cubin;
use crate::arch::{Arch, ArchError, DEFAULT};
use crate::manifest::{Level, Manifest};
use crate::model::CubinReport;
use crate::pipeline::{self, BuildOutput, Plan};
use crate::schema::ReportsFile;
use crate::shapes::LaunchShapes;
use crate::toolchain::cache::{self, Cache};
use crate::toolchain::Toolchain;
use crate::{contract, launcher, prebuilt, registry_gen};
use std::fs;
use std::path::{Path, PathBuf};

/// Environment variables every build reads (each gets `cargo:rerun-if-env-changed`), with
/// the crate's own prebuilt variables ([`prebuilt::Vars`]).
pub const ENV_VARS: &[&str] = &[
    ARCHS_ENV,
    COMPUTE_CAP_ENV,
    contract::LEVEL_ENV,
    "CUBINS_NO_BUILD",
    "CUBINS_CACHE_DIR",
    "CUBINS_NVCC_WRAPPER",
    "DOCS_RS",
    "NVCC",
    "CUDA_HOME",
    "CUDA_PATH",
];

/// The arch override (`80;90a`, `all`); replaces the cargo features.
pub const ARCHS_ENV: &str = "CUBINS_ARCHS";

/// The compute capability variable candle and cudaforge users set (`89`, `8.9`, `90a`, a list).
pub const COMPUTE_CAP_ENV: &str = "CUDA_COMPUTE_CAP";

/// Where the arch selection came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchSource {
    EnvOverride,
    /// `CUDA_COMPUTE_CAP`, with `CUBINS_ARCHS` unset.
    ComputeCap,
    Features,
    Default,
}

/// A selection variable whose value names no supported arch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectError {
    pub var: &'static str,
    pub error: ArchError,
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.var, self.error)
    }
}

impl std::error::Error for SelectError {}

/// `CUBINS_ARCHS` if set (replaces features), else `CUDA_COMPUTE_CAP`, else the `sm*` cargo
/// features, else [`DEFAULT`].
pub fn select_archs(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Vec<Arch>, ArchSource), SelectError> {
    for (var, source) in [
        (ARCHS_ENV, ArchSource::EnvOverride),
        (COMPUTE_CAP_ENV, ArchSource::ComputeCap),
    ] {
        if let Some(v) = env(var).filter(|v| !v.trim().is_empty()) {
            let archs = Arch::parse_list(&v).map_err(|error| SelectError { var, error })?;
            return Ok((archs, source));
        }
    }
    let mut archs: Vec<Arch> = crate::arch::SUPPORTED
        .iter()
        .copied()
        .filter(|a| {
            env(&format!(
                "CARGO_FEATURE_{}",
                a.feature_name().to_ascii_uppercase()
            ))
            .is_some()
        })
        .collect();
    if archs.is_empty() {
        return Ok((DEFAULT.to_vec(), ArchSource::Default));
    }
    archs.sort();
    Ok((archs, ArchSource::Features))
}

/// Why kernels are not compiled, if they are not.
pub fn skip_reason(env: &dyn Fn(&str) -> Option<String>) -> Option<&'static str> {
    if env("DOCS_RS").is_some() {
        Some("DOCS_RS is set: docs.rs builds have no CUDA toolkit")
    } else if env("CUBINS_NO_BUILD").is_some_and(|v| v != "0" && !v.is_empty()) {
        Some("CUBINS_NO_BUILD=1 was set at build time")
    } else {
        None
    }
}

/// A kernel build for one crate, in the spirit of `cc::Build`: its kernel folder, manifest,
/// flags and arches, compiled through the shared cache, inspected, contract-checked, and
/// generated into `OUT_DIR/cubins_kernels.rs` for `cubins::include_kernels!()`. In a build
/// script:
///
/// ```no_run
/// cubins_build::Build::new().compile();
/// ```
///
/// compiles `cuda/*.cu` of the crate against `cuda/kernels.toml`, for the arches its `sm*`
/// features select (or `CUBINS_ARCHS`, `CUDA_COMPUTE_CAP`).
#[derive(Debug, Clone, Default)]
pub struct Build {
    crate_dir: Option<PathBuf>,
    crate_name: Option<String>,
    out_dir: Option<PathBuf>,
    source_dir: Option<PathBuf>,
    manifest: Option<PathBuf>,
    include_dirs: Vec<PathBuf>,
    flags: Vec<String>,
    archs: Option<Vec<Arch>>,
    cache_dir: Option<PathBuf>,
    jobs: Option<usize>,
    contracts: Option<Level>,
    emit_cargo: Option<bool>,
}

impl Build {
    /// A build with every setting taken from cargo's build-script environment.
    pub fn new() -> Build {
        Build::default()
    }

    /// The crate being built (default `CARGO_MANIFEST_DIR`); the kernel folder, the prebuilt
    /// folder and the repo-local toolchain are found from it.
    pub fn crate_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Build {
        self.crate_dir = Some(dir.into());
        self
    }

    /// The crate's name in its `Library` and its prebuilt variable (default `CARGO_PKG_NAME`).
    pub fn crate_name(&mut self, name: impl Into<String>) -> &mut Build {
        self.crate_name = Some(name.into());
        self
    }

    /// Where the generated code, artifacts and reports go (default `OUT_DIR`; an export
    /// needs none).
    pub fn out_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Build {
        self.out_dir = Some(dir.into());
        self
    }

    /// The folder whose `*.cu` files are the kernel files (default `<crate>/cuda`); its
    /// `include/` is on the include path.
    pub fn source_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Build {
        self.source_dir = Some(dir.into());
        self
    }

    /// The kernel manifest (default `kernels.toml` in the source folder).
    pub fn manifest(&mut self, path: impl Into<PathBuf>) -> &mut Build {
        self.manifest = Some(path.into());
        self
    }

    /// Another include folder (`-I`), after the source folder's `include/`.
    pub fn include_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Build {
        self.include_dirs.push(dir.into());
        self
    }

    /// An extra nvcc flag for every kernel file (`-DTILE=64`, `--use_fast_math`). Flags are
    /// part of every artifact's identity and cache key.
    pub fn nvcc_flag(&mut self, flag: impl Into<String>) -> &mut Build {
        self.flags.push(flag.into());
        self
    }

    /// Builds for exactly `archs`, ignoring features and the environment.
    pub fn archs(&mut self, archs: &[Arch]) -> &mut Build {
        self.archs = Some(archs.to_vec());
        self
    }

    /// The kernel cache (default `CUBINS_CACHE_DIR`, else `<target>/cubins-cache`).
    pub fn cache_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Build {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Parallel nvcc jobs (default cargo's `NUM_JOBS`).
    pub fn jobs(&mut self, jobs: usize) -> &mut Build {
        self.jobs = Some(jobs.max(1));
        self
    }

    /// Whether a contract violation fails the build ([`Level::Error`], the default unless
    /// `CUBINS_CONTRACTS=warn`) or only prints ([`Level::Warn`]).
    pub fn contracts(&mut self, level: Level) -> &mut Build {
        self.contracts = Some(level);
        self
    }

    /// Whether to print `cargo:` directives (rerun triggers, warnings); default true.
    pub fn cargo_metadata(&mut self, emit: bool) -> &mut Build {
        self.emit_cargo = Some(emit);
        self
    }

    /// Runs the build; on an error, prints it as `cargo::error=` lines (which cargo shows
    /// first and alone) and ends the build script, so the build fails with that message.
    pub fn compile(&self) {
        if let Err(e) = self.try_compile() {
            print!("{}", error_directives(&e.to_string()));
            std::process::exit(0);
        }
    }

    /// Runs the build and returns what it generated, or the first error. With the crate's
    /// export variable set (`MY_KERNELS_EXPORT_PREBUILT=/abs/dir` for `my-kernels`), a build
    /// that compiled its kernels also exports them there, as [`Build::export_prebuilt`] does.
    pub fn try_compile(&self) -> Result<Built, Error> {
        let env = |k: &str| std::env::var(k).ok();
        let settings = self.settings(&env)?;
        run(&settings, &env)
    }

    /// Compiles the kernels for each selected arch as a build selecting that arch alone
    /// would, and exports cubins, PTX, reports and declarations into one folder per arch
    /// under `out` ([`crate::prebuilt`]): what a build of the crate embeds, verified,
    /// with no CUDA toolkit, from `MY_KERNELS_PREBUILT=out` or the crate's own `prebuilt/`
    /// folder. Needs nvcc; the prebuilt variable is not read.
    pub fn export_prebuilt(&self, out: impl AsRef<Path>) -> Result<Vec<prebuilt::Exported>, Error> {
        let env = |k: &str| std::env::var(k).ok();
        let s = self.settings(&env)?;
        let manifest = Manifest::load(&s.manifest).map_err(Error::Manifest)?;
        let archs = s.selected_archs(&env)?;
        let tc = Toolchain::discover(&toolchain_root(&s.crate_dir))
            .map_err(|e| Error::Toolchain(prebuilt::naming(e, &s.vars).to_string()))?;
        export_into(&s, &env, &tc, &manifest, &archs, out.as_ref())
    }

    /// Every setting resolved against the environment `env`.
    fn settings(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
        let cargo_var = |var: &'static str| {
            env(var)
                .map(PathBuf::from)
                .ok_or(Error::NotInBuildScript { var })
        };
        let crate_dir = match &self.crate_dir {
            Some(d) => d.clone(),
            None => cargo_var("CARGO_MANIFEST_DIR")?,
        };
        let out_dir = self
            .out_dir
            .clone()
            .or_else(|| env("OUT_DIR").map(PathBuf::from));
        let crate_name = self
            .crate_name
            .clone()
            .or_else(|| env("CARGO_PKG_NAME"))
            .or_else(|| Some(crate_dir.file_name()?.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "kernels".into());
        let source_dir = self
            .source_dir
            .clone()
            .unwrap_or_else(|| crate_dir.join("cuda"));
        let manifest = self
            .manifest
            .clone()
            .unwrap_or_else(|| source_dir.join("kernels.toml"));
        let jobs = self
            .jobs
            .or_else(|| env("NUM_JOBS").and_then(|n| n.parse().ok()))
            .unwrap_or(1)
            .max(1);
        Ok(Settings {
            vars: prebuilt::Vars::of(&crate_name),
            crate_dir,
            crate_name,
            out_dir,
            source_dir,
            manifest,
            include_dirs: self.include_dirs.clone(),
            flags: self.flags.clone(),
            archs: self.archs.clone(),
            cache_dir: self.cache_dir.clone(),
            jobs,
            contracts: self.contracts,
            emit_cargo: self.emit_cargo.unwrap_or(true),
        })
    }
}

/// A [`Build`] with every default resolved.
struct Settings {
    crate_dir: PathBuf,
    crate_name: String,
    /// `OUT_DIR` (an export needs none).
    out_dir: Option<PathBuf>,
    source_dir: PathBuf,
    manifest: PathBuf,
    include_dirs: Vec<PathBuf>,
    flags: Vec<String>,
    archs: Option<Vec<Arch>>,
    cache_dir: Option<PathBuf>,
    jobs: usize,
    contracts: Option<Level>,
    vars: prebuilt::Vars,
    emit_cargo: bool,
}

impl Settings {
    fn cargo(&self, line: std::fmt::Arguments) {
        if self.emit_cargo {
            println!("cargo:{line}");
        }
    }

    fn out_dir(&self) -> Result<&Path, Error> {
        self.out_dir
            .as_deref()
            .ok_or(Error::NotInBuildScript { var: "OUT_DIR" })
    }

    /// The arches set on the builder, else those the environment and features select.
    fn selected_archs(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Arch>, Error> {
        match &self.archs {
            Some(a) => Ok(a.clone()),
            None => Ok(select_archs(env).map_err(Error::Archs)?.0),
        }
    }

    /// The build's kernel cache.
    fn cache(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Cache, Error> {
        let root = match (&self.cache_dir, &self.out_dir) {
            (Some(d), _) => d.clone(),
            (None, Some(out_dir)) => cache::dir_for_build_script(env, out_dir),
            (None, None) => cache::dir_for_target_dir(env, &self.crate_dir.join("target")),
        };
        Cache::new(root.clone()).map_err(io_error(&root))
    }
}

/// What a build generated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Built {
    /// `OUT_DIR/cubins_kernels.rs`, for `cubins::include_kernels!()`.
    pub kernels_rs: PathBuf,
    /// `OUT_DIR/reports.json` ([`crate::schema::ReportsFile`]); absent without kernels.
    pub reports_json: Option<PathBuf>,
    /// The arches built (empty without kernels).
    pub archs: Vec<Arch>,
    /// Warnings the build printed (contracts at `warn`, unchecked parameter types, cache).
    pub warnings: Vec<String>,
}

/// Why a build failed. Each prints as the message a build log should show.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting cargo gives a build script is missing: not run by cargo, so set it.
    NotInBuildScript { var: &'static str },
    /// An arch selection names no supported arch.
    Archs(SelectError),
    /// `CUBINS_CONTRACTS` holds no level.
    ContractLevel(contract::BadLevel),
    /// The manifest does not parse or validate.
    Manifest(crate::manifest::ManifestError),
    /// No usable toolchain or prebuilt artifacts (the message says how to get one).
    Toolchain(String),
    /// A kernel file failed to compile or inspect (nvcc's message, file and line first).
    Compile(String),
    /// Kernels violate their contracts; one message per violation.
    Contracts(Vec<String>),
    /// Launchers disagree with the cubins' parameter tables or the kernels' declarations.
    Launchers(Vec<String>),
    /// Prebuilt artifacts were asked for and cannot serve the build.
    Prebuilt(String),
    /// Exporting prebuilt artifacts failed.
    Export(String),
    /// Reading or writing a file failed.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NotInBuildScript { var } => write!(
                f,
                "cubins: {var} is not set: run the build from a build script, or set it with the builder"
            ),
            Error::Archs(e) => write!(f, "cubins: {e}"),
            Error::ContractLevel(e) => write!(f, "cubins: {e}"),
            Error::Manifest(e) => write!(f, "cubins: {e}"),
            Error::Toolchain(m) | Error::Compile(m) | Error::Prebuilt(m) | Error::Export(m) => {
                f.write_str(m)
            }
            Error::Contracts(v) => write!(
                f,
                "cubins: kernel contract violations:\n\n{}",
                v.join("\n\n")
            ),
            Error::Launchers(v) => write!(
                f,
                "cubins: typed launchers disagree with the cubins' parameter tables or the kernels' declarations:\n{}",
                v.join("\n")
            ),
            Error::Io { path, error } => write!(f, "cubins: {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for Error {}

/// An I/O error on `path`, as [`Error::Io`].
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |error| Error::Io { path, error }
}

/// Runs the whole build.
fn run(s: &Settings, env: &dyn Fn(&str) -> Option<String>) -> Result<Built, Error> {
    for v in ENV_VARS {
        s.cargo(format_args!("rerun-if-env-changed={v}"));
    }
    s.cargo(format_args!("rerun-if-env-changed={}", s.vars.prebuilt));
    s.cargo(format_args!("rerun-if-env-changed={}", s.vars.export));
    let out_dir = s.out_dir()?;
    // A folder is watched whole (cargo scans it), headers in its include/ too.
    s.cargo(format_args!("rerun-if-changed={}", s.source_dir.display()));
    s.cargo(format_args!("rerun-if-changed={}", s.manifest.display()));
    for d in &s.include_dirs {
        s.cargo(format_args!("rerun-if-changed={}", d.display()));
    }
    let kernels_rs = out_dir.join(KERNELS_RS);
    let manifest = Manifest::load(&s.manifest).map_err(Error::Manifest)?;

    if let Some(reason) = skip_reason(env) {
        // The launchers come from the manifest alone: without cubins there is nothing to check.
        let launchers = launcher::generate(&manifest, &[]).map_err(Error::Launchers)?;
        let text = registry_gen::library(&s.crate_name, &registry_gen::empty(reason), &launchers);
        write(&kernels_rs, &text)?;
        // What was built before is not this build's: the snapshot tests must see none.
        let _ = fs::remove_file(out_dir.join("reports.json"));
        write(&out_dir.join(WITHOUT_KERNELS), reason)?;
        return Ok(Built {
            kernels_rs,
            reports_json: None,
            archs: vec![],
            warnings: vec![],
        });
    }

    let archs = s.selected_archs(env)?;
    let export_to = prebuilt::dir_from_env(env, &s.vars.export)
        .map_err(|e| Error::Prebuilt(format!("cubins: {e}")))?;
    let level = match s.contracts {
        Some(l) => l,
        None => contract::level_from_env(env(contract::LEVEL_ENV).as_deref())
            .map_err(Error::ContractLevel)?,
    };
    let source = prebuilt::choose(env, &s.vars, &s.crate_dir, &toolchain_root(&s.crate_dir))
        .map_err(|e| Error::Toolchain(e.to_string()))?;
    if let prebuilt::Source::Nvcc(tc) = &source {
        s.cargo(format_args!("rerun-if-changed={}", tc.nvcc.display()));
        for &a in &archs {
            tc.check_arch(a)
                .map_err(|e| Error::Toolchain(e.to_string()))?;
        }
    }
    let plan = plan_of(s, archs, &manifest)?;
    let mut warnings = Vec::new();
    let Kernels {
        mut build,
        reports,
        toolkit,
        declarations,
        origin,
    } = match &source {
        prebuilt::Source::Nvcc(tc) => compile_here(s, env, tc, &plan, &manifest, &mut warnings)?,
        prebuilt::Source::Prebuilt { dir, no_nvcc } => {
            if let Some(to) = &export_to {
                return Err(Error::Prebuilt(format!(
                    "cubins: {}={} asks for an export, which compiles the kernels, but this \
                     build embeds the prebuilt kernels of {}: unset {} and give nvcc (NVCC, \
                     CUDA_HOME or PATH)",
                    s.vars.export,
                    to.display(),
                    dir.display(),
                    s.vars.prebuilt
                )));
            }
            prebuilt_kernels(s, dir, no_nvcc.as_ref(), &plan, &manifest, &mut warnings)?
        }
    };
    let flat: Vec<(String, &CubinReport)> = build
        .files
        .iter()
        .zip(&reports)
        .flat_map(|(f, rs)| rs.iter().map(move |r| (f.name.clone(), r)))
        .collect();
    let outcome = contract::check_all(&manifest, &flat).at_level(level);
    warnings.extend(outcome.warnings.iter().map(|w| w.replace('\n', " | ")));
    if !outcome.errors.is_empty() {
        return Err(Error::Contracts(outcome.errors));
    }
    let (launchers, unchecked) =
        launcher::generate_and_check(&manifest, &flat, &declarations).map_err(Error::Launchers)?;
    warnings.extend(unchecked.iter().map(|u| format!("cubins: {u}")));
    // Only kernels that passed every check are exported.
    if let (Some(to), prebuilt::Source::Nvcc(tc)) = (&export_to, &source) {
        for e in export_into(s, env, tc, &manifest, &plan.archs, to)? {
            warnings.push(format!(
                "cubins: exported {} prebuilt kernels of {} into {} ({} files, {} bytes)",
                e.arch,
                s.crate_name,
                e.dir.display(),
                e.files,
                e.bytes
            ));
        }
    }
    for w in &warnings {
        s.cargo(format_args!("warning={w}"));
    }

    let _ = fs::remove_file(out_dir.join(WITHOUT_KERNELS));
    let artifacts = out_dir.join("artifacts");
    let ptx_copies = stage_artifacts(&mut build, &artifacts)?;
    let reports_json = out_dir.join("reports.json");
    let report_text = serde_json::to_string(&ReportsFile::new(&toolkit, &build, &reports))
        .map_err(|e| io_error(&reports_json)(std::io::Error::other(e)))?;
    write(&reports_json, &report_text)?;
    let registry = registry_gen::generate(
        &build,
        &reports,
        &registry_gen::Identity {
            toolkit: &toolkit.0,
            flags: &plan.flags_for_identity(),
            origin,
        },
        &ptx_copies,
    );
    write(
        &kernels_rs,
        &registry_gen::library(&s.crate_name, &registry, &launchers),
    )?;
    write(&out_dir.join("compiled.txt"), &build.compiled.join("\n"))?;
    Ok(Built {
        kernels_rs,
        reports_json: Some(reports_json),
        archs: registry_gen::built_archs(&build),
        warnings,
    })
}

/// The generated code's file name in `OUT_DIR` (`cubins::include_kernels!()` includes it).
pub const KERNELS_RS: &str = "cubins_kernels.rs";

/// In `OUT_DIR` of a build without kernels (`DOCS_RS`, `CUBINS_NO_BUILD=1`): why.
pub const WITHOUT_KERNELS: &str = "without-kernels.txt";

/// Where the repo-local toolchain of `cargo xtask setup` would be: the nearest folder at or
/// above `crate_dir` that has one (a workspace member finds its workspace's), else `crate_dir`.
fn toolchain_root(crate_dir: &Path) -> PathBuf {
    crate_dir
        .ancestors()
        .find(|a| {
            a.join(crate::toolchain::discover::REPO_LOCAL_BIN)
                .join("nvcc")
                .is_file()
        })
        .unwrap_or(crate_dir)
        .to_path_buf()
}

/// The build's plan: [`kernel_plan`] with the builder's include folders and flags.
fn plan_of(s: &Settings, archs: Vec<Arch>, manifest: &Manifest) -> Result<Plan, Error> {
    let mut plan = kernel_plan(&s.source_dir, &s.manifest, archs, manifest)?;
    plan.flags
        .extend(s.include_dirs.iter().map(|d| format!("-I{}", d.display())));
    plan.flags.extend(s.flags.iter().cloned());
    Ok(plan)
}

/// The kernels a build embeds, with what the checks read: compiled here or prebuilt.
struct Kernels {
    build: BuildOutput,
    reports: Vec<Vec<CubinReport>>,
    /// Full version and `major.minor`.
    toolkit: (String, String),
    declarations: launcher::signature::Sources,
    origin: registry_gen::Origin,
}

/// Compiles `plan` with `tc` through the build's cache and inspects the cubins.
fn compile_here(
    s: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    tc: &Toolchain,
    plan: &Plan,
    manifest: &Manifest,
    warnings: &mut Vec<String>,
) -> Result<Kernels, Error> {
    let cache = s.cache(env)?;
    let build = pipeline::build(tc, plan, &cache, s.jobs)
        .map_err(|e| Error::Compile(format!("cubins: {e}")))?;
    warnings.extend(build.cache_notes.iter().map(|n| format!("cubins: {n}")));
    let cuda_dir = &plan.source_dir;
    let toolkit_root = tc.nvcc.parent().and_then(Path::parent).unwrap_or(cuda_dir);
    let mut watched: Vec<&Path> = vec![cuda_dir, toolkit_root];
    watched.extend(s.include_dirs.iter().map(PathBuf::as_path));
    for dep in deps_to_watch(&build.all_deps(), &s.crate_dir, &watched) {
        s.cargo(format_args!("rerun-if-changed={}", dep.display()));
    }
    let reports = inspect(&build, manifest)?;
    // Element types come from the kernels' own declarations (nvcc -E, see launcher::signature).
    let declarations = launcher::signature::of_build(tc, &build, &plan.flags, s.jobs);
    Ok(Kernels {
        build,
        reports,
        toolkit: (tc.version.full.clone(), tc.version.major_minor()),
        declarations,
        origin: registry_gen::Origin::Nvcc,
    })
}

/// The verified prebuilt artifacts of `plan` in `dir` ([`prebuilt::load`]); `no_nvcc` is set
/// when they are used because no nvcc was found, not because the prebuilt variable asked.
fn prebuilt_kernels(
    s: &Settings,
    dir: &Path,
    no_nvcc: Option<&crate::toolchain::NvccNotFound>,
    plan: &Plan,
    manifest: &Manifest,
    warnings: &mut Vec<String>,
) -> Result<Kernels, Error> {
    s.cargo(format_args!("rerun-if-changed={}", dir.display()));
    let loaded = prebuilt::load(dir, plan, manifest).map_err(|e| {
        let e = e.message(&s.vars);
        match no_nvcc {
            None => Error::Prebuilt(format!("cubins: {e}")),
            Some(n) => Error::Toolchain(format!(
                "{n}\n\nThe crate's prebuilt kernels cannot serve this build either: {e}"
            )),
        }
    })?;
    for folder in &loaded.folders {
        s.cargo(format_args!("rerun-if-changed={}", folder.display()));
    }
    if no_nvcc.is_some() {
        warnings.push(format!(
            "cubins: no nvcc found: embedding the verified prebuilt kernels of {}",
            dir.display()
        ));
    }
    Ok(Kernels {
        build: loaded.build,
        reports: loaded.reports,
        toolkit: (loaded.toolkit, loaded.toolkit_major_minor),
        declarations: loaded.declarations,
        origin: registry_gen::Origin::Prebuilt,
    })
}

/// [`prebuilt::export`] of the build's kernels (its folder, include folders and flags) for
/// `archs` into `out`.
fn export_into(
    s: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    tc: &Toolchain,
    manifest: &Manifest,
    archs: &[Arch],
    out: &Path,
) -> Result<Vec<prebuilt::Exported>, Error> {
    for &a in archs {
        tc.check_arch(a)
            .map_err(|e| Error::Toolchain(e.to_string()))?;
    }
    let plan = plan_of(s, archs.to_vec(), manifest)?;
    prebuilt::export(tc, &plan, manifest, archs, &s.cache(env)?, out, s.jobs).map_err(|e| {
        Error::Export(format!(
            "cubins: exporting prebuilt kernels into {}: {e}",
            out.display()
        ))
    })
}

/// `run`'s error as build-script output: one `cargo::error=` line per line, which cargo
/// prints first and alone (a nonzero exit would print every `cargo:` line before it).
/// The caller exits successfully; the logged errors fail the build.
pub fn error_directives(message: &str) -> String {
    message
        .lines()
        .map(|l| format!("cargo::error={}\n", l.trim_end()))
        .collect()
}

/// The plan for the kernel folder `cuda_dir` under `manifest` (read from `manifest_path`).
/// `cargo xtask build` compiles this same plan ahead of cargo (to show progress), so both
/// must make it here, or cache keys differ.
pub fn kernel_plan(
    cuda_dir: &Path,
    manifest_path: &Path,
    archs: Vec<Arch>,
    manifest: &Manifest,
) -> Result<Plan, Error> {
    Plan::discover(cuda_dir, archs)
        .map_err(io_error(cuda_dir))?
        .with_arch_specific(manifest.arch_specific_files())
        .map_err(|e| {
            Error::Manifest(crate::manifest::ManifestError {
                path: manifest_path.display().to_string(),
                message: e.to_string(),
            })
        })
}

/// The nvcc dependencies cargo must watch itself: those inside the crate and outside every
/// folder in `watched` (the kernel folder, watched whole, and the toolkit). Headers outside
/// the crate are covered by the toolkit identity in the cache keys; one line each would bury
/// a failed build's error under them.
pub fn deps_to_watch(deps: &[PathBuf], crate_dir: &Path, watched: &[&Path]) -> Vec<PathBuf> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let crate_dir = canon(crate_dir);
    let watched: Vec<PathBuf> = watched.iter().map(|w| canon(w)).collect();
    deps.iter()
        .map(|d| canon(d))
        .filter(|d| d.starts_with(&crate_dir) && !watched.iter().any(|w| d.starts_with(w)))
        .collect()
}

#[cfg(test)]
mod watch_tests {
    use super::{deps_to_watch, error_directives};
    use std::path::PathBuf;

    #[test]
    fn every_line_of_an_error_becomes_a_cargo_error() {
        assert_eq!(
            error_directives("cubins: one\n\n  two  \n"),
            "cargo::error=cubins: one\ncargo::error=\ncargo::error=  two\n"
        );
    }

    #[test]
    fn only_crate_files_outside_the_watched_folders_are_watched() {
        let d = std::env::temp_dir().join(format!("cubins-watch-{}", std::process::id()));
        let file = |rel: &str| {
            let p = d.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
            p
        };
        let deps = vec![
            file("crate/cuda/copy.cu"),
            file("crate/cuda/include/cubins/a.cuh"),
            file("crate/.cuda/site/nvidia/cu13/include/cuda.h"),
            file("crate/src/shared.h"),
            file("system/include/stdint.h"),
        ];
        let watched = deps_to_watch(
            &deps,
            &d.join("crate"),
            &[
                &d.join("crate/cuda"),
                &d.join("crate/.cuda/site/nvidia/cu13"),
            ],
        );
        let want: Vec<PathBuf> = vec![d.join("crate/src/shared.h").canonicalize().unwrap()];
        assert_eq!(watched, want);
        let _ = std::fs::remove_dir_all(&d);
    }
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    // Leave an unchanged file untouched so rustc's fingerprint does not move.
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs::write(path, text).map_err(io_error(path))
}

fn inspect(build: &BuildOutput, manifest: &Manifest) -> Result<Vec<Vec<CubinReport>>, Error> {
    let shapes = LaunchShapes::of(manifest);
    build
        .files
        .iter()
        .map(|f| {
            f.cubins
                .iter()
                .map(|c| {
                    analyze_cubin(c.arch, &c.outputs, &shapes).map_err(|e| {
                        Error::Compile(format!(
                            "cubins: inspecting {} for {}: {e}",
                            f.source.display(),
                            c.arch
                        ))
                    })
                })
                .collect()
        })
        .collect()
}

/// Copies artifacts and their tool outputs into `dir` (what a reviewer opens) and points the
/// build at the copies: `include_bytes!` must not read from a cache that `CUBINS_CACHE_DIR`
/// users may clean. PTX gets a trailing NUL for `cuModuleLoadData`.
fn stage_artifacts(build: &mut BuildOutput, dir: &Path) -> Result<Vec<Option<PathBuf>>, Error> {
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    let copy = |name: String, bytes: &[u8]| -> Result<PathBuf, Error> {
        let p = dir.join(name);
        if fs::read(&p).ok().as_deref() != Some(bytes) {
            fs::write(&p, bytes).map_err(io_error(&p))?;
        }
        Ok(p)
    };
    let mut ptx_copies = Vec::new();
    for f in &mut build.files {
        for c in &mut f.cubins {
            let stem = format!("{}.{}", f.name, c.arch.sm_name());
            // The verified bytes, not the cache file: the cache is shared and may change.
            c.path = copy(format!("{stem}.cubin"), &c.bytes)?;
            // Prebuilt cubins come with their reports, not the tool outputs.
            for (ext, text) in [
                ("ptxas.log", &c.outputs.ptxas_log),
                ("sass", &c.outputs.sass),
                ("res-usage.txt", &c.outputs.res_usage),
            ] {
                if !text.is_empty() {
                    copy(format!("{stem}.{ext}"), text.as_bytes())?;
                }
            }
        }
        ptx_copies.push(match &f.ptx {
            Some(p) => {
                let mut bytes = p.bytes.clone();
                bytes.push(0);
                Some(copy(
                    format!("{}.{}.ptx", f.name, p.arch.compute_name()),
                    &bytes,
                )?)
            }
            None => None,
        });
    }
    Ok(ptx_copies)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn default_when_nothing_selected_includes_sm90() {
        let (a, src) = select_archs(&env_of(&[])).unwrap();
        assert_eq!(src, ArchSource::Default);
        assert!(a.contains(&Arch::new(90)));
    }

    #[test]
    fn features_are_additive_and_sm90a_not_implied() {
        let (a, src) = select_archs(&env_of(&[
            ("CARGO_FEATURE_SM89", "1"),
            ("CARGO_FEATURE_SM90", "1"),
        ]))
        .unwrap();
        assert_eq!(src, ArchSource::Features);
        assert_eq!(a, vec![Arch::new(89), Arch::new(90)]);
        let (a, _) = select_archs(&env_of(&[("CARGO_FEATURE_SM90A", "1")])).unwrap();
        assert_eq!(a, vec![Arch::specific(90)]);
    }

    #[test]
    fn env_override_replaces_features() {
        let (a, src) = select_archs(&env_of(&[
            ("CUBINS_ARCHS", "80;90a"),
            ("CARGO_FEATURE_SM89", "1"),
        ]))
        .unwrap();
        assert_eq!(src, ArchSource::EnvOverride);
        assert_eq!(a, vec![Arch::new(80), Arch::specific(90)]);
        let e = select_archs(&env_of(&[("CUBINS_ARCHS", "80;61")])).unwrap_err();
        assert_eq!(e.var, "CUBINS_ARCHS");
        let msg = e.to_string();
        assert!(
            msg.starts_with("CUBINS_ARCHS: unknown GPU arch `61`") && msg.contains("sm_90a"),
            "{msg}"
        );
        let (a, _) = select_archs(&env_of(&[("CUBINS_ARCHS", "all")])).unwrap();
        assert_eq!(a, crate::arch::SUPPORTED.to_vec());
    }

    #[test]
    fn compute_cap_as_candle_users_set_it() {
        for (value, want) in [
            ("89", vec![Arch::new(89)]),
            ("8.9", vec![Arch::new(89)]),
            ("90", vec![Arch::new(90)]),
            ("9.0a", vec![Arch::specific(90)]),
            ("80,90", vec![Arch::new(80), Arch::new(90)]),
        ] {
            let (a, src) = select_archs(&env_of(&[
                ("CUDA_COMPUTE_CAP", value),
                ("CARGO_FEATURE_SM120", "1"),
            ]))
            .unwrap();
            assert_eq!((a, src), (want, ArchSource::ComputeCap), "{value}");
        }
        // Blank is unset.
        let (_, src) = select_archs(&env_of(&[("CUDA_COMPUTE_CAP", " ")])).unwrap();
        assert_eq!(src, ArchSource::Default);
        let e = select_archs(&env_of(&[("CUDA_COMPUTE_CAP", "75")])).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("CUDA_COMPUTE_CAP: unknown GPU arch `75`") && msg.contains("sm_120"),
            "{msg}"
        );
    }

    #[test]
    fn cubins_archs_wins_over_compute_cap() {
        let (a, src) = select_archs(&env_of(&[
            ("CUBINS_ARCHS", "90;90a"),
            ("CUDA_COMPUTE_CAP", "89"),
        ]))
        .unwrap();
        assert_eq!(src, ArchSource::EnvOverride);
        assert_eq!(a, vec![Arch::new(90), Arch::specific(90)]);
        // Even a bad CUDA_COMPUTE_CAP is not read when CUBINS_ARCHS decides.
        assert!(select_archs(&env_of(&[
            ("CUBINS_ARCHS", "80"),
            ("CUDA_COMPUTE_CAP", "bogus")
        ]))
        .is_ok());
    }

    #[test]
    fn every_selection_variable_reruns_the_build() {
        for v in ["CUBINS_ARCHS", "CUDA_COMPUTE_CAP", "CUBINS_CONTRACTS"] {
            assert!(ENV_VARS.contains(&v), "{v}");
        }
    }

    #[test]
    fn each_crate_has_its_own_prebuilt_variable() {
        let cubins = prebuilt::Vars::of("cubins");
        assert_eq!(cubins.prebuilt, prebuilt::ENV);
        assert_eq!(cubins.export, "CUBINS_EXPORT_PREBUILT");
        let mine = prebuilt::Vars::of("my-kernels");
        assert_eq!(
            (mine.prebuilt.as_str(), mine.export.as_str()),
            ("MY_KERNELS_PREBUILT", "MY_KERNELS_EXPORT_PREBUILT")
        );
        assert_eq!(
            mine.export_command("/x", "90;90a"),
            "MY_KERNELS_EXPORT_PREBUILT=/x CUBINS_ARCHS=\"90;90a\" cargo build -p my-kernels"
        );
    }

    #[test]
    fn outside_a_build_script_the_missing_setting_is_named() {
        let e = Build::new().settings(&|_| None).err().unwrap();
        assert_eq!(
            e.to_string(),
            "cubins: CARGO_MANIFEST_DIR is not set: run the build from a build script, or set it with the builder"
        );
    }

    #[test]
    fn skip_reasons() {
        assert!(skip_reason(&env_of(&[])).is_none());
        assert!(skip_reason(&env_of(&[("CUBINS_NO_BUILD", "0")])).is_none());
        assert!(skip_reason(&env_of(&[("CUBINS_NO_BUILD", "1")]))
            .unwrap()
            .contains("CUBINS_NO_BUILD"));
        assert!(skip_reason(&env_of(&[("DOCS_RS", "1")]))
            .unwrap()
            .contains("DOCS_RS"));
    }
}
