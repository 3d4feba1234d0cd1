//! `cargo xtask export-prebuilt --out DIR [--archs LIST]`: compiles the kernels for each arch
//! (through the workspace's kernel cache) and exports cubins, PTX, reports and declarations
//! into one folder per arch under DIR (`Build::export_prebuilt`), then says how large each
//! folder is, as it is and compressed as a `.crate` would be. A build with
//! `CUBINS_PREBUILT=DIR` embeds them without a CUDA toolkit. `CUBINS_EXPORT_PREBUILT=DIR
//! CUBINS_ARCHS=LIST cargo build -p cubins` exports the same folders, also where cubins is a
//! dependency.

use crate::{root, setup, tasks, Result};
use cubins_build::arch::{Arch, SUPPORTED};
use cubins_build::prebuilt::{self, Exported};
use cubins_build::Build;
use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask export-prebuilt --out DIR [--archs LIST] \
                     (LIST as CUBINS_ARCHS takes it, e.g. \"90;90a\"; default: every supported arch)";

/// The parsed command line.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    out: PathBuf,
    archs: Vec<Arch>,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut out = None;
    let mut archs = SUPPORTED.to_vec();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))
        };
        match a.as_str() {
            "--out" => out = Some(root().join(value("--out")?)),
            "--archs" => archs = Arch::parse_list(&value("--archs")?)?,
            other => return Err(format!("unknown argument `{other}`; {USAGE}").into()),
        }
    }
    Ok(Args {
        out: out.ok_or(USAGE)?,
        archs,
    })
}

pub fn run(args: &[String]) -> Result {
    let args = parse(args)?;
    setup::run()?;
    let exported = export(&args.out, &args.archs)?;
    print_sizes(&args.out, &exported)?;
    println!(
        "xtask export-prebuilt: done; build with {}={} (no CUDA toolkit needed)",
        prebuilt::ENV,
        args.out.display()
    );
    Ok(())
}

/// Exports cubins' kernels for `archs` into `out` through the builder, as a build with
/// `CUBINS_EXPORT_PREBUILT` does (also for `cargo xtask package`).
pub fn export(out: &Path, archs: &[Arch]) -> Result<Vec<Exported>> {
    let names: Vec<String> = archs.iter().map(Arch::sm_name).collect();
    println!(
        "xtask export-prebuilt: {} into {}",
        names.join(", "),
        out.display()
    );
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok(Build::new()
        .crate_dir(root())
        .crate_name("cubins")
        .archs(archs)
        .cache_dir(tasks::kernel_cache_dir()?)
        .jobs(jobs)
        .cargo_metadata(false)
        .export_prebuilt(out)?)
}

/// One line per arch folder: files, size, and size as a gzip-compressed tar.
pub fn print_sizes(out: &Path, exported: &[Exported]) -> Result {
    for e in exported {
        println!(
            "xtask export-prebuilt: {}: {} files, {:.1} MiB, {:.1} MiB compressed ({})",
            e.arch,
            e.files,
            mib(e.bytes),
            mib(compressed_size(out, &e.arch)?),
            e.dir.display()
        );
    }
    Ok(())
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Bytes of `tar -cz` of `dir/name`: what a crate of that folder would weigh.
pub fn compressed_size(dir: &Path, name: &str) -> Result<u64> {
    let out = Command::new("tar")
        .arg("-czf")
        .arg("-")
        .arg("-C")
        .arg(dir)
        .arg(name)
        .output()?;
    if !out.status.success() {
        return Err(format!("tar -cz of {} failed", dir.join(name).display()).into());
    }
    Ok(out.stdout.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments() {
        let a = parse(&args(&["--out", "dist", "--archs", "90;90a"])).unwrap();
        assert_eq!(a.out, root().join("dist"));
        assert_eq!(a.archs, vec![Arch::new(90), Arch::specific(90)]);
        assert_eq!(
            parse(&args(&["--out", "/abs"])).unwrap().archs,
            SUPPORTED.to_vec()
        );
        for bad in [
            &[][..],
            &["--archs", "90"],
            &["--out"],
            &["--out", "d", "--x"],
        ] {
            let e = parse(&args(bad)).unwrap_err().to_string();
            assert!(
                e.contains("usage: cargo xtask export-prebuilt"),
                "{bad:?}: {e}"
            );
        }
        assert!(parse(&args(&["--out", "d", "--archs", "61"]))
            .unwrap_err()
            .to_string()
            .contains("unknown GPU arch `61`"));
    }
}
