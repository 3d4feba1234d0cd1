//! The build and test entry points the README names.

use crate::{prebuild, root, setup, stub, Result};
use cubins_build::manifest::Manifest;
use cubins_build::report;
use cubins_build::schema::ReportsFile;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A cargo command in the workspace root. Its stdin is empty: cargo hands its own to the
/// `rustc -` it runs to learn the target, which then compiles whatever a CI runner's stdin
/// holds.
pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root()).stdin(Stdio::null());
    c
}

fn status(mut c: Command) -> Result {
    let s = c.status()?;
    if s.success() {
        Ok(())
    } else {
        Err(format!("{c:?} failed ({s})").into())
    }
}

/// The main job: toolchain, kernels for the selected arches (a line per nvcc job), `cargo
/// build`, and a summary of one line per kernel file x arch.
pub fn build(args: &[String]) -> Result {
    setup::run()?;
    let ws = Workspace::of(args)?;
    prebuild::run(args, &ws.build_dir)?;
    let reports = cargo_build(args, &ws.cubins_id)?
        .map(|d| d.join("reports.json"))
        .filter(|r| r.is_file());
    match reports {
        Some(path) => print_summary(&path),
        None => {
            println!("xtask build: done (no kernel reports: the build had no kernels to inspect)");
            Ok(())
        }
    }
}

/// One line per kernel file x arch of the build whose `reports.json` is at `path`.
fn print_summary(path: &Path) -> Result {
    // `report --build` shows the newest reports: make them this build's, even when unchanged.
    std::fs::File::options()
        .append(true)
        .open(path)?
        .set_modified(std::time::SystemTime::now())?;
    let reports: ReportsFile = serde_json::from_str(&std::fs::read_to_string(path)?)
        .map_err(|e| format!("{}: not a reports file: {e}", path.display()))?;
    let manifest = Manifest::load(&root().join("cuda/kernels.toml"))?;
    println!();
    print!("{}", report::build_summary(&reports, &manifest));
    println!("full per-kernel table: cargo xtask inspect report --build");
    Ok(())
}

/// What `cargo metadata` says about the workspace.
struct Workspace {
    /// Where cargo puts build-script outputs (and so the default kernel cache).
    build_dir: PathBuf,
    /// Where cargo puts final artifacts (`cargo package` its `package/` folder).
    target_dir: PathBuf,
    /// The `cubins` package, as cargo's messages name it.
    cubins_id: String,
}

impl Workspace {
    /// `--target-dir` in `args` moves the build folder as it does for `cargo build`.
    fn of(args: &[String]) -> Result<Workspace> {
        let mut c = cargo();
        c.args(["metadata", "--no-deps", "--format-version", "1"])
            .stderr(Stdio::inherit());
        let out = c.output()?;
        if !out.status.success() {
            return Err(format!("{c:?} failed ({})", out.status).into());
        }
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let dir = |key: &str| doc[key].as_str().map(PathBuf::from);
        let target_dir = target_dir_arg(args)
            .or_else(|| dir("target_directory"))
            .ok_or("cargo metadata names no target directory")?;
        let build_dir = target_dir_arg(args)
            .or_else(|| dir("build_directory"))
            .unwrap_or_else(|| target_dir.clone());
        let cubins_id = doc["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == "cubins")
            .and_then(|p| p["id"].as_str())
            .ok_or("cargo metadata lists no `cubins` package")?
            .to_string();
        Ok(Workspace {
            build_dir,
            target_dir,
            cubins_id,
        })
    }
}

/// Cargo's target directory for the workspace (`CARGO_TARGET_DIR` and config included).
pub fn target_dir() -> Result<PathBuf> {
    Ok(Workspace::of(&[])?.target_dir)
}

/// The workspace's kernel cache: the one `cargo build` uses (`CUBINS_CACHE_DIR`, else in
/// cargo's build directory).
pub fn kernel_cache_dir() -> Result<PathBuf> {
    let build_dir = Workspace::of(&[])?.build_dir;
    Ok(cubins_build::toolchain::cache::dir_for_target_dir(
        &|k| std::env::var(k).ok(),
        &build_dir,
    ))
}

/// `--target-dir DIR` or `--target-dir=DIR`, relative to the workspace root like cargo's.
fn target_dir_arg(args: &[String]) -> Option<PathBuf> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix("--target-dir") {
            Some("") => it.next().cloned(),
            Some(v) => v.strip_prefix('=').map(str::to_string),
            None => None,
        };
        if let Some(v) = value {
            return Some(root().join(v));
        }
    }
    None
}

