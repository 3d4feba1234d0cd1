//! Compiles every kernel file for its arches (the selected ones; arch-specific variants only
//! for the files that declare them): plans the jobs, runs them in
//! parallel through the cache, and captures what inspection needs next to each artifact.

use crate::arch::{archs_for_file, Arch};
use crate::model::CubinOutputs;
use crate::toolchain::cache::{key_of, sha256_file, sha256_hex, Cache, Corruption, Entry, Lookup};
use crate::toolchain::nvcc::{CompileError, Job, OutputKind};
use crate::toolchain::Toolchain;
use std::collections::VecDeque;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Flags every kernel is compiled with (besides the target and include flags).
pub const BASE_FLAGS: &[&str] = &["-std=c++17", "-O3", "-lineinfo", "--expt-relaxed-constexpr"];

/// What to build.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Directory holding the kernel files (`cuda/`); its `include/` is on the include path.
    pub source_dir: PathBuf,
    /// Kernel files, sorted.
    pub sources: Vec<PathBuf>,
    /// Arches selected, sorted. Each file gets [`Plan::archs_for`] of them, and PTX for the
    /// lowest of those.
    pub archs: Vec<Arch>,
    /// File names (`gemm_wgmma.cu`) built for arch-specific variants; the others get the
    /// plain arch instead. `None`: every file (see [`crate::manifest::Manifest::arch_specific_files`]).
    pub arch_specific_files: Option<Vec<String>>,
    pub flags: Vec<String>,
}

/// `[arch_specific]` names a file that is not a kernel file of the plan's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKernelFile {
    pub name: String,
    pub source_dir: PathBuf,
    /// The kernel files that are there.
    pub available: Vec<String>,
}

impl fmt::Display for UnknownKernelFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[arch_specific] names `{}`, which is not a kernel file in {}; kernel files: {}",
            self.name,
            self.source_dir.display(),
            self.available.join(", ")
        )
    }
}

impl std::error::Error for UnknownKernelFile {}

impl Plan {
    /// Every `*.cu` directly under `source_dir`.
    pub fn discover(source_dir: &Path, archs: Vec<Arch>) -> std::io::Result<Plan> {
        let mut sources: Vec<PathBuf> = fs::read_dir(source_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect();
        sources.sort();
        // nvcc would say only `No such file or directory` for it.
        if let Some(dir) = sources.iter().find(|p| p.is_dir()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{} is a directory, not a kernel file (rename or move it)",
                    dir.display()
                ),
            ));
        }
        let mut flags: Vec<String> = BASE_FLAGS.iter().map(|s| s.to_string()).collect();
        flags.push(format!("-I{}", source_dir.join("include").display()));
        Ok(Plan {
            source_dir: source_dir.to_path_buf(),
            sources,
            archs,
            arch_specific_files: None,
            flags,
        })
    }

    /// Builds arch-specific variants only for `files` (names of `*.cu` files in the source
    /// folder, from `[arch_specific]`); `None` keeps them for every file.
    pub fn with_arch_specific(
        mut self,
        files: Option<&[String]>,
    ) -> Result<Plan, UnknownKernelFile> {
        // Checked against the folder, not `sources`: callers may narrow those to one file.
        if let Some(name) = files.into_iter().flatten().find(|n| {
            !n.ends_with(".cu")
                || n.contains(['/', '\\'])
                || !self.source_dir.join(n.as_str()).is_file()
        }) {
            let mut available: Vec<String> = fs::read_dir(&self.source_dir)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.ends_with(".cu"))
                .collect();
            available.sort();
            return Err(UnknownKernelFile {
                name: name.clone(),
                source_dir: self.source_dir.clone(),
                available,
            });
        }
        self.arch_specific_files = files.map(<[String]>::to_vec);
        Ok(self)
    }

    /// The arches `source` is built for: the selected ones, with arch-specific variants
    /// mapped to their plain arch unless the file is declared arch-specific.
    pub fn archs_for(&self, source: &Path) -> Vec<Arch> {
        let name = source.file_name().unwrap_or_default().to_string_lossy();
        let specific = self
            .arch_specific_files
            .as_ref()
            .map_or(true, |files| files.iter().any(|f| *f == name));
        archs_for_file(&self.archs, specific)
    }

    /// Flags that identify the build (include paths are machine-specific and left out).
    pub fn flags_for_identity(&self) -> Vec<String> {
        self.flags
            .iter()
            .filter(|f| !f.starts_with("-I"))
            .cloned()
            .collect()
    }

    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs = Vec::new();
        for src in &self.sources {
            let archs = self.archs_for(src);
            for &arch in &archs {
                jobs.push(Job {
                    source: src.clone(),
                    arch,
                    kind: OutputKind::Cubin,
                    flags: self.flags.clone(),
                });
            }
            if let Some(&lowest) = archs.first() {
                jobs.push(Job {
                    source: src.clone(),
                    arch: lowest,
                    kind: OutputKind::Ptx,
                    flags: self.flags.clone(),
                });
            }
        }
        jobs
    }
}

