//! `cargo xtask gpu-bundle [--out DIR]`: the GPU test binaries and benchmarks, built in
//! release with `sm_90` among the arches, stripped, with a runner script, in one folder that
//! runs on a machine with an NVIDIA driver and no Rust (`bash DIR/run.sh RESULTS all`).
//!
//! Every binary embeds every kernel (tens of MB of cubins and PTX), so the binaries travel as
//! one solid `payload.tar.xz` (the shared bytes compress away); `run.sh` checks the bundle's
//! `SHA256SUMS`, unpacks into a temporary folder, checks each binary against
//! `BINARIES.sha256`, and runs from there.
//!
//! GPU tests are the root crate's `tests/gpu_*.rs` plus `tests/no_device.rs`; benchmarks are
//! every `[[bench]]` with `harness = false`. The binaries link `libcuda.so.1` by name (the
//! link stub at build time, the driver's library where they run); a binary that records a
//! path to the stub is refused.

use crate::{root, stub, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const RUNNER: &str = include_str!("bundle/run.sh");
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Test targets the bundle carries (cargo glob patterns), per package: cubins' own and the
/// example crates': one launches kernels of its own through cubins' runtime, the other runs
/// cubins' ops on both runtimes.
const TEST_TARGETS: &[(&str, &[&str])] = &[
    ("cubins", &["gpu_*", "no_device"]),
    ("axpy-kernels", &["gpu_*"]),
    ("decoder-step", &["gpu_*"]),
];
const DEFAULT_ARCHS: &str = "80;90";

pub fn run(args: &[String]) -> Result {
    let out = parse_out(args)?;
    let archs = archs()?;
    let stub = stub::run()?;
    let mut tests = Vec::new();
    for (package, targets) in TEST_TARGETS {
        tests.extend(build(&stub, &archs, "test", package, targets)?);
    }
    let bench_names = harnessless_benches()?;
    let names: Vec<&str> = bench_names.iter().map(String::as_str).collect();
    let benches = if names.is_empty() {
        vec![]
    } else {
        build(&stub, &archs, "bench", "cubins", &names)?
    };
    if tests.is_empty() {
        return Err("no GPU test binaries were built".into());
    }

    let staging = root().join("target/gpu-bundle-staging");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)?;
    }
    let mut manifest = Vec::new();
    for (folder, binaries) in [("tests", &tests), ("benches", &benches)] {
        std::fs::create_dir_all(staging.join(folder))?;
        for (name, path) in binaries.iter() {
            let dest = staging.join(folder).join(name);
            std::fs::copy(path, &dest)?;
            strip(&dest)?;
            check_no_stub_path(&dest)?;
            manifest.push(format!("{folder}/{name}"));
        }
    }
    if out.exists() {
        std::fs::remove_dir_all(&out)?;
    }
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("BINARIES.sha256"), sums_of(&staging)?)?;
    pack(&staging, &out.join("payload.tar.xz"))?;
    std::fs::write(out.join("run.sh"), RUNNER)?;
    set_executable(&out.join("run.sh"))?;
    std::fs::write(out.join("BUILD.txt"), build_txt(&archs, &manifest))?;
    std::fs::write(out.join("SHA256SUMS"), sums_of(&out)?)?;
    let total = size_of_dir(&out)?;
    if total > MAX_BYTES {
        return Err(format!(
            "the bundle is {} MiB, over the 64 MiB limit",
            total / (1024 * 1024)
        )
        .into());
    }
    println!(
        "xtask gpu-bundle: {} test binaries, {} benchmarks, {:.1} MiB in {}",
        tests.len(),
        benches.len(),
        total as f64 / (1024.0 * 1024.0),
        out.display()
    );
    println!(
        "  run on the GPU machine: bash {}/run.sh RESULTS_DIR all",
        out.display()
    );
    Ok(())
}

fn parse_out(args: &[String]) -> Result<PathBuf> {
    let mut out = root().join("bundle");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = it.next().ok_or("--out needs a folder")?.into(),
            other => {
                return Err(
                    format!("gpu-bundle: unknown argument {other:?} (takes --out DIR)").into(),
                )
            }
        }
    }
    Ok(if out.is_relative() {
        std::env::current_dir()?.join(out)
    } else {
        out
    })
}

/// `CUBINS_ARCHS` for the build: the caller's, if it includes sm_90; else 80 and 90.
fn archs() -> Result<String> {
    match std::env::var("CUBINS_ARCHS")
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        None => Ok(DEFAULT_ARCHS.to_string()),
        Some(v) => {
            let list =
                cubins_build::Arch::parse_list(&v).map_err(|e| format!("CUBINS_ARCHS: {e}"))?;
            if list.iter().any(|a| a.cc == 90) {
                Ok(v)
            } else {
                Err(
                    format!("CUBINS_ARCHS={v:?} lacks sm_90, which the GPU machine (H200) needs")
                        .into(),
                )
            }
        }
    }
}

