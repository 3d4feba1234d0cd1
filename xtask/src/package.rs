//! `cargo xtask package`: packages `cubins-build` and `cubins` in dependency order (what
//! `cargo publish` would upload), says how large each is, unpacks both and builds a fresh
//! crate that depends on the unpacked `cubins` with `sm90` and `cudarc` selected, twice, and
//! runs it: it lists the embedded cubins with their SHA-256, and what the runtime found of a
//! driver (it loads libcuda itself, so the program starts with none on the loader path).
//! - with nvcc: the unpacked package compiles its kernels (another checkout path than this
//!   one, with a cache of its own);
//! - with no CUDA at all (no NVCC, CUDA_HOME or CUDA_PATH, no folder with nvcc or cuobjdump
//!   and nothing named cuda on PATH, the package has no `.cuda/` and no folder above it
//!   does, as the check runs in the system's temporary folder): from sm_90 prebuilt kernels
//!   exported from this checkout (`CUBINS_PREBUILT`).
//!
//! Both must list the same cubins with the same SHA-256. Proves the package carries
//! everything a dependent builds from, and no evidence; and that prebuilt kernels are the
//! kernels nvcc makes of the package's sources anywhere.
//!
//! Then the example crate (`examples/axpy-kernels`), copied out of the workspace with path
//! dependencies on the unpacked packages, builds its own kernels through the builder and
//! passes its tests (its sm_90 snapshots among them); exports its own sm_90 kernels through
//! its build (`AXPY_KERNELS_EXPORT_PREBUILT`) into its `prebuilt/` folder; and passes its
//! tests again with no CUDA at all, embedding that folder (and cubins' sm_90 export) with
//! the same cubin bytes.

use crate::{export, root, setup, tasks, Result};
use cubins_build::arch::Arch;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates of the package, in dependency order.
const CRATES: &[&str] = &["cubins-build", "cubins"];

