//! `cargo xtask link-stub`: a stand-in `libcuda.so.1` for machines without the NVIDIA driver.
//!
//! `cust` links `libcuda` at build time (through `find_cuda_helper`, which reads
//! `$CUDA_LIBRARY_PATH/lib64`), so a binary that uses it cannot be linked, or started, where
//! no driver is installed. The stub exports every `cu*` function `cust_raw` declares, each
//! returning `CUDA_ERROR_STUB_LIBRARY`, which the runtime reports as "no CUDA driver".
//! It lives in `target/cuda-stub/`, outside cargo's profile folders, so cargo never puts it
//! on a loader path by itself: `cargo xtask test` does, explicitly. A GPU bundle never
//! carries it and its binaries record no path to it, so on a GPU machine the driver's own
//! `libcuda.so.1` is what loads.

use crate::{root, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `CUresult` the stub returns from every entry point.
pub const CUDA_ERROR_STUB_LIBRARY: u32 = 34;

/// The folder to point `CUDA_LIBRARY_PATH` at (the stub is in its `lib64/`).
pub fn stub_root() -> PathBuf {
    root().join("target/cuda-stub")
}

/// Builds the stub if it is missing or stale; returns the folder for `CUDA_LIBRARY_PATH`.
pub fn run() -> Result<PathBuf> {
    let declarations = cust_raw_bindings()?;
    let text = std::fs::read_to_string(&declarations)?;
    let symbols = driver_symbols(&text);
    if symbols.is_empty() {
        return Err(format!(
            "no `pub fn cu*` declarations found in {}",
            declarations.display()
        )
        .into());
    }
    let lib64 = stub_root().join("lib64");
    std::fs::create_dir_all(&lib64)?;
    let source = c_source(&symbols);
    let c_path = lib64.join("libcuda_stub.c");
    let so = lib64.join("libcuda.so");
    let fresh = so.is_file() && std::fs::read_to_string(&c_path).is_ok_and(|old| old == source);
    if !fresh {
        std::fs::write(&c_path, &source)?;
        compile_shared(&c_path, &so)?;
    }
    // The linker looks for `libcuda.so`; the loader looks for the SONAME `libcuda.so.1`.
    let so1 = lib64.join("libcuda.so.1");
    if !so1.is_file() || !fresh {
        let _ = std::fs::remove_file(&so1);
        std::fs::copy(&so, &so1)?;
    }
    println!(
        "xtask link-stub: {} driver symbols -> {}",
        symbols.len(),
        so.display()
    );
    println!(
        "  to use it with cargo directly: export CUDA_LIBRARY_PATH={} LD_LIBRARY_PATH={}/lib64:$LD_LIBRARY_PATH",
        stub_root().display(),
        stub_root().display()
    );
    Ok(stub_root())
}

/// `LD_LIBRARY_PATH` with the stub's folder first (for processes that must load the stub).
pub fn loader_path(stub_root: &Path) -> std::ffi::OsString {
    let mut paths = vec![stub_root.join("lib64")];
    if let Some(existing) = std::env::var_os("LD_LIBRARY_PATH") {
        paths.extend(std::env::split_paths(&existing));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

/// `cust_raw`'s generated driver bindings. `cargo metadata` says where the workspace's
/// copy of it lies, downloading it first when it is missing (a fresh clone, a fresh
/// `CARGO_HOME`), which also covers vendored and replaced sources.
fn cust_raw_bindings() -> Result<PathBuf> {
    let out = crate::tasks::cargo()
        .args([
            "metadata",
            "--format-version",
            "1",
            "--features",
            "cubins/cust",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed ({}): cannot find cust_raw's sources",
            out.status
        )
        .into());
    }
    let manifest = package_manifest(&String::from_utf8_lossy(&out.stdout), "cust_raw")?;
    let bindings = manifest.with_file_name("src").join("cuda.rs");
    if !bindings.is_file() {
        return Err(format!(
            "{} is missing: not the cust_raw this stub reads",
            bindings.display()
        )
        .into());
    }
    Ok(bindings)
}

/// The `Cargo.toml` of `package` in `cargo metadata` output.
fn package_manifest(metadata: &str, package: &str) -> Result<PathBuf> {
    let doc: serde_json::Value = serde_json::from_str(metadata)?;
    doc["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == package)
        .and_then(|p| p["manifest_path"].as_str())
        .map(PathBuf::from)
        .ok_or_else(|| {
            format!("{package} is not among the workspace's dependencies (is the `cust` feature's dependency resolved?)")
                .into()
        })
}

/// Every `pub fn cu*` name in bindgen output, sorted and deduplicated.
pub fn driver_symbols(bindings: &str) -> Vec<String> {
    let mut out: Vec<String> = bindings
        .split("pub fn ")
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (name.starts_with("cu") && rest[name.len()..].trim_start().starts_with('('))
                .then_some(name)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// C source defining each symbol as a function that ignores its arguments (the x86-64 and
/// AArch64 C calling conventions let a caller pass arguments a callee does not read).
pub fn c_source(symbols: &[String]) -> String {
    let mut s = String::from(
        "/* Generated by `cargo xtask link-stub`: a link-time stand-in for the NVIDIA driver.\n \
         * Every entry point returns CUDA_ERROR_STUB_LIBRARY. */\n",
    );
    for name in symbols {
        s.push_str(&format!(
            "int {name}(void) {{ return {CUDA_ERROR_STUB_LIBRARY}; }}\n"
        ));
    }
    s
}

fn compile_shared(source: &Path, output: &Path) -> Result {
    let target = env_or("TARGET", current_target());
    let compiler = cc::Build::new()
        .target(&target)
        .host(&target)
        .opt_level(1)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .try_get_compiler()?;
    let mut cmd: Command = compiler.to_command();
    cmd.args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(output)
        .arg(source);
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

pub(crate) fn current_target() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64-unknown-linux-gnu"
    } else {
        "x86_64-unknown-linux-gnu"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_driver_functions() {
        let text = "extern \"C\" {\n    pub fn cuInit(Flags: c_uint) -> CUresult;\n}\n\
                    extern \"C\" { pub fn cuCtxCreate_v2 (pctx: *mut CUcontext) -> CUresult; }\n\
                    pub fn helper() {}\npub fn cuInit(x: u32) -> CUresult;\npub type cuFoo = u32;";
        assert_eq!(driver_symbols(text), vec!["cuCtxCreate_v2", "cuInit"]);
    }

    #[test]
    fn finds_a_package_in_cargo_metadata() {
        let metadata = r#"{"packages": [
            {"name": "cust", "manifest_path": "/h/registry/src/i/cust-0.3.2/Cargo.toml"},
            {"name": "cust_raw", "manifest_path": "/h/registry/src/i/cust_raw-0.11.3/Cargo.toml"}
        ]}"#;
        assert_eq!(
            package_manifest(metadata, "cust_raw").unwrap(),
            PathBuf::from("/h/registry/src/i/cust_raw-0.11.3/Cargo.toml")
        );
        let e = package_manifest(metadata, "half").unwrap_err().to_string();
        assert!(e.contains("half is not among"), "{e}");
        assert!(package_manifest("not json", "cust_raw").is_err());
    }

    #[test]
    fn every_symbol_returns_the_stub_error() {
        let c = c_source(&["cuInit".into(), "cuLaunchKernel".into()]);
        assert!(c.contains("int cuInit(void) { return 34; }"));
        assert!(c.contains("int cuLaunchKernel(void) { return 34; }"));
    }
}
