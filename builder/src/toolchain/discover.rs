//! Finding nvcc (and the cuobjdump / nvdisasm beside it), in a fixed order:
//! `NVCC`, `CUDA_HOME` / `CUDA_PATH`, `PATH`, then the repo-local toolchain that
//! `cargo xtask setup` installs.
//!
//! A toolchain named explicitly (`NVCC`, else `CUDA_HOME`, else `CUDA_PATH`; an empty value
//! counts as unset) is used or refused, never replaced: when it is not there the search stops
//! with [`ExplicitNvcc`] instead of falling through to `PATH` or the repo-local toolchain,
//! which would build with a compiler nobody chose.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where the repo-local toolchain keeps its binaries, relative to the workspace root.
pub const REPO_LOCAL_BIN: &str = ".cuda/site/nvidia/cu13/bin";

/// How nvcc was found: part of every build's printed identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundVia {
    NvccVar,
    CudaHome(&'static str),
    Path,
    RepoLocal,
}

impl FoundVia {
    /// The variable that named this nvcc, when one did.
    pub fn variable(&self) -> Option<&'static str> {
        match self {
            FoundVia::NvccVar => Some("NVCC"),
            FoundVia::CudaHome(var) => Some(var),
            FoundVia::Path | FoundVia::RepoLocal => None,
        }
    }
}

impl fmt::Display for FoundVia {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FoundVia::NvccVar => f.write_str("$NVCC"),
            FoundVia::CudaHome(var) => write!(f, "${var}/bin"),
            FoundVia::Path => f.write_str("$PATH"),
            FoundVia::RepoLocal => write!(f, "repo-local toolchain ({REPO_LOCAL_BIN})"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub nvcc: PathBuf,
    pub via: FoundVia,
}

/// No nvcc anywhere: the message says what to do, in a checkout of cubins (`cargo xtask
/// setup`) or in a crate that depends on it (prebuilt kernels, the pinned wheels, a toolkit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccNotFound {
    /// What was tried, in order, with why each failed.
    pub tried: Vec<String>,
    /// Whether the crate sits in a cubins checkout, which has `cargo xtask setup`; a packaged
    /// crate does not.
    pub in_checkout: bool,
    /// The prebuilt variables of the crate whose build looked (cubins' unless the builder
    /// says otherwise).
    pub vars: crate::prebuilt::Vars,
}

impl fmt::Display for NvccNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vars = &self.vars;
        let prebuilt = &vars.prebuilt;
        // The first line is all that a failed `cargo build` or `cargo test` needs.
        if self.in_checkout {
            writeln!(
                f,
                "cubins: no CUDA compiler (nvcc) found: run `cargo xtask setup` (installs the pinned \
                 toolchain into .cuda/), or run the tests with `cargo xtask test`"
            )?;
        } else {
            writeln!(
                f,
                "cubins: no CUDA compiler (nvcc) found for {} and no prebuilt kernels given: set \
                 {prebuilt} to a folder of prebuilt kernels, or install nvcc (ways below)",
                vars.crate_name
            )?;
        }
        writeln!(f, "Looked, in this order:")?;
        for t in &self.tried {
            writeln!(f, "  - {t}")?;
        }
        writeln!(f, "Any one of these works:")?;
        writeln!(
            f,
            "  1. prebuilt kernels, no toolkit needed: {prebuilt}=/absolute/path/to/folder (or \
             the folder as `{}/` in the crate), a folder that `{}` exported on a machine with a \
             CUDA toolkit, from the same version of {} (checked against this crate's kernel \
             sources before it is embedded)",
            crate::prebuilt::CRATE_DIR,
            vars.export_command("/absolute/path/to/folder", "90"),
            vars.crate_name
        )?;
        writeln!(
            f,
            "  2. NVIDIA's CUDA 13.0 compiler from PyPI: `{}`, then NVCC=DIR/{}/nvcc",
            super::wheels::pip_install("DIR"),
            super::wheels::BIN_IN_TARGET
        )?;
        writeln!(
            f,
            "  3. a CUDA toolkit install: CUDA_HOME (or CUDA_PATH) at a toolkit whose bin/ holds \
             nvcc and cuobjdump, or NVCC=/path/to/nvcc"
        )?;
        writeln!(f, "  4. nvcc on PATH (cuobjdump beside it or on PATH)")?;
        if self.in_checkout {
            writeln!(
                f,
                "  5. the repo-local toolchain: run `cargo xtask setup` (installs the wheels of 2. into .cuda/)"
            )?;
        }
        write!(f, "Or build without kernels: CUBINS_NO_BUILD=1.")
    }
}

