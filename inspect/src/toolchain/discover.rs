//! Finding nvcc (and the cuobjdump / nvdisasm beside it), in a fixed order:
//! `NVCC`, `CUDA_HOME` / `CUDA_PATH`, `PATH`, then the repo-local toolchain that
//! `cargo xtask setup` installs.

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

/// No nvcc anywhere: the message names all four ways and the setup command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccNotFound {
    /// What was tried, in order, with why each failed.
    pub tried: Vec<String>,
}

impl fmt::Display for NvccNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first line is all that a fresh clone's failed `cargo build` or `cargo test` needs.
        writeln!(
            f,
            "cubins: no CUDA compiler (nvcc) found: run `cargo xtask setup` (installs the pinned \
             toolchain into .cuda/), or run the tests with `cargo xtask test`"
        )?;
        writeln!(f, "Looked, in this order:")?;
        for t in &self.tried {
            writeln!(f, "  - {t}")?;
        }
        writeln!(f, "Provide one in any of these four ways:")?;
        writeln!(f, "  1. NVCC=/path/to/nvcc")?;
        writeln!(
            f,
            "  2. CUDA_HOME (or CUDA_PATH) pointing at a CUDA toolkit whose bin/ holds nvcc"
        )?;
        writeln!(f, "  3. nvcc on PATH")?;
        writeln!(
            f,
            "  4. the repo-local toolchain: run `cargo xtask setup` (installs NVIDIA's pinned CUDA 13.0 wheels from PyPI into .cuda/)"
        )?;
        write!(f, "Or build without kernels: CUBINS_NO_BUILD=1.")
    }
}

impl std::error::Error for NvccNotFound {}

fn is_file(p: &Path) -> bool {
    p.is_file()
}

/// Looks for nvcc. `env` reads an environment variable; `workspace_root` locates the
/// repo-local toolchain. `exists` is injectable so the order can be tested without files.
pub fn locate_nvcc_with(
    env: &dyn Fn(&str) -> Option<String>,
    workspace_root: &Path,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<Located, NvccNotFound> {
    let mut tried = Vec::new();
    let nonempty = |k: &str| env(k).filter(|v| !v.trim().is_empty());

    if let Some(v) = nonempty("NVCC") {
        let p = PathBuf::from(&v);
        if exists(&p) {
            return Ok(Located {
                nvcc: p,
                via: FoundVia::NvccVar,
            });
        }
        tried.push(format!("NVCC={v}: no such file"));
    } else {
        tried.push("NVCC: not set".into());
    }

    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = nonempty(var) {
            let p = Path::new(&v).join("bin").join("nvcc");
            if exists(&p) {
                return Ok(Located {
                    nvcc: p,
                    via: FoundVia::CudaHome(var),
                });
            }
            tried.push(format!("{var}={v}: no bin/nvcc there"));
        } else {
            tried.push(format!("{var}: not set"));
        }
    }

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
    Err(NvccNotFound { tried })
}

/// [`locate_nvcc_with`] on the real environment and file system.
pub fn locate_nvcc(workspace_root: &Path) -> Result<Located, NvccNotFound> {
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

    fn run(vars: &[(&str, &str)], files: &[&str]) -> Result<Located, NvccNotFound> {
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

    #[test]
    fn a_set_but_broken_variable_falls_through_and_is_reported() {
        let e = run(&[("NVCC", "/nope/nvcc"), ("CUDA_HOME", "/nohome")], &[]).unwrap_err();
        assert!(e.tried[0].contains("/nope/nvcc"));
        assert!(e.tried[1].contains("/nohome"));
        assert_eq!(
            run(
                &[("NVCC", "/nope/nvcc")],
                &["/repo/.cuda/site/nvidia/cu13/bin/nvcc"]
            )
            .unwrap()
            .via,
            FoundVia::RepoLocal
        );
    }

    #[test]
    fn missing_nvcc_message_names_all_four_ways_and_setup() {
        let msg = run(&[("PATH", "/usr/bin")], &[]).unwrap_err().to_string();
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
            "cargo xtask setup",
            "CUBINS_NO_BUILD",
        ] {
            assert!(msg.contains(needle), "missing {needle:?} in:\n{msg}");
        }
    }
}
