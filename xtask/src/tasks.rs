//! The build and test entry points the README names.

use crate::{root, setup, stub, Result};
use std::process::Command;

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
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

/// The main job: toolchain, kernels for the selected arches, and a per-kernel summary.
pub fn build(args: &[String]) -> Result {
    setup::run()?;
    let mut c = cargo();
    c.arg("build").args(args);
    status(c)?;
    let mut r = cargo();
    r.args([
        "run",
        "--quiet",
        "-p",
        "cubins-inspect",
        "--",
        "report",
        "--build",
    ])
    .args(
        args.iter()
            .filter(|a| a.starts_with("--features") || a.starts_with("sm")),
    );
    status(r)
}

/// The whole test suite, runtime included, on a machine without a GPU or driver: `cust`
/// links against the stub, and the tests load it through `LD_LIBRARY_PATH` (set here only:
/// cargo itself never puts a folder outside `target/<profile>/` on the loader path).
pub fn test(args: &[String]) -> Result {
    setup::run()?;
    let stub = stub::run()?;
    let mut c = cargo();
    c.env("CUDA_LIBRARY_PATH", &stub)
        .env("LD_LIBRARY_PATH", stub::loader_path(&stub))
        .args([
            "test",
            "--workspace",
            "--no-fail-fast",
            "--features",
            "cubins/cust",
        ])
        .args(args);
    status(c)
}

pub fn inspect(args: &[String]) -> Result {
    let mut c = cargo();
    c.args(["run", "--quiet", "-p", "cubins-inspect", "--"])
        .args(args);
    status(c)
}
