//! The build and test entry points the README names.

use crate::{root, setup, Result};
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
    r.args(["run", "--quiet", "-p", "cubins-inspect", "--", "report", "--build"]).args(args.iter().filter(|a| a.starts_with("--features") || a.starts_with("sm")));
    status(r)
}

/// The whole test suite on a machine without a GPU.
pub fn test(args: &[String]) -> Result {
    setup::run()?;
    let mut c = cargo();
    c.args(["test", "--workspace"]).args(args);
    status(c)
}

pub fn inspect(args: &[String]) -> Result {
    let mut c = cargo();
    c.args(["run", "--quiet", "-p", "cubins-inspect", "--"]).args(args);
    status(c)
}
