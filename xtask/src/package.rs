//! `cargo xtask package`: packages `cubins-inspect` and `cubins` in dependency order (what
//! `cargo publish` would upload), says how large each is, unpacks both and builds a fresh
//! crate that depends on the unpacked `cubins` with `sm90` selected, twice, and runs it: it
//! lists the embedded cubins with their SHA-256.
//! - with nvcc: the unpacked package compiles its kernels (another checkout path than this
//!   one, with a cache of its own);
//! - with no CUDA at all (no NVCC, CUDA_HOME or CUDA_PATH, no folder with nvcc or cuobjdump
//!   and nothing named cuda on PATH, the package has no `.cuda/`): from sm_90 prebuilt
//!   kernels exported from this checkout (`CUBINS_PREBUILT`).
//!
//! Both must list the same cubins with the same SHA-256. Proves the package carries
//! everything a dependent builds from, and no evidence; and that prebuilt kernels are the
//! kernels nvcc makes of the package's sources anywhere.

use crate::{export, root, setup, tasks, Result};
use cubins_inspect::arch::Arch;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates of the package, in dependency order.
const CRATES: &[&str] = &["cubins-inspect", "cubins"];

/// The dependent's program: where its kernels came from, then every embedded kernel file's
/// cubins, one line each.
const DEPENDENT_MAIN: &str = r#"fn main() {
    let origin = cubins::build_info().origin.map_or("none", |o| o.label());
    println!("origin={origin}");
    let files = cubins::kernel_files().expect("the package embeds kernels");
    for f in files {
        for c in f.cubins {
            println!("{} {} {} bytes sha256={}", f.name, c.arch, c.bytes.len(), c.sha256);
        }
    }
}
"#;

pub fn run(args: &[String]) -> Result {
    if !args.is_empty() {
        return Err(format!("package takes no arguments, got {args:?}").into());
    }
    let nvcc = setup::run()?.join("nvcc");
    let target = tasks::target_dir()?;
    let crates = package(&target)?;
    let work = target.join("package-check");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let mut unpacked = Vec::new();
    for (name, file) in &crates {
        let bytes = std::fs::metadata(file)?.len();
        let files = list_len(file)?;
        println!(
            "xtask package: {name}: {files} files, {:.1} KiB compressed ({})",
            bytes as f64 / 1024.0,
            file.display()
        );
        let mut untar = Command::new("tar");
        untar.arg("-xzf").arg(file).arg("-C").arg(&work);
        status(untar)?;
        let stem = file
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        unpacked.push((name.to_string(), work.join(stem)));
    }
    let dependent = write_dependent(&work, &unpacked)?;
    println!(
        "xtask package: building a fresh crate on the unpacked package with nvcc ({})",
        dependent.display()
    );
    let fresh = run_dependent(&dependent, &work, Kernels::Nvcc(&nvcc))?;
    let prebuilt = work.join("prebuilt");
    let exported = export::export(&prebuilt, &[SM90])?;
    export::print_sizes(&prebuilt, &exported)?;
    println!("xtask package: building it again with no CUDA on PATH, from the sm_90 export");
    let from_prebuilt = run_dependent(&dependent, &work, Kernels::Prebuilt(&prebuilt))?;
    print!("{}", from_prebuilt.listing);
    let sm90 = compare(&fresh, &from_prebuilt)?;
    println!(
        "xtask package: the dependent embeds {sm90} sm_90 cubins; built with no CUDA toolkit from \
         prebuilt kernels, their SHA-256 equal those nvcc made in {}",
        unpacked
            .iter()
            .find(|(n, _)| n == "cubins")
            .map_or(work.clone(), |(_, p)| p.clone())
            .display()
    );
    Ok(())
}

const SM90: Arch = Arch::new(90);