/// `cargo build ARGS`; returns the `OUT_DIR` of `cubins`' build script, from cargo's JSON
/// messages (unless ARGS choose their own message format).
fn cargo_build(args: &[String], cubins_id: &str) -> Result<Option<PathBuf>> {
    let mut c = cargo();
    c.arg("build").args(args);
    if args.iter().any(|a| a.starts_with("--message-format")) {
        status(c)?;
        return Ok(None);
    }
    c.arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let out = c.output()?;
    if !out.status.success() {
        return Err(format!("cargo build failed ({})", out.status).into());
    }
    Ok(out_dir_of(&String::from_utf8_lossy(&out.stdout), cubins_id))
}

/// The `out_dir` of `package_id`'s build script in cargo's JSON messages.
fn out_dir_of(messages: &str, package_id: &str) -> Option<PathBuf> {
    messages
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "build-script-executed" && m["package_id"] == package_id)
        .find_map(|m| m["out_dir"].as_str().map(PathBuf::from))
}

/// Variables that select the arches of a build (`build_script::select_archs`).
const ARCH_VARS: &[&str] = &["CUBINS_ARCHS", "CUDA_COMPUTE_CAP"];

/// The whole test suite over every supported arch (unless [`ARCH_VARS`] narrow it), runtime
/// included, on a machine without a GPU or driver (kernels
/// compiled first, a line per nvcc job, as for [`build`]): `cust`
/// links against the stub, and the tests load it through `LD_LIBRARY_PATH` (set here only:
/// cargo itself never puts a folder outside `target/<profile>/` on the loader path).
pub fn test(args: &[String]) -> Result {
    setup::run()?;
    // Every supported arch, as CI builds: contracts and snapshots of each are checked.
    if ARCH_VARS.iter().all(|v| std::env::var_os(v).is_none()) {
        println!("xtask test: CUBINS_ARCHS=all (set CUBINS_ARCHS or CUDA_COMPUTE_CAP to test fewer arches)");
        std::env::set_var("CUBINS_ARCHS", "all");
    }
    let stub = stub::run()?;
    let cargo_args: Vec<String> = [
        "--workspace",
        "--no-fail-fast",
        "--features",
        "cubins/cust,cubins/cudarc,axpy-kernels/cust,axpy-kernels/cudarc,decoder-step/cust,decoder-step/cudarc",
    ]
    .into_iter()
    .map(String::from)
    .chain(args.iter().cloned())
    .collect();
    prebuild::run(&cargo_args, &Workspace::of(args)?.build_dir)?;
    let mut c = cargo();
    c.env("CUDA_LIBRARY_PATH", &stub)
        .env("LD_LIBRARY_PATH", stub::loader_path(&stub))
        .arg("test")
        .args(&cargo_args);
    status(c)
}

pub fn inspect(args: &[String]) -> Result {
    let mut c = cargo();
    c.args(["run", "-p", "cubins-build", "--bin", "cubins-inspect", "--"])
        .args(args);
    status(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_build_scripts_out_dir_in_cargo_messages() {
        let id = "path+file:///w#cubins@0.1.0";
        let messages = format!(
            "{}\n{}\nnot json\n{}\n",
            r#"{"reason":"build-script-executed","package_id":"registry+https://x#half@2.4.0","out_dir":"/t/debug/build/half-1/out"}"#,
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w#cubins@0.1.0"}"#,
            r#"{"reason":"build-script-executed","package_id":"path+file:///w#cubins@0.1.0","out_dir":"/t/debug/build/cubins-2/out"}"#,
        );
        assert_eq!(
            out_dir_of(&messages, id),
            Some(PathBuf::from("/t/debug/build/cubins-2/out"))
        );
        assert_eq!(out_dir_of("", id), None);
    }

    #[test]
    fn target_dir_argument_in_both_spellings() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            target_dir_arg(&args(&["--release", "--target-dir", "/t"])),
            Some(PathBuf::from("/t"))
        );
        assert_eq!(
            target_dir_arg(&args(&["--target-dir=rel"])),
            Some(root().join("rel"))
        );
        assert_eq!(target_dir_arg(&args(&["--release"])), None);
    }
}
