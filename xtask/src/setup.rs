//! `cargo xtask setup`: installs NVIDIA's CUDA compiler wheels from PyPI into `.cuda/`
//! (git-ignored), pinned in `cubins_build::toolchain::wheels` (which says why; a build
//! without nvcc names the same pins).

use crate::{root, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

pub use cubins_build::toolchain::wheels::WHEELS;

/// Installs the CUDA toolchain if needed; returns its `bin/`.
pub fn run() -> Result<PathBuf> {
    let root = root();
    let bin = root.join(cubins_build::toolchain::discover::REPO_LOCAL_BIN);
    let cuda = install(
        WHEELS,
        &root.join(".cuda/site"),
        &root.join(".cuda/installed.txt"),
        &bin.join("nvcc"),
    )?;
    println!(
        "xtask setup: CUDA toolchain {} at {}",
        cuda.word(),
        bin.display()
    );
    println!("  nvcc: {}", nvcc_release(&bin)?);
    for (n, v) in WHEELS {
        println!("  {n} {v}");
    }
    Ok(bin)
}

/// `Cuda compilation tools, release 13.0, V13.0.88`
fn nvcc_release(bin: &Path) -> Result<String> {
    let out = Command::new(bin.join("nvcc")).arg("--version").output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let release = text.lines().find(|l| l.contains("release")).unwrap_or("?");
    Ok(release.trim().to_string())
}

/// Whether [`install`] found the wheels in place or put them there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Installed {
    Already,
    Now,
}

impl Installed {
    fn word(self) -> &'static str {
        match self {
            Installed::Already => "already installed",
            Installed::Now => "installed",
        }
    }
}

/// `name==version` lines: what a stamp records.
fn pins(wheels: &[(&str, &str)]) -> String {
    wheels.iter().map(|(n, v)| format!("{n}=={v}\n")).collect()
}

/// `pip install --target site` of `wheels`, unless `stamp` says exactly these are installed
/// and `probe` (a file the wheels provide) is there.
fn install(wheels: &[(&str, &str)], site: &Path, stamp: &Path, probe: &Path) -> Result<Installed> {
    let wanted = pins(wheels);
    if probe.is_file() && std::fs::read_to_string(stamp).is_ok_and(|s| s == wanted) {
        return Ok(Installed::Already);
    }
    println!(
        "xtask setup: installing {} into {}",
        wanted.trim_end().replace('\n', ", "),
        site.display()
    );
    let _ = std::fs::remove_dir_all(site);
    let status = Command::new(python()?)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--target",
        ])
        .arg(site)
        .args(wanted.lines())
        .status()?;
    if !status.success() {
        return Err(format!("pip install of {} failed ({status})", wanted.trim_end()).into());
    }
    std::fs::write(stamp, &wanted)?;
    Ok(Installed::Now)
}

fn python() -> Result<&'static str> {
    let works = |p: &&str| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    Ok(["python3", "python"].into_iter().find(works).ok_or(
        "no python3 with pip found; install Python 3 with pip, or point NVCC at a CUDA toolkit",
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_pin_every_wheel_and_keep_their_format() {
        // The format of `.cuda/installed.txt` from earlier setups: a change reinstalls CUDA.
        assert_eq!(
            pins(&[("nvidia-cuda-nvcc", "13.0.88"), ("nvidia-nvvm", "13.0.88")]),
            "nvidia-cuda-nvcc==13.0.88\nnvidia-nvvm==13.0.88\n"
        );
    }
}