impl std::error::Error for NvccNotFound {}

/// The nvcc a variable names explicitly is missing or does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplicitNvcc {
    /// `NVCC`, `CUDA_HOME` or `CUDA_PATH`.
    pub var: &'static str,
    pub value: String,
    /// The nvcc it names (`$CUDA_HOME/bin/nvcc` for a toolkit folder).
    pub nvcc: PathBuf,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for ExplicitNvcc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.var == "NVCC" {
            String::new()
        } else {
            format!(" (its {})", self.nvcc.display())
        };
        write!(
            f,
            "cubins: {}={}{what}: {}. A toolchain named explicitly is used or refused, never \
             replaced by another: fix {}, or unset it to let cubins search (NVCC, CUDA_HOME, \
             CUDA_PATH, PATH, then the repo-local toolchain of `cargo xtask setup`)",
            self.var, self.value, self.problem, self.var
        )
    }
}

impl std::error::Error for ExplicitNvcc {}

/// Why no nvcc was located.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocateError {
    /// A variable names an nvcc that is not there; nothing else was tried.
    Explicit(ExplicitNvcc),
    /// Nothing named one and none was found.
    NotFound(NvccNotFound),
}

impl fmt::Display for LocateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocateError::Explicit(e) => e.fmt(f),
            LocateError::NotFound(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LocateError {}

fn is_file(p: &Path) -> bool {
    p.is_file()
}

/// The first of `NVCC`, `CUDA_HOME`, `CUDA_PATH` that is set (not blank), with the nvcc it names.
fn explicit_nvcc(env: &dyn Fn(&str) -> Option<String>) -> Option<(&'static str, String, PathBuf)> {
    ["NVCC", "CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .find_map(|var| {
            let value = env(var).filter(|v| !v.trim().is_empty())?;
            let nvcc = if var == "NVCC" {
                PathBuf::from(&value)
            } else {
                Path::new(&value).join("bin").join("nvcc")
            };
            Some((var, value, nvcc))
        })
}

