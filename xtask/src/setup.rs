//! `cargo xtask setup`: installs NVIDIA's CUDA compiler wheels from PyPI into `.cuda/`
//! (git-ignored). Pinned: the 13.0 compiler matches the GPU machines' 580 driver, whose
//! JIT rejects PTX from newer toolkits; nvvm is pinned too, since an unpinned one emits PTX
//! the 13.0 ptxas rejects; cuobjdump and nvdisasm start at 13.2 on PyPI and read 13.0 cubins.

use crate::{root, Result};
use std::path::PathBuf;
use std::process::Command;

pub const WHEELS: &[(&str, &str)] = &[
    ("nvidia-cuda-nvcc", "13.0.88"),
    ("nvidia-nvvm", "13.0.88"),
    ("nvidia-cuda-crt", "13.0.88"),
    ("nvidia-cuda-runtime", "13.0.96"),
    ("nvidia-cuda-cccl", "13.0.85"),
    ("nvidia-cuda-cuobjdump", "13.2.86"),
    ("nvidia-cuda-nvdisasm", "13.2.86"),
];

/// Installs (if needed) and returns the toolchain's `bin/` folder.
pub fn run() -> Result<PathBuf> {
    let root = root();
    let site = root.join(".cuda/site");
    let bin = root.join(cubins_inspect::toolchain::discover::REPO_LOCAL_BIN);
    let stamp = root.join(".cuda/installed.txt");
    let wanted: String = WHEELS.iter().map(|(n, v)| format!("{n}=={v}\n")).collect();
    let ready =
        bin.join("nvcc").is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted);
    if !ready {
        println!(
            "xtask setup: installing the CUDA toolchain wheels into {}",
            site.display()
        );
        let _ = std::fs::remove_dir_all(&site);
        let python = ["python3", "python"]
            .into_iter()
            .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
            .ok_or("no python3 with pip found; install Python 3 with pip, or point NVCC at a CUDA toolkit")?;
        let status = Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--target",
            ])
            .arg(&site)
            .args(WHEELS.iter().map(|(n, v)| format!("{n}=={v}")))
            .status()?;
        if !status.success() {
            return Err(format!("pip install of the CUDA wheels failed ({status})").into());
        }
        std::fs::write(&stamp, &wanted)?;
    }
    let version = Command::new(bin.join("nvcc")).arg("--version").output()?;
    let version = String::from_utf8_lossy(&version.stdout);
    let release = version
        .lines()
        .find(|l| l.contains("release"))
        .unwrap_or("?")
        .trim()
        .to_string();
    println!(
        "xtask setup: CUDA toolchain {} at {}",
        if ready {
            "already installed"
        } else {
            "installed"
        },
        bin.display()
    );
    println!("  nvcc: {release}");
    for (n, v) in WHEELS {
        println!("  {n} {v}");
    }
    Ok(bin)
}