/// How the dependent's `cubins` gets its kernels.
enum Kernels<'a> {
    /// Compiles them with this nvcc.
    Nvcc(&'a Path),
    /// Embeds the export folder's, with no CUDA anywhere on PATH.
    Prebuilt(&'a Path),
}

/// What a run of the dependent printed.
struct Listing {
    origin: String,
    /// `name arch N bytes sha256=...` per cubin.
    cubins: Vec<String>,
    listing: String,
}

/// Builds and runs the dependent (one target folder for both runs: the build script reruns
/// on the variables that change).
fn run_dependent(dependent: &Path, work: &Path, kernels: Kernels) -> Result<Listing> {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(dependent)
        .env("CARGO_TARGET_DIR", work.join("target"))
        .args(["run", "--quiet"]);
    // Nothing of this machine's kernel setup: the arch is the dependent's `sm90` feature,
    // the cache its own (a fresh nvcc build), the kernels from where `kernels` says.
    for v in [
        "CUBINS_ARCHS",
        "CUDA_COMPUTE_CAP",
        "CUBINS_CACHE_DIR",
        "CUBINS_NVCC_WRAPPER",
        "CUBINS_NO_BUILD",
        "CUBINS_CONTRACTS",
        cubins_inspect::prebuilt::ENV,
    ] {
        c.env_remove(v);
    }
    match kernels {
        Kernels::Nvcc(nvcc) => {
            c.env("NVCC", nvcc);
        }
        Kernels::Prebuilt(dir) => {
            for v in ["NVCC", "CUDA_HOME", "CUDA_PATH", "CUDA_LIBRARY_PATH"] {
                c.env_remove(v);
            }
            c.env("PATH", path_without_cuda()?)
                .env(cubins_inspect::prebuilt::ENV, dir);
        }
    }
    let out = c.output()?;
    if !out.status.success() {
        return Err(format!(
            "the dependent of the packaged cubins failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    let origin = listing
        .lines()
        .find_map(|l| l.strip_prefix("origin="))
        .unwrap_or("")
        .to_string();
    let cubins = listing
        .lines()
        .filter(|l| !l.starts_with("origin="))
        .map(str::to_string)
        .collect();
    Ok(Listing {
        origin,
        cubins,
        listing,
    })
}

/// `PATH` without any folder holding nvcc or cuobjdump or named like a CUDA install.
fn path_without_cuda() -> Result<OsString> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| {
            let cuda_like = d.to_string_lossy().to_ascii_lowercase().contains("cuda");
            !cuda_like && !d.join("nvcc").exists() && !d.join("cuobjdump").exists()
        })
        .collect();
    Ok(std::env::join_paths(kept)?)
}

/// The two runs list the same sm_90 cubins, byte for byte; returns how many.
fn compare(fresh: &Listing, prebuilt: &Listing) -> Result<usize> {
    if (fresh.origin.as_str(), prebuilt.origin.as_str()) != ("nvcc", "prebuilt") {
        return Err(format!(
            "the dependent's kernels came from {} and {}, not nvcc and prebuilt",
            fresh.origin, prebuilt.origin
        )
        .into());
    }
    if fresh.cubins != prebuilt.cubins {
        return Err(format!(
            "the prebuilt cubins differ from those nvcc made of the package:\nnvcc:\n{}\nprebuilt:\n{}",
            fresh.cubins.join("\n"),
            prebuilt.cubins.join("\n")
        )
        .into());
    }
    let sm90 = fresh
        .cubins
        .iter()
        .filter(|l| l.contains(" sm_90 "))
        .count();
    if sm90 == 0 {
        return Err(format!("the dependent embeds no sm_90 cubin:\n{}", fresh.listing).into());
    }
    Ok(sm90)
}

/// `cargo package` of [`CRATES`] into `target`'s `package/`; returns each `.crate` file.
fn package(target: &Path) -> Result<Vec<(&'static str, PathBuf)>> {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root())
        .args(["package", "--no-verify", "--allow-dirty", "--quiet"]);
    for name in CRATES {
        c.args(["-p", name]);
    }
    status(c)?;
    let version = workspace_version()?;
    Ok(CRATES
        .iter()
        .map(|n| (*n, target.join(format!("package/{n}-{version}.crate"))))
        .collect())
}

/// The version both crates carry (`cubins`' own).
fn workspace_version() -> Result<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml"))?;
    let doc: toml::Table = text.parse()?;
    doc.get("package")
        .and_then(|p| p.get("version"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .ok_or_else(|| "Cargo.toml has no package.version".into())
}

/// Files in a `.crate` archive.
fn list_len(file: &Path) -> Result<usize> {
    let out = Command::new("tar").arg("-tzf").arg(file).output()?;
    if !out.status.success() {
        return Err(format!("tar -tzf {} failed", file.display()).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().count())
}

/// A crate depending on the unpacked `cubins` (its `cubins-inspect` patched to the unpacked
/// one, which is not on crates.io yet).
fn write_dependent(work: &Path, unpacked: &[(String, PathBuf)]) -> Result<PathBuf> {
    let path_of = |name: &str| {
        unpacked
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.display().to_string())
            .ok_or_else(|| format!("{name} was not packaged"))
    };
    let dir = work.join("dependent");
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"dependent\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncubins = {{ path = \"{}\", features = [\"sm90\"] }}\n\n\
             [patch.crates-io]\ncubins-inspect = {{ path = \"{}\" }}\n\n[workspace]\n",
            path_of("cubins")?,
            path_of("cubins-inspect")?
        ),
    )?;
    std::fs::write(dir.join("src/main.rs"), DEPENDENT_MAIN)?;
    Ok(dir)
}

fn status(mut c: Command) -> Result {
    let s = c.status()?;
    if s.success() {
        Ok(())
    } else {
        Err(format!("{c:?} failed ({s})").into())
    }
}