/// Looks for nvcc. `env` reads an environment variable; `workspace_root` locates the
/// repo-local toolchain. `exists` is injectable so the order can be tested without files.
pub fn locate_nvcc_with(
    env: &dyn Fn(&str) -> Option<String>,
    workspace_root: &Path,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<Located, LocateError> {
    if let Some((var, value, nvcc)) = explicit_nvcc(env) {
        if !exists(&nvcc) {
            return Err(LocateError::Explicit(ExplicitNvcc {
                var,
                value,
                nvcc,
                problem: "no nvcc there (no such file)".into(),
            }));
        }
        let via = if var == "NVCC" {
            FoundVia::NvccVar
        } else {
            FoundVia::CudaHome(var)
        };
        return Ok(Located { nvcc, via });
    }
    let mut tried: Vec<String> = ["NVCC", "CUDA_HOME", "CUDA_PATH"]
        .iter()
        .map(|v| format!("{v}: not set"))
        .collect();
    let nonempty = |k: &str| env(k).filter(|v| !v.trim().is_empty());

    match nonempty("PATH") {
        Some(path) => {
            for dir in std::env::split_paths(&path) {
                let p = dir.join("nvcc");
                if exists(&p) {
                    return Ok(Located {
                        nvcc: p,
                        via: FoundVia::Path,
                    });
                }
            }
            tried.push("PATH: no nvcc in any of its directories".into());
        }
        None => tried.push("PATH: not set".into()),
    }

    let local = workspace_root.join(REPO_LOCAL_BIN).join("nvcc");
    if exists(&local) {
        return Ok(Located {
            nvcc: local,
            via: FoundVia::RepoLocal,
        });
    }
    tried.push(format!("{}: not installed", local.display()));
    Err(LocateError::NotFound(NvccNotFound {
        tried,
        in_checkout: exists(&workspace_root.join("xtask").join("Cargo.toml")),
        vars: crate::prebuilt::Vars::of("cubins"),
    }))
}

/// [`locate_nvcc_with`] on the real environment and file system.
pub fn locate_nvcc(workspace_root: &Path) -> Result<Located, LocateError> {
    locate_nvcc_with(&|k| std::env::var(k).ok(), workspace_root, &is_file)
}

/// A tool that ships beside nvcc (`cuobjdump`, `nvdisasm`), else from `PATH`.
pub fn sibling_tool(nvcc: &Path, name: &str) -> Option<PathBuf> {
    let beside = nvcc.parent()?.join(name);
    if beside.is_file() {
        return Some(beside);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn run(vars: &[(&str, &str)], files: &[&str]) -> Result<Located, LocateError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let files: HashSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        locate_nvcc_with(&|k| vars.get(k).cloned(), Path::new("/repo"), &|p| {
            files.contains(p)
        })
    }

    const ALL: &[&str] = &[
        "/x/nvcc",
        "/home/bin/nvcc",
        "/cpath/bin/nvcc",
        "/p2/nvcc",
        "/repo/.cuda/site/nvidia/cu13/bin/nvcc",
    ];
    const VARS: &[(&str, &str)] = &[
        ("NVCC", "/x/nvcc"),
        ("CUDA_HOME", "/home"),
        ("CUDA_PATH", "/cpath"),
        ("PATH", "/p1:/p2"),
    ];

    #[test]
    fn order_is_nvcc_cudahome_cudapath_path_repolocal() {
        assert_eq!(run(VARS, ALL).unwrap().via, FoundVia::NvccVar);
        assert_eq!(
            run(&VARS[1..], ALL).unwrap(),
            Located {
                nvcc: "/home/bin/nvcc".into(),
                via: FoundVia::CudaHome("CUDA_HOME")
            }
        );
        assert_eq!(
            run(&VARS[2..], ALL).unwrap().via,
            FoundVia::CudaHome("CUDA_PATH")
        );
        assert_eq!(
            run(&VARS[3..], ALL).unwrap(),
            Located {
                nvcc: "/p2/nvcc".into(),
                via: FoundVia::Path
            }
        );
        assert_eq!(run(&[], ALL).unwrap().via, FoundVia::RepoLocal);
    }

    fn explicit(r: Result<Located, LocateError>) -> ExplicitNvcc {
        match r {
            Err(LocateError::Explicit(e)) => e,
            other => panic!("expected an explicit-setting error, got {other:?}"),
        }
    }

    #[test]
    fn a_set_but_missing_nvcc_is_refused_not_replaced() {
        // Every other way would find one: none of them is taken.
        let e = explicit(run(&[("NVCC", "/nonexistent/nvcc"), ("PATH", "/p2")], ALL));
        assert_eq!(
            (e.var, e.nvcc.as_path()),
            ("NVCC", Path::new("/nonexistent/nvcc"))
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with("cubins: NVCC=/nonexistent/nvcc: no nvcc there")
                && msg.contains("never replaced")
                && msg.contains("unset it"),
            "{msg}"
        );
        let e = explicit(run(
            &[("CUDA_HOME", "/nohome"), ("CUDA_PATH", "/cpath")],
            ALL,
        ));
        assert_eq!(e.nvcc, PathBuf::from("/nohome/bin/nvcc"));
        assert!(
            e.to_string()
                .starts_with("cubins: CUDA_HOME=/nohome (its /nohome/bin/nvcc): no nvcc there"),
            "{e}"
        );
        let e = explicit(run(&[("CUDA_PATH", "/nopath")], ALL));
        assert_eq!(e.var, "CUDA_PATH");
        // A blank value is unset.
        assert_eq!(run(&[("NVCC", " ")], ALL).unwrap().via, FoundVia::RepoLocal);
    }

    #[test]
    fn missing_nvcc_in_a_checkout_says_to_run_setup() {
        let e = run(&[("PATH", "/usr/bin")], &["/repo/xtask/Cargo.toml"]).unwrap_err();
        assert!(matches!(e, LocateError::NotFound(_)), "{e:?}");
        let msg = e.to_string();
        let first = msg.lines().next().unwrap();
        assert!(
            first.contains("run `cargo xtask setup`") && first.contains("`cargo xtask test`"),
            "the first line says what to run: {first}"
        );
        for needle in [
            "NVCC=",
            "CUDA_HOME",
            "CUDA_PATH",
            "PATH",
            "CUBINS_PREBUILT=",
            "5. the repo-local toolchain: run `cargo xtask setup`",
            "CUBINS_NO_BUILD",
        ] {
            assert!(msg.contains(needle), "missing {needle:?} in:\n{msg}");
        }
    }

    #[test]
    fn missing_nvcc_in_a_packaged_crate_names_prebuilt_kernels_the_wheels_and_a_toolkit() {
        let e = run(&[("PATH", "/usr/bin")], &[]).unwrap_err();
        let msg = e.to_string();
        let first = msg.lines().next().unwrap();
        assert!(
            first.contains("no prebuilt kernels given: set CUBINS_PREBUILT"),
            "{first}"
        );
        // A packaged crate has no xtask.
        assert!(!msg.contains("cargo xtask setup"), "{msg}");
        for needle in [
            "CUBINS_PREBUILT=/absolute/path/to/folder",
            &super::super::wheels::pip_install("DIR"),
            "nvidia-cuda-nvcc==13.0.88",
            "nvidia-cuda-cuobjdump==13.2.86",
            "NVCC=DIR/nvidia/cu13/bin/nvcc",
            "CUDA_HOME (or CUDA_PATH) at a toolkit whose bin/ holds nvcc and cuobjdump",
            "4. nvcc on PATH",
            "CUBINS_NO_BUILD=1",
        ] {
            assert!(msg.contains(needle), "missing {needle:?} in:\n{msg}");
        }
    }

    #[test]
    fn missing_nvcc_names_the_building_crates_own_variables() {
        let LocateError::NotFound(n) = run(&[("PATH", "/usr/bin")], &[]).unwrap_err() else {
            panic!("no nvcc anywhere is NotFound");
        };
        let e = crate::prebuilt::naming(
            crate::toolchain::ToolchainError::NotFound(n),
            &crate::prebuilt::Vars::of("my-kernels"),
        );
        let msg = e.to_string();
        for needle in [
            "no CUDA compiler (nvcc) found for my-kernels and no prebuilt kernels given: set \
             MY_KERNELS_PREBUILT",
            "MY_KERNELS_PREBUILT=/absolute/path/to/folder (or the folder as `prebuilt/` in the crate)",
            "`MY_KERNELS_EXPORT_PREBUILT=/absolute/path/to/folder CUBINS_ARCHS=\"90\" cargo build -p \
             my-kernels` exported",
        ] {
            assert!(msg.contains(needle), "missing {needle:?} in:\n{msg}");
        }
        assert!(!msg.contains("CUBINS_PREBUILT"), "{msg}");
    }
}
