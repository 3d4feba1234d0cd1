//! The first step of `cargo xtask build`: compiles the kernels the `cubins` build script is
//! about to ask for, with its plan and into its cache, printing a line per nvcc job. The
//! build script then finds every artifact cached and only inspects and embeds them, so
//! cargo's one progress bar no longer hides minutes of nvcc.

use crate::{root, Result};
use cubins_build::builder::{kernel_plan, select_archs, skip_reason};
use cubins_build::manifest::Manifest;
use cubins_build::pipeline::{build_observed, Progress};
use cubins_build::toolchain::cache::{self, Cache};
use cubins_build::toolchain::nvcc::Job;
use cubins_build::toolchain::Toolchain;
use cubins_build::Arch;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The cargo features that `cargo build ARGS` enables on `cubins` (`--features a,b`,
/// `--features=a`, `-F a`, `cubins/a`; `--all-features` enables every arch feature).
pub fn features_in(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let list = match a.as_str() {
            "--all-features" => {
                out.extend(cubins_build::arch::SUPPORTED.iter().map(Arch::feature_name));
                continue;
            }
            "--features" | "-F" => it.next().cloned().unwrap_or_default(),
            _ => match a
                .strip_prefix("--features=")
                .or_else(|| a.strip_prefix("-F"))
            {
                Some(v) => v.trim_start_matches('=').to_string(),
                None => continue,
            },
        };
        out.extend(
            list.split([',', ' '])
                .filter(|f| !f.is_empty())
                .map(|f| f.strip_prefix("cubins/").unwrap_or(f).to_string()),
        );
    }
    out.sort();
    out.dedup();
    out
}

/// The environment the build script will see: cargo's `CARGO_FEATURE_*` for `features`,
/// everything else (`CUBINS_ARCHS`, `NVCC`, ...) from `base`.
pub fn build_script_env(
    features: Vec<String>,
    base: impl Fn(&str) -> Option<String>,
) -> impl Fn(&str) -> Option<String> {
    move |k: &str| match k.strip_prefix("CARGO_FEATURE_") {
        Some(f) => features
            .iter()
            .any(|x| x.replace('-', "_").eq_ignore_ascii_case(f))
            .then(|| "1".to_string()),
        None => base(k),
    }
}

/// Compiles what `cargo build ARGS` will need into the cache in `build_dir`.
pub fn run(args: &[String], build_dir: &Path) -> Result {
    let env = build_script_env(features_in(args), |k| std::env::var(k).ok());
    if let Some(reason) = skip_reason(&env) {
        println!("xtask kernels: none to compile ({reason})");
        return Ok(());
    }
    if let Some(dir) = cubins_build::prebuilt::dir_from_env(&env, cubins_build::prebuilt::ENV)? {
        println!(
            "xtask kernels: none to compile (the build embeds the prebuilt kernels of {})",
            dir.display()
        );
        return Ok(());
    }
    let (archs, _) = select_archs(&env)?;
    let root = root();
    let tc = Toolchain::discover(&root)?;
    for &a in &archs {
        tc.check_arch(a)?;
    }
    let cuda = root.join("cuda");
    let manifest_path = cuda.join("kernels.toml");
    let manifest = Manifest::load(&manifest_path)?;
    let plan = kernel_plan(&cuda, &manifest_path, archs.clone(), &manifest)?;
    let cache_dir = cache::dir_for_target_dir(&env, build_dir);
    let cache = Cache::new(cache_dir.clone())?;
    let total = plan.jobs().len();
    let names: Vec<String> = archs.iter().map(Arch::sm_name).collect();
    println!(
        "xtask kernels: {total} artifacts for {} (CUDA {}, cache {})",
        names.join(", "),
        tc.version.full,
        cache_dir.display()
    );
    let done = AtomicUsize::new(0);
    let compiled = AtomicUsize::new(0);
    let started = Instant::now();
    let observe = |job: &Job, p: Progress| {
        let n = match p {
            Progress::Compiling => done.load(Ordering::Relaxed),
            _ => done.fetch_add(1, Ordering::Relaxed) + 1,
        };
        if matches!(p, Progress::Compiled { .. }) {
            compiled.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(line) = progress_line(job, p, n, total) {
            println!("{line}");
        }
    };
    let parallelism = std::thread::available_parallelism().map_or(1, |n| n.get());
    let build = build_observed(&tc, &plan, &cache, parallelism, &observe)?;
    for note in &build.cache_notes {
        println!("xtask kernels: note: {note}");
    }
    let compiled = compiled.into_inner();
    println!(
        "xtask kernels: ready, {compiled} compiled, {} from the cache, {:.0} s",
        total - compiled,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `  nvcc  copy.cu  sm_90 cubin` when nvcc starts, `  [ 3/37] copy.cu  sm_90 cubin  12.4 s`
/// when it is done; nothing for a cached artifact (the closing line counts those).
pub fn progress_line(job: &Job, p: Progress, done: usize, total: usize) -> Option<String> {
    let file = job.source.file_name()?.to_string_lossy();
    let what = format!("{file}  {} {}", job.arch.sm_name(), job.kind.extension());
    match p {
        Progress::Cached => None,
        Progress::Compiling => Some(format!("  nvcc  {what}")),
        Progress::Compiled { seconds } => {
            let w = total.to_string().len();
            Some(format!("  [{done:>w$}/{total}] {what}  {seconds:.1} s"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubins_build::toolchain::nvcc::OutputKind;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn features_in_every_spelling_cargo_takes() {
        assert_eq!(
            features_in(&args(&["--release", "--features", "sm89,sm90"])),
            ["sm89", "sm90"]
        );
        assert_eq!(
            features_in(&args(&[
                "--features=cubins/sm90a cust",
                "-F",
                "sm80",
                "-Fsm86"
            ])),
            ["cust", "sm80", "sm86", "sm90a"]
        );
        assert!(features_in(&args(&["--release", "-p", "cubins"])).is_empty());
        let all = features_in(&args(&["--all-features"]));
        assert!(all.contains(&"sm120".to_string()) && all.contains(&"sm90a".to_string()));
    }

    #[test]
    fn the_build_script_env_has_the_features_and_nothing_else_of_cargo() {
        let env = build_script_env(vec!["sm90a".into(), "sm89".into()], |k| {
            (k == "NVCC").then(|| "/x/nvcc".to_string())
        });
        assert_eq!(env("NVCC").as_deref(), Some("/x/nvcc"));
        assert_eq!(env("CARGO_FEATURE_SM90A").as_deref(), Some("1"));
        assert_eq!(env("CARGO_FEATURE_SM89").as_deref(), Some("1"));
        assert_eq!(env("CARGO_FEATURE_SM80"), None);
        let (archs, _) = select_archs(&env).unwrap();
        assert_eq!(archs, [Arch::new(89), Arch::specific(90)]);
    }

    #[test]
    fn a_line_when_nvcc_starts_and_one_with_its_seconds() {
        let job = Job {
            source: "/w/cuda/gemm_bf16.cu".into(),
            arch: Arch::new(90),
            kind: OutputKind::Cubin,
            flags: vec![],
        };
        assert_eq!(
            progress_line(&job, Progress::Compiling, 2, 37).as_deref(),
            Some("  nvcc  gemm_bf16.cu  sm_90 cubin")
        );
        assert_eq!(
            progress_line(&job, Progress::Compiled { seconds: 84.25 }, 3, 37).as_deref(),
            Some("  [ 3/37] gemm_bf16.cu  sm_90 cubin  84.2 s")
        );
        assert_eq!(progress_line(&job, Progress::Cached, 4, 37), None);
    }
}