/// One artifact with its identity and captured tool outputs.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub arch: Arch,
    pub kind: OutputKind,
    /// Where the artifact lies (inside the cache's object folder).
    pub path: PathBuf,
    /// The artifact, as verified against its cache entry's sums: what a build embeds (the
    /// file at `path` may change or go after the build).
    pub bytes: Vec<u8>,
    pub sha256: String,
    /// Dependencies nvcc reported (the source and every header, system ones too).
    pub deps: Vec<PathBuf>,
    /// For cubins: ptxas log and cuobjdump outputs.
    pub outputs: CubinOutputs,
    /// Whether nvcc ran for it in this build (false: taken from the cache).
    pub compiled: bool,
}

/// All artifacts of one kernel file.
#[derive(Debug, Clone)]
pub struct KernelFileBuild {
    /// `copy` for `cuda/copy.cu`.
    pub name: String,
    pub source: PathBuf,
    /// SHA-256 over the source and the headers it includes from the source tree.
    pub source_digest: String,
    pub cubins: Vec<Artifact>,
    pub ptx: Option<Artifact>,
}

#[derive(Debug, Clone)]
pub struct BuildOutput {
    pub files: Vec<KernelFileBuild>,
    /// Artifact names nvcc produced in this run (empty on a cache-only rebuild).
    pub compiled: Vec<String>,
    /// One line per corrupt cache entry this run found, evicted and compiled again, for the
    /// caller to show (a build script prints each as a `cargo:warning`).
    pub cache_notes: Vec<String>,
}

impl BuildOutput {
    /// Every dependency of every job, deduplicated (for `cargo:rerun-if-changed`).
    pub fn all_deps(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self
            .files
            .iter()
            .flat_map(|f| f.cubins.iter().chain(f.ptx.iter()))
            .flat_map(|a| a.deps.iter().cloned())
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    Compile(CompileError),
    Io {
        what: String,
        error: std::io::Error,
    },
    /// cuobjdump failed on a cubin nvcc produced.
    Inspect {
        command: String,
        stderr: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Compile(e) => e.fmt(f),
            BuildError::Io { what, error } => write!(f, "{what}: {error}"),
            BuildError::Inspect { command, stderr } => write!(f, "`{command}` failed:\n{stderr}"),
        }
    }
}

impl std::error::Error for BuildError {}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BuildError {
    let what = what.into();
    move |error| BuildError::Io { what, error }
}

/// Runs the plan's jobs on up to `parallelism` threads through `cache`.
pub fn build(
    tc: &Toolchain,
    plan: &Plan,
    cache: &Cache,
    parallelism: usize,
) -> Result<BuildOutput, BuildError> {
    build_observed(tc, plan, cache, parallelism, &|_, _| {})
}

/// What happens to one job, as [`build_observed`] reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Progress {
    /// Its artifact was in the cache.
    Cached,
    /// nvcc starts on it.
    Compiling,
    /// nvcc (and cuobjdump) finished it, successfully or not.
    Compiled { seconds: f64 },
}