/// The dependent's program: where its kernels came from, what the runtime (on cudarc, which
/// links no libcuda) found of a driver, then every embedded kernel file's cubins, one line
/// each.
const DEPENDENT_MAIN: &str = r#"fn main() {
    let origin = cubins::build_info().origin.map_or("none", |o| o.label());
    println!("origin={origin}");
    match cubins::runtime::Gpu::new() {
        Ok(gpu) => println!("driver=found device={}", gpu.device().name),
        Err(e @ cubins::runtime::Error::DriverNotFound { .. }) => println!("driver=none {e}"),
        Err(e) => panic!("the runtime: {e}"),
    }
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
    // Outside this checkout: a crate finds a repo-local toolchain in any folder above it.
    let work = std::env::temp_dir().join(format!(
        "cubins-package-check-{}",
        &cubins_build::toolchain::cache::sha256_hex(target.to_string_lossy().as_bytes())[..12]
    ));
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let mut unpacked = Vec::new();
    let stated = readme_sizes_kib()?;
    for ((name, file), stated) in crates.iter().zip(stated) {
        let bytes = std::fs::metadata(file)?.len();
        let files = list_len(file)?;
        let kib = bytes as f64 / 1024.0;
        println!(
            "xtask package: {name}: {files} files, {kib:.1} KiB compressed ({}; the README says about {stated})",
            file.display()
        );
        if (kib - stated).abs() > 0.25 * stated {
            return Err(format!(
                "{name} packages to {kib:.1} KiB compressed; the README says about {stated} KiB: update its sizes"
            )
            .into());
        }
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
    println!("xtask package: {}", toolchain_versions(&dependent)?);
    let fresh = run_dependent(&dependent, &work, Kernels::Nvcc(&nvcc))?;
    let prebuilt = work.join("prebuilt");
    let exported = export::export(&prebuilt, &[SM90])?;
    export::print_sizes(&prebuilt, &exported)?;
    let stated = readme_sm90_prebuilt_mib()?;
    let sm90 = export::mib(export::compressed_size(&prebuilt, &exported[0].arch)?);
    if (sm90 - stated).abs() > 0.25 * stated {
        return Err(format!(
            "sm_90's prebuilt kernels compress to {sm90:.1} MiB; the README says {stated} MiB: \
             update its prebuilt sizes (and docs/prebuilt.md's table)"
        )
        .into());
    }
    run_outside_example(&work, &unpacked, &nvcc, &prebuilt)?;
    println!("xtask package: building it again with no CUDA on PATH, from the sm_90 export");
    let from_prebuilt = run_dependent(&dependent, &work, Kernels::Prebuilt(&prebuilt))?;
    print!("{}", from_prebuilt.listing);
    let sm90 = compare(&fresh, &from_prebuilt)?;
    let driver = from_prebuilt
        .listing
        .lines()
        .find(|l| l.starts_with("driver="))
        .ok_or("the dependent printed no driver= line")?;
    println!(
        "xtask package: the dependent, on cudarc with no libcuda to link against or load, \
         started and its runtime said: {driver}"
    );
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

/// Builds the dependent, then runs its program (one target folder for both builds: the build
/// script reruns on the variables that change). Build and program run as two steps, each
/// reporting its own status and output, so a failure says which of them failed and how.
fn run_dependent(dependent: &Path, work: &Path, kernels: Kernels) -> Result<Listing> {
    let target = work.join("target");
    let mut c = tasks::cargo();
    c.current_dir(dependent)
        .env("CARGO_TARGET_DIR", &target)
        .args(["build", "--message-format=short"]);
    // Nothing of this machine's kernel setup: the arch is the dependent's `sm90` feature,
    // the cache its own (a fresh nvcc build), the kernels from where `kernels` says.
    for v in [
        "CUBINS_ARCHS",
        "CUDA_COMPUTE_CAP",
        "CUBINS_CACHE_DIR",
        "CUBINS_NVCC_WRAPPER",
        "CUBINS_NO_BUILD",
        "CUBINS_CONTRACTS",
        cubins_build::prebuilt::ENV,
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
                .env(cubins_build::prebuilt::ENV, dir);
        }
    }
    let built = c.output()?;
    if !built.status.success() {
        return Err(failure("building the dependent of the packaged cubins", &c, &built).into());
    }
    let program = target.join("debug").join("dependent");
    let mut run = Command::new(&program);
    // No stub or driver library on the loader path: the runtime on cudarc loads the driver
    // itself, so the program starts where there is none.
    run.current_dir(dependent)
        .env_remove("LD_LIBRARY_PATH")
        .stdin(std::process::Stdio::null());
    let out = run.output()?;
    if !out.status.success() {
        let size = std::fs::metadata(&program)
            .map_or_else(|e| e.to_string(), |m| format!("{} bytes", m.len()));
        return Err(format!(
            "{}\nthe program: {} ({size}); its build said:\n{}",
            failure("running the dependent of the packaged cubins", &run, &out),
            program.display(),
            String::from_utf8_lossy(&built.stderr)
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
        .filter(|l| !l.starts_with("origin=") && !l.starts_with("driver="))
        .map(str::to_string)
        .collect();
    Ok(Listing {
        origin,
        cubins,
        listing,
    })
}

/// `cargo -V` and `rustc -V` as the dependent's folder sees them.
fn toolchain_versions(dependent: &Path) -> Result<String> {
    let mut lines = Vec::new();
    for (mut c, name) in [(tasks::cargo(), "cargo"), (Command::new("rustc"), "rustc")] {
        let out = c.current_dir(dependent).arg("-V").output()?;
        if !out.status.success() {
            return Err(failure(&format!("`{name} -V` in the dependent"), &c, &out).into());
        }
        lines.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    Ok(lines.join(", "))
}

/// What failed, the command, its status (a signal by name where it was one) and everything
/// it printed.
fn failure(what: &str, c: &Command, out: &std::process::Output) -> String {
    use std::os::unix::process::ExitStatusExt;
    let status = match out.status.signal() {
        Some(signal) => format!("killed by signal {signal}"),
        None => out.status.to_string(),
    };
    format!(
        "{what} failed ({status}): {c:?}\n--- stdout ({} bytes)\n{}\n--- stderr ({} bytes)\n{}",
        out.stdout.len(),
        String::from_utf8_lossy(&out.stdout),
        out.stderr.len(),
        String::from_utf8_lossy(&out.stderr)
    )
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
    let mut c = tasks::cargo();
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

/// Where the package `name` was unpacked.
fn unpacked_path(unpacked: &[(String, PathBuf)], name: &str) -> Result<String> {
    unpacked
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, p)| p.display().to_string())
        .ok_or_else(|| format!("{name} was not packaged").into())
}

/// A crate depending on the unpacked `cubins` (its `cubins-build` patched to the unpacked
/// one, which is not on crates.io yet).
fn write_dependent(work: &Path, unpacked: &[(String, PathBuf)]) -> Result<PathBuf> {
    let path_of = |name: &str| unpacked_path(unpacked, name);
    let dir = work.join("dependent");
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"dependent\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncubins = {{ path = \"{}\", features = [\"sm90\", \"cudarc\"] }}\n\n\
             [patch.crates-io]\ncubins-build = {{ path = \"{}\" }}\n\n[workspace]\n",
            path_of("cubins")?,
            path_of("cubins-build")?
        ),
    )?;
    std::fs::write(dir.join("src/main.rs"), DEPENDENT_MAIN)?;
    Ok(dir)
}

/// The example crate as a crate outside this workspace would hold it: path dependencies on
/// the unpacked packages, a workspace of its own. Builds its kernels for sm_90 with nvcc
/// (cubins' own come from the cache the dependent filled) and runs its tests; exports its
/// kernels into its own `prebuilt/` folder through its build; runs its tests again with no
/// CUDA at all, from that folder and cubins' export `cubins_prebuilt`.
fn run_outside_example(
    work: &Path,
    unpacked: &[(String, PathBuf)],
    nvcc: &Path,
    cubins_prebuilt: &Path,
) -> Result {
    let path_of = |name: &str| unpacked_path(unpacked, name);
    let from = root().join("examples/axpy-kernels");
    let dir = work.join("axpy-kernels");
    copy_tree(&from, &dir)?;
    let mut manifest = std::fs::read_to_string(from.join("Cargo.toml"))?;
    for (workspace_key, value) in [
        ("edition.workspace = true", "edition = \"2021\""),
        ("rust-version.workspace = true", "rust-version = \"1.80\""),
        (
            "license.workspace = true",
            "license = \"MIT OR Apache-2.0\"",
        ),
    ] {
        manifest = manifest.replace(workspace_key, value);
    }
    manifest = manifest
        .replace(
            "path = \"../../builder\"",
            &format!("path = \"{}\"", path_of("cubins-build")?),
        )
        .replace(
            "path = \"../..\"",
            &format!("path = \"{}\"", path_of("cubins")?),
        );
    manifest.push_str(&format!(
        "\n[patch.crates-io]\ncubins-build = {{ path = \"{}\" }}\n\n[workspace]\n",
        path_of("cubins-build")?
    ));
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    let target = work.join("target");
    let vars = cubins_build::prebuilt::Vars::of("axpy-kernels");
    let example = |args: &[&str]| {
        let mut c = tasks::cargo();
        c.current_dir(&dir)
            .env("CARGO_TARGET_DIR", &target)
            .env("CUBINS_ARCHS", "90")
            .args(args);
        for v in [
            "CUDA_COMPUTE_CAP",
            "CUBINS_CACHE_DIR",
            "CUBINS_NO_BUILD",
            "CUBINS_CONTRACTS",
            cubins_build::prebuilt::ENV,
            &vars.prebuilt,
            &vars.export,
        ] {
            c.env_remove(v);
        }
        c
    };
    let run = |mut c: Command, what: &str| -> Result<String> {
        let out = c.output()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            return Err(format!(
                "the example crate outside the workspace failed {what} ({}):\n{text}",
                out.status
            )
            .into());
        }
        Ok(text)
    };
    let results = |text: &str| -> String {
        let passed: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("test result:"))
            .collect();
        passed.join(" / ")
    };

    println!(
        "xtask package: testing the example crate outside the workspace ({})",
        dir.display()
    );
    let mut with_nvcc = example(&["test", "--quiet"]);
    with_nvcc.env("NVCC", nvcc);
    let text = run(with_nvcc, "with nvcc")?;
    println!(
        "xtask package: the example crate outside the workspace: {}",
        results(&text)
    );
    let compiled = example_cubins(&target)?;

    let own = dir.join(cubins_build::prebuilt::CRATE_DIR);
    let mut export = example(&["build", "--quiet"]);
    export.env("NVCC", nvcc).env(&vars.export, &own);
    run(export, "exporting its kernels")?;
    let folders = cubins_build::prebuilt::available(&own);
    if folders != ["sm_90"] {
        return Err(format!(
            "{}=... exported {folders:?} into {}, not sm_90",
            vars.export,
            own.display()
        )
        .into());
    }
    println!(
        "xtask package: the example exported its sm_90 kernels through its build ({}={})",
        vars.export,
        own.display()
    );

    // Only this run's build-script output is left to read; not quiet: cargo prints the build
    // script's warnings only then.
    for out in example_out_dirs(&target)? {
        std::fs::remove_dir_all(&out)?;
    }
    let mut without_cuda = example(&["test"]);
    for v in ["NVCC", "CUDA_HOME", "CUDA_PATH", "CUDA_LIBRARY_PATH"] {
        without_cuda.env_remove(v);
    }
    without_cuda
        .env("PATH", path_without_cuda()?)
        .env(cubins_build::prebuilt::ENV, cubins_prebuilt);
    let text = run(without_cuda, "with no CUDA, from its prebuilt folder")?;
    let embedded = format!(
        "cubins: no nvcc found: embedding the verified prebuilt kernels of {}",
        own.display()
    );
    if !text.contains(&embedded) {
        return Err(
            format!("the example's build with no CUDA did not say `{embedded}`:\n{text}").into(),
        );
    }
    let from_prebuilt = example_cubins(&target)?;
    let origins = example_origins(&target)?;
    if origins != ["Prebuilt"] {
        return Err(format!(
            "the example's generated kernels with no CUDA say origin {origins:?}, not Prebuilt"
        )
        .into());
    }
    if from_prebuilt != compiled {
        return Err(format!(
            "the example's cubins from its prebuilt folder differ from those nvcc made:\n\
             nvcc: {compiled:?}\nprebuilt: {from_prebuilt:?}"
        )
        .into());
    }
    println!(
        "xtask package: the example with no CUDA, from its own prebuilt folder: {}; its \
         cubins equal nvcc's: {}",
        results(&text),
        compiled
            .iter()
            .map(|(name, sha)| format!("{name} sha256={sha}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// The `Origin` the example's generated kernels record, one per distinct value.
fn example_origins(target: &Path) -> Result<Vec<String>> {
    let mut origins = Vec::new();
    for out in example_out_dirs(target)? {
        let Ok(text) = std::fs::read_to_string(out.join(cubins_build::builder::KERNELS_RS)) else {
            continue;
        };
        let origin = text
            .lines()
            .find(|l| l.starts_with("static ORIGIN:"))
            .and_then(|l| l.rsplit("Origin::").next())
            .map_or("none", |o| o.trim_end_matches(';'))
            .to_string();
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(origins)
}

/// Every `OUT_DIR` of the example's build script under `target`.
fn example_out_dirs(target: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for unit in std::fs::read_dir(target.join("debug/build"))? {
        let out = unit?.path().join("out");
        let name = out.parent().and_then(Path::file_name).unwrap_or_default();
        if name.to_string_lossy().starts_with("axpy-kernels-") && out.is_dir() {
            dirs.push(out);
        }
    }
    Ok(dirs)
}

/// The SHA-256 of each cubin the example's build script embedded (`OUT_DIR/artifacts`), by
/// file name; one value per name across the target folder's build-script runs.
fn example_cubins(target: &Path) -> Result<std::collections::BTreeMap<String, String>> {
    let mut found = std::collections::BTreeMap::new();
    for out in example_out_dirs(target)? {
        let Ok(files) = std::fs::read_dir(out.join("artifacts")) else {
            continue;
        };
        for f in files {
            let f = f?;
            let name = f.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".cubin") {
                continue;
            }
            let sha = cubins_build::toolchain::cache::sha256_hex(&std::fs::read(f.path())?);
            if let Some(other) = found.insert(name.clone(), sha.clone()) {
                if other != sha {
                    return Err(format!(
                        "two builds of the example embed different {name}: {other} and {sha}"
                    )
                    .into());
                }
            }
        }
    }
    if found.is_empty() {
        return Err(format!(
            "no example cubins under {}",
            target.join("debug/build").display()
        )
        .into());
    }
    Ok(found)
}

/// Copies the files of `from` into `to`, leaving out build output (`target/`).
fn copy_tree(from: &Path, to: &Path) -> Result {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.file_name() == "target" {
            continue;
        }
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else {
            std::fs::copy(e.path(), &dest)?;
        }
    }
    Ok(())
}

fn status(mut c: Command) -> Result {
    let s = c.status()?;
    if s.success() {
        Ok(())
    } else {
        Err(format!("{c:?} failed ({s})").into())
    }
}

/// The compressed size of sm_90's prebuilt kernels the README states: "(sm_90: X)", MiB.
fn readme_sm90_prebuilt_mib() -> Result<f64> {
    let text = std::fs::read_to_string(root().join("README.md"))?;
    // One line or wrapped: words joined by single spaces.
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let parse = || -> Option<f64> {
        let at = text.find("(sm_90: ")? + "(sm_90: ".len();
        let number: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        number.trim_end_matches('.').parse().ok()
    };
    parse().ok_or_else(|| "README.md: no \"(sm_90: X)\" prebuilt size".into())
}

/// The package sizes the README states, in dependency order: "about A and B KiB compressed".
fn readme_sizes_kib() -> Result<[f64; 2]> {
    let text = std::fs::read_to_string(root().join("README.md"))?;
    let parse = || -> Option<[f64; 2]> {
        let before = &text[..text.find("KiB compressed")?];
        let (a, b) = before[before.rfind("about ")? + 6..].split_once(" and ")?;
        Some([a.trim().parse().ok()?, b.trim().parse().ok()?])
    };
    parse().ok_or_else(|| "README.md: no \"about A and B KiB compressed\" package sizes".into())
}
