//! The CUDA toolchain: finding it, asking its version and arches, and driving nvcc
//! and cuobjdump for one compile job.

pub mod cache;
pub mod discover;
pub mod nvcc;
pub mod wheels;

use crate::arch::Arch;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use discover::{ExplicitNvcc, FoundVia, LocateError, NvccNotFound};

/// `release 13.0, V13.0.88` from `nvcc --version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitVersion {
    pub major: u32,
    pub minor: u32,
    /// `13.0.88`
    pub full: String,
    /// The whole `nvcc --version` text (part of every cache key).
    pub banner: String,
}

impl ToolkitVersion {
    /// Parses `nvcc --version` output.
    pub fn parse(banner: &str) -> Option<ToolkitVersion> {
        let re = regex::Regex::new(r"release (\d+)\.(\d+), V(\d+\.\d+\.\d+)").ok()?;
        let c = re.captures(banner)?;
        Some(ToolkitVersion {
            major: c[1].parse().ok()?,
            minor: c[2].parse().ok()?,
            full: c[3].to_string(),
            banner: banner.trim().to_string(),
        })
    }

    /// `13.0`: the key snapshots are stored under.
    pub fn major_minor(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }
}

#[derive(Debug)]
#[non_exhaustive]
pub enum ToolchainError {
    NotFound(NvccNotFound),
    /// `NVCC`, `CUDA_HOME` or `CUDA_PATH` names an nvcc that is missing or does not run.
    Explicit(ExplicitNvcc),
    /// nvcc exists but could not be run or its output was not understood.
    Broken {
        tool: PathBuf,
        detail: String,
    },
    /// cuobjdump is needed to inspect cubins and was not found.
    NoCuobjdump {
        nvcc: PathBuf,
    },
    /// The toolkit cannot build an arch that was asked for.
    ArchTooNew {
        arch: Arch,
        toolkit: String,
        /// The arches of [`crate::arch::SUPPORTED`] this toolkit can build.
        supported: Vec<Arch>,
    },
}

impl fmt::Display for ToolchainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolchainError::NotFound(e) => e.fmt(f),
            ToolchainError::Explicit(e) => e.fmt(f),
            ToolchainError::Broken { tool, detail } => write!(f, "cubins: {} does not work: {detail}", tool.display()),
            ToolchainError::NoCuobjdump { nvcc } => write!(
                f,
                "cubins: found {} but no cuobjdump beside it or on PATH; it is needed to inspect cubins \
                 (the {} wheel has it; in a cubins checkout `cargo xtask setup` installs it)",
                nvcc.display(),
                wheels::pin("nvidia-cuda-cuobjdump").unwrap_or_default()
            ),
            ToolchainError::ArchTooNew { arch, toolkit, supported } => {
                let names: Vec<String> = supported.iter().map(Arch::sm_name).collect();
                write!(
                    f,
                    "cubins: CUDA {toolkit} is too old to build {arch}; of the arches cubins supports it builds: {}. \
                     Use a newer toolkit or drop {arch} from the selected arches.",
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                )
            }
        }
    }
}

impl std::error::Error for ToolchainError {}

impl ToolchainError {
    /// An nvcc named by a variable that does not run is that setting's fault: say so, so that
    /// nobody looks for a fallback that is not taken.
    fn named_by(self, via: &FoundVia) -> ToolchainError {
        match (self, via.variable()) {
            (ToolchainError::Broken { tool, detail }, Some(var)) => {
                let value = std::env::var(var).unwrap_or_default();
                ToolchainError::Explicit(ExplicitNvcc {
                    var,
                    value,
                    problem: format!("{} does not run: {}", tool.display(), detail.trim_end()),
                    nvcc: tool,
                })
            }
            (e, _) => e,
        }
    }
}

/// A located, working toolchain.
#[derive(Debug, Clone)]
pub struct Toolchain {
    pub nvcc: PathBuf,
    pub via: FoundVia,
    pub cuobjdump: PathBuf,
    pub version: ToolkitVersion,
    /// `cuobjdump --version` (its output format is part of what cached inspection depends on).
    pub cuobjdump_banner: String,
    /// Real arches nvcc can build (`sm_90` ...), from `nvcc --list-gpu-code`.
    pub gpu_codes: Vec<String>,
    /// Optional wrapper (`CUBINS_NVCC_WRAPPER`, e.g. `sccache`) that nvcc runs under.
    pub wrapper: Option<String>,
}