/// [`build`], telling `observe` about every job as it goes (from the worker threads).
pub fn build_observed(
    tc: &Toolchain,
    plan: &Plan,
    cache: &Cache,
    parallelism: usize,
    observe: &(dyn Fn(&Job, Progress) + Sync),
) -> Result<BuildOutput, BuildError> {
    let started = SystemTime::now();
    cache.clean_temporaries(started);
    let jobs = plan.jobs();
    let queue = Mutex::new(jobs.iter().enumerate().collect::<VecDeque<_>>());
    let results: Mutex<Vec<Option<Result<JobOutput, BuildError>>>> =
        Mutex::new(std::iter::repeat_with(|| None).take(jobs.len()).collect());
    let workers = parallelism.clamp(1, jobs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let next = queue.lock().unwrap().pop_front();
                let Some((i, job)) = next else { break };
                let r = run_job(tc, job, cache, observe);
                let failed = r.is_err();
                results.lock().unwrap()[i] = Some(r);
                if failed {
                    queue.lock().unwrap().clear();
                }
            });
        }
    });
    cache.evict(SystemTime::now(), started);
    let results = results.into_inner().unwrap();
    // Report the first failure in plan order (deterministic across runs).
    let mut artifacts = Vec::with_capacity(jobs.len());
    let mut cache_notes = Vec::new();
    for r in results.into_iter().flatten() {
        let out = r?;
        cache_notes.extend(out.note);
        artifacts.push(out.artifact);
    }
    let compiled = jobs
        .iter()
        .zip(&artifacts)
        .filter(|(_, a)| a.compiled)
        .map(|(j, _)| j.artifact_name())
        .collect();
    let mut files = Vec::new();
    // Jobs come grouped by source, as many per file as its arches need.
    let mut it = jobs.iter().zip(artifacts).peekable();
    for src in &plan.sources {
        let mut cubins = Vec::new();
        let mut ptx = None;
        while let Some((job, art)) = it.next_if(|(j, _)| &j.source == src) {
            match job.kind {
                OutputKind::Cubin => cubins.push(art),
                OutputKind::Ptx => ptx = Some(art),
            }
        }
        let deps = cubins.first().map(|a| a.deps.clone()).unwrap_or_default();
        files.push(KernelFileBuild {
            name: src
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            source: src.clone(),
            source_digest: source_digest(&plan.source_dir, &deps)
                .map_err(io_err("hashing the source closure"))?,
            cubins,
            ptx,
        });
    }
    Ok(BuildOutput {
        files,
        compiled,
        cache_notes,
    })
}

/// Digest of the kernel file and the headers it includes from under `source_dir`,
/// by relative path and contents (toolkit headers are identified by the toolkit version).
pub fn source_digest(source_dir: &Path, deps: &[PathBuf]) -> std::io::Result<String> {
    Ok(closure_digest(&source_closure(source_dir, deps)?))
}

/// The files of `deps` under `source_dir`: (path relative to it with `/`, SHA-256), sorted.
pub fn source_closure(
    source_dir: &Path,
    deps: &[PathBuf],
) -> std::io::Result<Vec<(String, String)>> {
    let root = source_dir.canonicalize()?;
    let mut parts: Vec<(String, String)> = Vec::new();
    for d in deps {
        let Ok(c) = d.canonicalize() else { continue };
        if let Ok(rel) = c.strip_prefix(&root) {
            parts.push((rel.to_string_lossy().replace('\\', "/"), sha256_file(&c)?));
        }
    }
    parts.sort();
    Ok(parts)
}

/// The [`source_digest`] of a closure [`source_closure`] listed.
pub fn closure_digest(closure: &[(String, String)]) -> String {
    let flat: Vec<&str> = closure
        .iter()
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    key_of(&flat)
}

fn manifest_key(tc: &Toolchain, job: &Job) -> String {
    let arch = job.arch.sm_name();
    let kind = job.kind.extension();
    // Nothing that depends on the checkout path: the source by its name in the kernel
    // folder, include folders relative to it (the contents count in the object key).
    let src = job.source_name();
    let flags = job.portable_flags();
    let wrapper = tc.wrapper.as_deref().unwrap_or("");
    let mut parts = vec![
        // v2: entries carry SHA256SUMS and dependency lists a checksum.
        "cubins-cache-v2",
        crate::portable::PROCEDURE,
        &tc.version.banner,
        &tc.cuobjdump_banner,
        wrapper,
        &arch,
        kind,
        &src,
    ];
    parts.extend(flags.iter().map(String::as_str));
    key_of(&parts)
}

const ARTIFACT: &str = "artifact";
const PTXAS_LOG: &str = "ptxas.log";
const RES_USAGE: &str = "res-usage.txt";
const SASS: &str = "sass.txt";
const ELF: &str = "elf.txt";

/// The files a job's cache entry holds.
fn entry_files(kind: OutputKind) -> &'static [&'static str] {
    match kind {
        OutputKind::Cubin => &[ARTIFACT, PTXAS_LOG, RES_USAGE, SASS, ELF],
        OutputKind::Ptx => &[ARTIFACT],
    }
}

/// A finished job: its artifact, and a line for the user if its cache entry was corrupt.
struct JobOutput {
    artifact: Artifact,
    note: Option<String>,
}

