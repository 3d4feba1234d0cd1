//! What the `cubins` build script does, as a library so it can be tested: select arches,
//! find the toolchain and compile through the cache and inspect (or load verified prebuilt
//! artifacts and their reports, [`crate::prebuilt`]), check contracts, generate the registry
//! and launchers.

use crate::analyze::analyze_cubin;
use crate::arch::{Arch, ArchError, DEFAULT};
use crate::manifest::Manifest;
use crate::model::CubinReport;
use crate::pipeline::{self, BuildOutput, Plan};
use crate::toolchain::cache::{self, Cache};
use crate::toolchain::Toolchain;
use crate::{contract, launcher, prebuilt, registry_gen};
use std::fs;
use std::path::{Path, PathBuf};

/// Environment variables the build reads (each gets `cargo:rerun-if-env-changed`).
pub const ENV_VARS: &[&str] = &[
    ARCHS_ENV,
    COMPUTE_CAP_ENV,
    contract::LEVEL_ENV,
    "CUBINS_NO_BUILD",
    "CUBINS_CACHE_DIR",
    "CUBINS_NVCC_WRAPPER",
    prebuilt::ENV,
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

/// Inputs of a build-script run.
pub struct Context {
    pub manifest_dir: PathBuf,
    pub out_dir: PathBuf,
    pub jobs: usize,
}

/// Runs the whole build; returns the message to print on failure.
pub fn run(ctx: &Context) -> Result<(), String> {
    let env = |k: &str| std::env::var(k).ok();
    for v in ENV_VARS {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let cuda_dir = ctx.manifest_dir.join("cuda");
    // A folder is watched whole (cargo scans it), headers in cuda/include/ too.
    println!("cargo:rerun-if-changed={}", cuda_dir.display());
    println!(
        "cargo:rerun-if-changed={}",
        cuda_dir.join("kernels.toml").display()
    );
    let registry_path = ctx.out_dir.join("registry.rs");
    let launchers_path = ctx.out_dir.join("launchers.rs");

    if let Some(reason) = skip_reason(&env) {
        write(&registry_path, &registry_gen::empty(reason))?;
        // The launchers come from the manifest alone: without cubins there is nothing to check.
        let manifest =
            Manifest::load(&cuda_dir.join("kernels.toml")).map_err(|e| format!("cubins: {e}"))?;
        let launchers = launcher::generate(&manifest, &[])
            .map_err(|errs| format!("cubins: {}", errs.join("\n")))?;
        write(&launchers_path, &launchers)?;
        return Ok(());
    }

    let (archs, _) = select_archs(&env).map_err(|e| format!("cubins: {e}"))?;
    let level = contract::level_from_env(env(contract::LEVEL_ENV).as_deref())
        .map_err(|e| format!("cubins: {e}"))?;
    let source = prebuilt::choose(&env, &ctx.manifest_dir).map_err(|e| e.to_string())?;
    if let prebuilt::Source::Nvcc(tc) = &source {
        println!("cargo:rerun-if-changed={}", tc.nvcc.display());
        for &a in &archs {
            tc.check_arch(a).map_err(|e| e.to_string())?;
        }
    }
    let manifest =
        Manifest::load(&cuda_dir.join("kernels.toml")).map_err(|e| format!("cubins: {e}"))?;
    let plan = kernel_plan(&cuda_dir, archs.clone(), &manifest)?;
    let Kernels {
        mut build,
        reports,
        toolkit,
        declarations,
        origin,
    } = match source {
        prebuilt::Source::Nvcc(tc) => compile_here(ctx, &env, &tc, &plan, &manifest)?,
        prebuilt::Source::Prebuilt { dir, no_nvcc } => {
            prebuilt_kernels(&dir, no_nvcc.as_ref(), &plan, &manifest)?
        }
    };
    let flat: Vec<(String, &CubinReport)> = build
        .files
        .iter()
        .zip(&reports)
        .flat_map(|(f, rs)| rs.iter().map(move |r| (f.name.clone(), r)))
        .collect();
    let outcome = contract::check_all(&manifest, &flat).at_level(level);
    for w in &outcome.warnings {
        println!("cargo:warning={}", w.replace('\n', " | "));
    }
    if !outcome.errors.is_empty() {
        return Err(format!(
            "cubins: kernel contract violations:\n\n{}",
            outcome.errors.join("\n\n")
        ));
    }
    let (launchers, unchecked) = launcher::generate_and_check(&manifest, &flat, &declarations)
        .map_err(|errs| {
            format!(
                "cubins: typed launchers disagree with the cubins' parameter tables or the kernels' declarations:\n{}",
                errs.join("\n")
            )
        })?;
    for u in &unchecked {
        println!("cargo:warning=cubins: {u}");
    }

    let artifacts = ctx.out_dir.join("artifacts");
    let ptx_copies = stage_artifacts(&mut build, &artifacts)?;
    let report_json = serde_json::to_string(&ReportsFile::new(&toolkit, &build, &reports))
        .map_err(|e| e.to_string())?;
    write(&ctx.out_dir.join("reports.json"), &report_json)?;
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
    write(&registry_path, &registry)?;
    write(&launchers_path, &launchers)?;
    fs::write(ctx.out_dir.join("compiled.txt"), build.compiled.join("\n"))
        .map_err(|e| e.to_string())?;
    Ok(())
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
    ctx: &Context,
    env: &dyn Fn(&str) -> Option<String>,
    tc: &Toolchain,
    plan: &Plan,
    manifest: &Manifest,
) -> Result<Kernels, String> {
    let cache_root = cache::dir_for_build_script(env, &ctx.out_dir);
    let cache = Cache::new(cache_root.clone())
        .map_err(|e| format!("cubins: cache {}: {e}", cache_root.display()))?;
    let build = pipeline::build(tc, plan, &cache, ctx.jobs).map_err(|e| format!("cubins: {e}"))?;
    for note in &build.cache_notes {
        println!("cargo:warning=cubins: {note}");
    }
    let cuda_dir = &plan.source_dir;
    let toolkit_root = tc.nvcc.parent().and_then(Path::parent).unwrap_or(cuda_dir);
    for dep in deps_to_watch(
        &build.all_deps(),
        &ctx.manifest_dir,
        &[cuda_dir, toolkit_root],
    ) {
        println!("cargo:rerun-if-changed={}", dep.display());
    }
    let reports = inspect(&build, manifest)?;
    // Element types come from the kernels' own declarations (nvcc -E, see launcher::signature).
    let declarations = launcher::signature::of_build(tc, &build, &plan.flags, ctx.jobs);
    Ok(Kernels {
        build,
        reports,
        toolkit: (tc.version.full.clone(), tc.version.major_minor()),
        declarations,
        origin: registry_gen::Origin::Nvcc,
    })
}

/// The verified prebuilt artifacts of `plan` in `dir` ([`prebuilt::load`]); `no_nvcc` is set
/// when they are used because no nvcc was found, not because [`prebuilt::ENV`] asked.
fn prebuilt_kernels(
    dir: &Path,
    no_nvcc: Option<&crate::toolchain::NvccNotFound>,
    plan: &Plan,
    manifest: &Manifest,
) -> Result<Kernels, String> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let loaded = prebuilt::load(dir, plan, manifest).map_err(|e| match no_nvcc {
        None => format!("cubins: {e}"),
        Some(n) => {
            format!("{n}\n\nThe crate's prebuilt kernels cannot serve this build either: {e}")
        }
    })?;
    for folder in &loaded.folders {
        println!("cargo:rerun-if-changed={}", folder.display());
    }
    if no_nvcc.is_some() {
        println!(
            "cargo:warning=cubins: no nvcc found: embedding the verified prebuilt kernels of {}",
            dir.display()
        );
    }
    Ok(Kernels {
        build: loaded.build,
        reports: loaded.reports,
        toolkit: (loaded.toolkit, loaded.toolkit_major_minor),
        declarations: loaded.declarations,
        origin: registry_gen::Origin::Prebuilt,
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

/// The build's plan for the kernel folder `cuda_dir`. `cargo xtask build` compiles this same
/// plan ahead of cargo (to show progress), so both must make it here, or cache keys differ.
pub fn kernel_plan(cuda_dir: &Path, archs: Vec<Arch>, manifest: &Manifest) -> Result<Plan, String> {
    Plan::discover(cuda_dir, archs)
        .map_err(|e| format!("cubins: reading {}: {e}", cuda_dir.display()))?
        .with_arch_specific(manifest.arch_specific_files())
        .map_err(|e| format!("cubins: {}: {e}", cuda_dir.join("kernels.toml").display()))
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

fn write(path: &Path, text: &str) -> Result<(), String> {
    // Leave an unchanged file untouched so rustc's fingerprint does not move.
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs::write(path, text).map_err(|e| format!("cubins: writing {}: {e}", path.display()))
}

fn inspect(build: &BuildOutput, manifest: &Manifest) -> Result<Vec<Vec<CubinReport>>, String> {
    build
        .files
        .iter()
        .map(|f| {
            f.cubins
                .iter()
                .map(|c| {
                    analyze_cubin(c.arch, &c.outputs, manifest).map_err(|e| {
                        format!(
                            "cubins: inspecting {} for {}: {e}",
                            f.source.display(),
                            c.arch
                        )
                    })
                })
                .collect()
        })
        .collect()
}

/// Copies artifacts and their tool outputs into `dir` (what a reviewer opens) and points the
/// build at the copies: `include_bytes!` must not read from a cache that `CUBINS_CACHE_DIR`
/// users may clean. PTX gets a trailing NUL for `cuModuleLoadData`.
fn stage_artifacts(build: &mut BuildOutput, dir: &Path) -> Result<Vec<Option<PathBuf>>, String> {
    fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let copy = |name: String, bytes: &[u8]| -> Result<PathBuf, String> {
        let p = dir.join(name);
        if fs::read(&p).ok().as_deref() != Some(bytes) {
            fs::write(&p, bytes).map_err(|e| format!("cubins: writing {}: {e}", p.display()))?;
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

/// `OUT_DIR/reports.json`: every cubin's report with the build identity, for tests and tools.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct ReportsFile {
    pub toolkit: String,
    pub toolkit_major_minor: String,
    pub files: Vec<FileEntry>,
}

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct FileEntry {
    pub name: String,
    pub source_digest: String,
    pub cubins: Vec<CubinEntry>,
}

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct CubinEntry {
    pub sha256: String,
    pub report: CubinReport,
}

impl ReportsFile {
    /// `toolkit`: full version and `major.minor`.
    fn new(
        toolkit: &(String, String),
        build: &BuildOutput,
        reports: &[Vec<CubinReport>],
    ) -> ReportsFile {
        ReportsFile {
            toolkit: toolkit.0.clone(),
            toolkit_major_minor: toolkit.1.clone(),
            files: build
                .files
                .iter()
                .zip(reports)
                .map(|(f, rs)| FileEntry {
                    name: f.name.clone(),
                    source_digest: f.source_digest.clone(),
                    cubins: f
                        .cubins
                        .iter()
                        .zip(rs)
                        .map(|(c, r)| CubinEntry {
                            sha256: c.sha256.clone(),
                            report: r.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
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