fn run_capture(tool: &Path, args: &[&str]) -> Result<String, ToolchainError> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| ToolchainError::Broken {
            tool: tool.into(),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(ToolchainError::Broken {
            tool: tool.into(),
            detail: format!(
                "`{}` exited with {}: {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Toolchain {
    /// Finds nvcc (see [`discover`]) and the tools beside it, and reads their versions.
    pub fn discover(workspace_root: &Path) -> Result<Toolchain, ToolchainError> {
        let located = discover::locate_nvcc(workspace_root).map_err(|e| match e {
            LocateError::Explicit(e) => ToolchainError::Explicit(e),
            LocateError::NotFound(e) => ToolchainError::NotFound(e),
        })?;
        let via = located.via.clone();
        Toolchain::from_nvcc(located.nvcc, located.via).map_err(|e| e.named_by(&via))
    }

    pub fn from_nvcc(nvcc: PathBuf, via: FoundVia) -> Result<Toolchain, ToolchainError> {
        let banner = run_capture(&nvcc, &["--version"])?;
        let version = ToolkitVersion::parse(&banner).ok_or_else(|| ToolchainError::Broken {
            tool: nvcc.clone(),
            detail: format!("unexpected `nvcc --version` output: {banner:?}"),
        })?;
        let gpu_codes = run_capture(&nvcc, &["--list-gpu-code"])?
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        let cuobjdump = discover::sibling_tool(&nvcc, "cuobjdump")
            .ok_or_else(|| ToolchainError::NoCuobjdump { nvcc: nvcc.clone() })?;
        let cuobjdump_banner = run_capture(&cuobjdump, &["--version"])?.trim().to_string();
        let wrapper = std::env::var("CUBINS_NVCC_WRAPPER")
            .ok()
            .filter(|w| !w.trim().is_empty());
        Ok(Toolchain {
            nvcc,
            via,
            cuobjdump,
            version,
            cuobjdump_banner,
            gpu_codes,
            wrapper,
        })
    }

    /// Errors if nvcc cannot build `arch`. Arch-specific targets (`sm_90a`) ride on their base
    /// arch, which `--list-gpu-code` lists.
    pub fn check_arch(&self, arch: Arch) -> Result<(), ToolchainError> {
        if self.builds(arch) {
            Ok(())
        } else {
            Err(ToolchainError::ArchTooNew {
                arch,
                toolkit: self.version.full.clone(),
                supported: crate::arch::SUPPORTED
                    .iter()
                    .copied()
                    .filter(|&a| self.builds(a))
                    .collect(),
            })
        }
    }

    fn builds(&self, arch: Arch) -> bool {
        self.gpu_codes.contains(&arch.plain().sm_name())
    }

    /// A `Command` for nvcc, under the wrapper if one is configured.
    pub fn nvcc_command(&self) -> Command {
        match &self.wrapper {
            Some(w) => {
                let mut c = Command::new(w);
                c.arg(&self.nvcc);
                c
            }
            None => Command::new(&self.nvcc),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nvcc_version() {
        let banner = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n\
                      Built on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\n\
                      Build cuda_13.0.r13.0/compiler.36424714_0\n";
        let v = ToolkitVersion::parse(banner).unwrap();
        assert_eq!((v.major, v.minor, v.full.as_str()), (13, 0, "13.0.88"));
        assert_eq!(v.major_minor(), "13.0");
        assert!(ToolkitVersion::parse("garbage").is_none());
    }

    #[test]
    fn a_toolkit_too_old_for_an_arch_says_so() {
        let tc = Toolchain {
            nvcc: "/cuda/bin/nvcc".into(),
            via: FoundVia::Path,
            cuobjdump: "/cuda/bin/cuobjdump".into(),
            version: ToolkitVersion {
                major: 11,
                minor: 8,
                full: "11.8.89".into(),
                banner: String::new(),
            },
            cuobjdump_banner: String::new(),
            gpu_codes: ["sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90"]
                .map(String::from)
                .to_vec(),
            wrapper: None,
        };
        assert!(tc.check_arch(Arch::new(90)).is_ok());
        assert!(tc.check_arch(Arch::specific(90)).is_ok());
        let msg = tc.check_arch(Arch::new(120)).unwrap_err().to_string();
        // What cubins could build with it, not every code nvcc lists.
        assert!(
            msg.contains("CUDA 11.8.89 is too old to build sm_120; of the arches cubins supports it builds: \
                          sm_80, sm_86, sm_89, sm_90, sm_90a."),
            "{msg}"
        );
        assert!(!msg.contains("sm_75") && !msg.contains("sm_87"), "{msg}");
    }
}