fn run_job(
    tc: &Toolchain,
    job: &Job,
    cache: &Cache,
    observe: &(dyn Fn(&Job, Progress) + Sync),
) -> Result<JobOutput, BuildError> {
    let mkey = manifest_key(tc, job);
    let cache = &cache.clone().with_deps_base(job.work_dir());
    let corrupt = match cache.lookup(&mkey, entry_files(job.kind)) {
        Lookup::Hit(entry) => {
            observe(job, Progress::Cached);
            return Ok(JobOutput {
                artifact: artifact_of(job, entry, false),
                note: None,
            });
        }
        Lookup::Miss => None,
        Lookup::Corrupt(c) => Some(c),
    };
    observe(job, Progress::Compiling);
    let started = std::time::Instant::now();
    let compiled = compile_job(tc, job, cache, &mkey);
    observe(
        job,
        Progress::Compiled {
            seconds: started.elapsed().as_secs_f64(),
        },
    );
    let (artifact, replaced) = compiled?;
    Ok(JobOutput {
        artifact,
        note: corrupt.or(replaced).map(|c| corruption_note(job, &c)),
    })
}

fn corruption_note(job: &Job, c: &Corruption) -> String {
    format!(
        "the cache entry of {} failed verification ({}: {}); evicted it and compiled again",
        job.artifact_name(),
        c.path.display(),
        c.problem
    )
}

/// Runs nvcc and cuobjdump for a job the cache lacks and commits the result; returns the
/// stored artifact and the corrupt entry the commit replaced, if any.
fn compile_job(
    tc: &Toolchain,
    job: &Job,
    cache: &Cache,
    mkey: &str,
) -> Result<(Artifact, Option<Corruption>), BuildError> {
    // Deleted on every early return: a failed compile leaves nothing in `tmp/`.
    let scratch = cache
        .scratch()
        .map_err(io_err("creating a scratch folder in the cache"))?;
    let out = scratch.path().join(ARTIFACT);
    let compiled = crate::portable::compile(tc, job, &out, scratch.path())?;
    let stderr = compiled.log;
    // Recorded relative to the kernel folder where they can be: one list for every checkout.
    let deps: Vec<PathBuf> = compiled
        .deps
        .iter()
        .map(|d| crate::portable::cache_dep_name(d, job.work_dir()))
        .collect();
    if job.kind == OutputKind::Cubin {
        fs::write(scratch.path().join(PTXAS_LOG), &stderr)
            .map_err(io_err("writing the ptxas log"))?;
        for (file, args) in [
            (RES_USAGE, &["-res-usage"][..]),
            (SASS, &["-sass"][..]),
            (ELF, &["-elf"][..]),
        ] {
            let text = cuobjdump(tc, args, &out)?;
            fs::write(scratch.path().join(file), text)
                .map_err(io_err(format!("writing {file}")))?;
        }
    }
    let committed = cache
        .commit(mkey, scratch, &deps, entry_files(job.kind))
        .map_err(io_err("storing the artifact in the cache"))?;
    Ok((artifact_of(job, committed.entry, true), committed.replaced))
}

fn cuobjdump(tc: &Toolchain, args: &[&str], cubin: &Path) -> Result<String, BuildError> {
    let out = std::process::Command::new(&tc.cuobjdump)
        .args(args)
        .arg(cubin)
        .output()
        .map_err(io_err(format!("running {}", tc.cuobjdump.display())))?;
    if !out.status.success() {
        return Err(BuildError::Inspect {
            command: format!(
                "{} {} {}",
                tc.cuobjdump.display(),
                args.join(" "),
                cubin.display()
            ),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The artifact and tool outputs of a verified cache entry.
fn artifact_of(job: &Job, mut entry: Entry, compiled: bool) -> Artifact {
    let mut text = |f: &str| String::from_utf8_lossy(&entry.take(f)).into_owned();
    let outputs = match job.kind {
        OutputKind::Cubin => CubinOutputs {
            ptxas_log: text(PTXAS_LOG),
            res_usage: text(RES_USAGE),
            sass: text(SASS),
            elf: text(ELF),
        },
        OutputKind::Ptx => CubinOutputs::default(),
    };
    let bytes = entry.take(ARTIFACT);
    Artifact {
        arch: job.arch,
        kind: job.kind,
        path: entry.dir.join(ARTIFACT),
        sha256: sha256_hex(&bytes),
        bytes,
        deps: entry.deps.iter().map(|d| job.work_dir().join(d)).collect(),
        outputs,
        compiled,
    }
}
