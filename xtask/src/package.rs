//! `cargo xtask package`: packages `cubins-inspect` and `cubins` in dependency order (what
//! `cargo publish` would upload), says how large each is, unpacks both and builds a fresh
//! crate that depends on the unpacked `cubins` with `sm90` selected, then runs it: it lists
//! the embedded cubins with their SHA-256. Proves the package carries everything a dependent
//! builds from, and no evidence.

use crate::{root, setup, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates of the package, in dependency order.
const CRATES: &[&str] = &["cubins-inspect", "cubins"];

/// The dependent's program: every embedded kernel file's cubins, one line each.
const DEPENDENT_MAIN: &str = r#"fn main() {
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
    let crates = package()?;
    let work = root().join("target/package-check");
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
        "xtask package: building a fresh crate on the unpacked package ({})",
        dependent.display()
    );
    let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    build
        .current_dir(&dependent)
        .env("NVCC", &nvcc)
        .env_remove("CUBINS_ARCHS")
        .env_remove("CUDA_COMPUTE_CAP")
        .env("CARGO_TARGET_DIR", work.join("target"))
        .args(["run", "--quiet"]);
    let out = build.output()?;
    if !out.status.success() {
        return Err(format!(
            "the dependent of the packaged cubins failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let listing = String::from_utf8_lossy(&out.stdout);
    let sm90 = listing.lines().filter(|l| l.contains(" sm_90 ")).count();
    if sm90 == 0 {
        return Err(format!("the dependent embeds no sm_90 cubin:\n{listing}").into());
    }
    print!("{listing}");
    println!("xtask package: the dependent embeds {sm90} sm_90 cubins");
    Ok(())
}

/// `cargo package` of [`CRATES`]; returns each `.crate` file.
fn package() -> Result<Vec<(&'static str, PathBuf)>> {
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
        .map(|n| {
            (
                *n,
                root().join(format!("target/package/{n}-{version}.crate")),
            )
        })
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