/// Builds `targets` of kind `kind` (`test` or `bench`) in release; returns (name, executable).
fn build(
    stub: &Path,
    archs: &str,
    kind: &str,
    package: &str,
    targets: &[&str],
) -> Result<Vec<(String, PathBuf)>> {
    let mut c = crate::tasks::cargo();
    c.env("CUDA_LIBRARY_PATH", stub)
        .env("CUBINS_ARCHS", archs)
        .args([
            kind,
            "--no-run",
            "-p",
            package,
            "--features",
            "cust,cudarc",
            "--message-format=json-render-diagnostics",
        ]);
    if kind == "test" {
        // `cargo bench` builds with the bench profile, which inherits release.
        c.arg("--release");
    }
    for t in targets {
        c.args([&format!("--{kind}"), *t]);
    }
    c.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let output = c.output()?;
    if !output.status.success() {
        return Err(format!("{c:?} failed ({})", output.status).into());
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let is_kind = msg["target"]["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|x| x == kind));
        if let (true, Some(name), Some(exe)) = (
            is_kind,
            msg["target"]["name"].as_str(),
            msg["executable"].as_str(),
        ) {
            found.push((name.to_string(), PathBuf::from(exe)));
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

/// Names of the root crate's `[[bench]]` targets with `harness = false`.
fn harnessless_benches() -> Result<Vec<String>> {
    let text = std::fs::read_to_string(root().join("Cargo.toml"))?;
    let doc: toml::Table = text.parse()?;
    let benches = doc
        .get("bench")
        .and_then(|b| b.as_array())
        .cloned()
        .unwrap_or_default();
    Ok(benches
        .iter()
        .filter(|b| b.get("harness").and_then(|h| h.as_bool()) == Some(false))
        .filter_map(|b| b.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect())
}

fn strip(path: &Path) -> Result {
    let status = Command::new("strip").arg("--strip-all").arg(path).status();
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("strip {} failed ({s})", path.display()).into()),
        Err(e) => Err(format!("strip (binutils) is needed to keep the bundle small: {e}").into()),
    }
}

/// The GPU machine must load its own `libcuda.so.1`: no RPATH/RUNPATH may lead to the stub.
fn check_no_stub_path(path: &Path) -> Result {
    let out = Command::new("readelf").arg("-d").arg(path).output()?;
    let dynamic = String::from_utf8_lossy(&out.stdout);
    if let Some(line) = dynamic
        .lines()
        .find(|l| (l.contains("RPATH") || l.contains("RUNPATH")) && l.contains("cuda-stub"))
    {
        return Err(format!(
            "{} records a path to the link stub: {}",
            path.display(),
            line.trim()
        )
        .into());
    }
    Ok(())
}

fn set_executable(path: &Path) -> Result {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

fn build_txt(archs: &str, binaries: &[String]) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(root())
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let dirty = if git(&["status", "--porcelain", "--untracked-files=no"]).is_empty() {
        ""
    } else {
        " (uncommitted changes)"
    };
    format!(
        "cubins GPU bundle, commit {}{dirty}\nCUBINS_ARCHS={archs}\nkernels: {}\nbuilt with: {}\nbinaries:\n{}\n",
        git(&["rev-parse", "--short=12", "HEAD"]),
        match std::env::var(cubins_build::prebuilt::ENV) {
            Ok(dir) if !dir.trim().is_empty() => format!("prebuilt ({}={dir})", cubins_build::prebuilt::ENV),
            _ => "compiled by nvcc".to_string(),
        },
        String::from_utf8_lossy(&Command::new("rustc").arg("--version").output().map(|o| o.stdout).unwrap_or_default()).trim(),
        binaries.iter().map(|b| format!("  {b}")).collect::<Vec<_>>().join("\n")
    )
}

/// `sha256sum` lines for every file under `dir` (except a `SHA256SUMS` there), sorted by path.
fn sums_of(dir: &Path) -> Result<String> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort();
    let mut sums = String::new();
    for rel in files {
        let bytes = std::fs::read(dir.join(&rel))?;
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        sums.push_str(&format!("{digest}  {rel}\n"));
    }
    Ok(sums)
}

fn size_of_dir(dir: &Path) -> Result<u64> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    let mut total = std::fs::metadata(dir.join("SHA256SUMS"))
        .map(|m| m.len())
        .unwrap_or(0);
    for rel in files {
        total += std::fs::metadata(dir.join(rel))?.len();
    }
    Ok(total)
}

/// `tar | xz -9`: one solid stream, so bytes the binaries share are stored once.
fn pack(staging: &Path, archive: &Path) -> Result {
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(staging)
        .args(["-cf", "-", "tests", "benches"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running tar: {e}"))?;
    let tar_out = tar.stdout.take().ok_or("tar stdout")?;
    let xz = Command::new("xz")
        .args(["-9", "-T0", "-c"])
        .stdin(tar_out)
        .stdout(std::fs::File::create(archive)?)
        .status()
        .map_err(|e| format!("running xz (xz-utils): {e}"))?;
    let tar = tar.wait()?;
    if !tar.success() || !xz.success() {
        return Err(format!("packing {} failed (tar {tar}, xz {xz})", archive.display()).into());
    }
    Ok(())
}

fn collect(base: &Path, dir: &Path, out: &mut Vec<String>) -> Result {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(base, &path, out)?;
        } else if path.file_name().is_some_and(|n| n != "SHA256SUMS") {
            out.push(path.strip_prefix(base)?.to_string_lossy().into_owned());
        }
    }
    Ok(())
}
