//! Compiles kernel files through the build pipeline and inspects every cubin, outside the
//! build script: for the CLI (`report`, `diff` of git revisions, standalone `.cu` files) and
//! for tests. The result has the shape of the build's `reports.json`.

use crate::analyze::{analyze_cubin, AnalyzeError};
use crate::arch::Arch;
use crate::manifest::Manifest;
use crate::model::CubinOutputs;
use crate::pipeline::{self, BuildError, BuildOutput, Plan, UnknownKernelFile};
use crate::schema::{CubinEntry, FileEntry, ReportsFile};
use crate::toolchain::cache::Cache;
use crate::toolchain::Toolchain;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug)]
#[non_exhaustive]
pub enum InspectError {
    Io {
        what: String,
        error: std::io::Error,
    },
    Build(BuildError),
    /// The manifest's `[arch_specific]` names a file the folder lacks.
    ArchSpecific(UnknownKernelFile),
    Analyze {
        file: PathBuf,
        arch: Arch,
        error: AnalyzeError,
    },
    /// A tool (git, tar, cuobjdump) failed.
    Tool {
        command: String,
        stderr: String,
    },
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InspectError::Io { what, error } => write!(f, "{what}: {error}"),
            InspectError::Build(e) => e.fmt(f),
            InspectError::ArchSpecific(e) => e.fmt(f),
            InspectError::Analyze { file, arch, error } => {
                write!(f, "inspecting {} for {arch}: {error}", file.display())
            }
            InspectError::Tool { command, stderr } => {
                write!(f, "`{command}` failed: {}", stderr.trim_end())
            }
        }
    }
}

impl std::error::Error for InspectError {}

/// What to compile.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// Folder of kernel files (its `include/` is on the include path).
    pub source_dir: &'a Path,
    /// Only these files of `source_dir` (all `*.cu` when empty).
    pub only: Vec<PathBuf>,
    pub archs: Vec<Arch>,
    /// Flags added after the pipeline's own.
    pub extra_flags: Vec<String>,
    /// Artifact cache folder.
    pub cache_dir: &'a Path,
    pub jobs: usize,
}

impl Request<'_> {
    pub fn plan(&self) -> Result<Plan, InspectError> {
        let mut plan = Plan::discover(self.source_dir, self.archs.clone()).map_err(|error| {
            InspectError::Io {
                what: format!("reading {}", self.source_dir.display()),
                error,
            }
        })?;
        if !self.only.is_empty() {
            plan.sources
                .retain(|s| self.only.iter().any(|o| s.file_name() == o.file_name()));
        }
        plan.flags.extend(self.extra_flags.iter().cloned());
        Ok(plan)
    }
}

/// Compiles and inspects; returns the build (artifact paths, tool outputs) and its reports.
/// Arch-specific variants are built for the files `manifest` declares (every file if it
/// declares none).
pub fn compile_and_inspect(
    tc: &Toolchain,
    req: &Request,
    manifest: &Manifest,
) -> Result<(BuildOutput, ReportsFile), InspectError> {
    let plan = req
        .plan()?
        .with_arch_specific(manifest.arch_specific_files())
        .map_err(InspectError::ArchSpecific)?;
    let cache = Cache::new(req.cache_dir.to_path_buf()).map_err(|error| InspectError::Io {
        what: format!("creating the cache {}", req.cache_dir.display()),
        error,
    })?;
    let build = pipeline::build(tc, &plan, &cache, req.jobs.max(1)).map_err(InspectError::Build)?;
    let reports = reports_of(tc, &build, manifest)?;
    Ok((build, reports))
}

/// Inspects every cubin of a finished build.
pub fn reports_of(
    tc: &Toolchain,
    build: &BuildOutput,
    manifest: &Manifest,
) -> Result<ReportsFile, InspectError> {
    let shapes = crate::shapes::LaunchShapes::of(manifest);
    let mut files = Vec::new();
    for f in &build.files {
        let mut cubins = Vec::new();
        for c in &f.cubins {
            let report = analyze_cubin(c.arch, &c.outputs, &shapes).map_err(|error| {
                InspectError::Analyze {
                    file: f.source.clone(),
                    arch: c.arch,
                    error,
                }
            })?;
            cubins.push(CubinEntry {
                sha256: c.sha256.clone(),
                report,
            });
        }
        files.push(FileEntry {
            name: f.name.clone(),
            source_digest: f.source_digest.clone(),
            cubins,
        });
    }
    Ok(ReportsFile {
        toolkit: tc.version.full.clone(),
        toolkit_major_minor: tc.version.major_minor(),
        files,
    })
}

fn run(cmd: &mut Command) -> Result<Vec<u8>, InspectError> {
    let command = format!("{cmd:?}").replace('"', "");
    let out = cmd.output().map_err(|error| InspectError::Io {
        what: format!("running {command}"),
        error,
    })?;
    if !out.status.success() {
        return Err(InspectError::Tool {
            command,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(out.stdout)
}

/// Why a file is not a cubin, from its bytes alone (before cuobjdump sees it, whose message
/// for a foreign or cut file is only `does not contain device code`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotACubin {
    /// Shorter than an ELF header.
    TooShort { len: usize },
    /// A CUDA fat binary (several cubins and PTX), not one cubin.
    FatBinary,
    /// Not an ELF file at all.
    NotElf,
    /// An ELF file, but not 64-bit little-endian as every cubin is.
    WrongElfClass,
    /// An ELF file for another machine (a host object, say).
    OtherMachine { machine: u16 },
    /// The file ends before a table or section its header places in it.
    Truncated {
        len: usize,
        needs: u64,
        what: &'static str,
    },
}

impl fmt::Display for NotACubin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotACubin::TooShort { len } => {
                write!(f, "{len} bytes, shorter than an ELF header (64 bytes)")
            }
            NotACubin::FatBinary => f.write_str(
                "a CUDA fat binary, not a single cubin (`cuobjdump -xelf all FILE` extracts its cubins)",
            ),
            NotACubin::NotElf => f.write_str("not an ELF file (a cubin starts with \\x7fELF)"),
            NotACubin::WrongElfClass => {
                f.write_str("an ELF file, but not 64-bit little-endian as cubins are")
            }
            NotACubin::OtherMachine { machine } => write!(
                f,
                "an ELF file for machine {machine}, not for CUDA ({EM_CUDA}); for a host object or \
                 executable, `cuobjdump -xelf all FILE` extracts the cubins it embeds"
            ),
            NotACubin::Truncated { len, needs, what } => write!(
                f,
                "truncated: the file has {len} bytes, its {what} needs {needs}"
            ),
        }
    }
}

impl std::error::Error for NotACubin {}

/// `e_machine` of a cubin.
const EM_CUDA: u16 = 190;
/// Section type of sections that take no bytes in the file (`.bss`-like).
const SHT_NOBITS: u32 = 8;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Checks that `bytes` is a whole cubin: a 64-bit little-endian ELF file for `EM_CUDA` whose
/// program headers, section headers and section contents all lie inside the file.
pub fn check_cubin(bytes: &[u8]) -> Result<(), NotACubin> {
    if bytes.starts_with(&[0x50, 0xed, 0x55, 0xba]) {
        return Err(NotACubin::FatBinary);
    }
    if !bytes.starts_with(b"\x7fELF") {
        return Err(if bytes.len() < 64 {
            NotACubin::TooShort { len: bytes.len() }
        } else {
            NotACubin::NotElf
        });
    }
    if bytes.len() < 64 {
        return Err(NotACubin::TooShort { len: bytes.len() });
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Err(NotACubin::WrongElfClass);
    }
    let len = bytes.len();
    let machine = u16_at(bytes, 18).unwrap_or(0);
    if machine != EM_CUDA {
        return Err(NotACubin::OtherMachine { machine });
    }
    let table = |off: usize, entsize: usize, num: usize| -> Option<(u64, u64, u64)> {
        Some((
            u64_at(bytes, off)?,
            u64::from(u16_at(bytes, entsize)?),
            u64::from(u16_at(bytes, num)?),
        ))
    };
    let within = |start: u64, size: u64, what: &'static str| -> Result<(), NotACubin> {
        let end = start.saturating_add(size);
        if end > len as u64 {
            Err(NotACubin::Truncated {
                len,
                needs: end,
                what,
            })
        } else {
            Ok(())
        }
    };
    let (phoff, phentsize, phnum) = table(0x20, 0x36, 0x38).unwrap_or_default();
    within(
        phoff,
        phentsize.saturating_mul(phnum),
        "program header table",
    )?;
    let (shoff, shentsize, shnum) = table(0x28, 0x3a, 0x3c).unwrap_or_default();
    within(
        shoff,
        shentsize.saturating_mul(shnum),
        "section header table",
    )?;
    for i in 0..shnum {
        let at = shoff.saturating_add(i.saturating_mul(shentsize));
        let Ok(at) = usize::try_from(at) else { break };
        let (Some(kind), Some(offset), Some(size)) = (
            u32_at(bytes, at.saturating_add(4)),
            u64_at(bytes, at.saturating_add(0x18)),
            u64_at(bytes, at.saturating_add(0x20)),
        ) else {
            break;
        };
        if kind != SHT_NOBITS {
            within(offset, size, "section data")?;
        }
    }
    Ok(())
}

/// The tool outputs of a cubin that was not compiled here (so there is no ptxas log).
pub fn outputs_of_cubin(tc: &Toolchain, cubin: &Path) -> Result<CubinOutputs, InspectError> {
    let dump = |flag: &str| -> Result<String, InspectError> {
        let bytes = run(Command::new(&tc.cuobjdump).arg(flag).arg(cubin))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    Ok(CubinOutputs {
        ptxas_log: String::new(),
        res_usage: dump("-res-usage")?,
        sass: dump("-sass")?,
        elf: dump("-elf")?,
    })
}

/// The arch a cubin was built for, from its disassembly (`code for sm_90a`).
pub fn cubin_arch(outputs: &CubinOutputs) -> Option<Arch> {
    let listing = crate::parse::sass::parse(&outputs.sass).ok()?;
    Arch::parse(listing.arch.as_deref()?).ok()
}

/// Exports `cuda/` as of git revision `rev` of the repository at `repo` into
/// `cache_root/<commit>/cuda` (kept: a second diff against the same commit reuses it and
/// its cached artifacts). Returns that `cuda/` folder.
pub fn export_revision(repo: &Path, rev: &str, cache_root: &Path) -> Result<PathBuf, InspectError> {
    let sha = run(Command::new("git").arg("-C").arg(repo).args([
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{rev}^{{commit}}"),
    ]))
    .map_err(|_| InspectError::Tool {
        command: format!("git rev-parse {rev}"),
        stderr: format!(
            "`{rev}` is neither a reports JSON file nor a git revision of {}",
            repo.display()
        ),
    })?;
    let sha = String::from_utf8_lossy(&sha).trim().to_string();
    let dest = cache_root.join(&sha);
    let done = dest.join("EXPORTED");
    if !done.is_file() {
        let _ = std::fs::remove_dir_all(&dest);
        std::fs::create_dir_all(&dest).map_err(|error| InspectError::Io {
            what: format!("creating {}", dest.display()),
            error,
        })?;
        let tar = run(Command::new("git").arg("-C").arg(repo).args([
            "archive",
            "--format=tar",
            &sha,
            "cuda",
        ]))?;
        let mut child = Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(&dest)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| InspectError::Io {
                what: "running tar".into(),
                error,
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&tar).map_err(|error| InspectError::Io {
                what: "feeding tar".into(),
                error,
            })?;
        }
        let out = child.wait_with_output().map_err(|error| InspectError::Io {
            what: "running tar".into(),
            error,
        })?;
        if !out.status.success() {
            return Err(InspectError::Tool {
                command: "tar -x".into(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        std::fs::write(&done, &sha).map_err(|error| InspectError::Io {
            what: format!("writing {}", done.display()),
            error,
        })?;
    }
    Ok(dest.join("cuda"))
}

/// The newest `reports.json` a cargo build of the `cubins` crate wrote under `target_dir`
/// (`<profile>/build/cubins-*/out/`, also under a target triple).
pub fn latest_build_reports(target_dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let mut profiles: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(target_dir).ok()?.flatten() {
        let p = e.path();
        profiles.push(p.clone());
        if let Ok(rd) = std::fs::read_dir(&p) {
            profiles.extend(rd.flatten().map(|e| e.path()));
        }
    }
    for profile in profiles {
        let Ok(builds) = std::fs::read_dir(profile.join("build")) else {
            continue;
        };
        for b in builds.flatten() {
            let is_cubins = b
                .file_name()
                .to_str()
                .is_some_and(|n| n.strip_prefix("cubins-").is_some_and(|h| !h.contains('-')));
            let report = b.path().join("out").join("reports.json");
            if is_cubins {
                if let Ok(modified) = std::fs::metadata(&report).and_then(|m| m.modified()) {
                    found.push((modified, report));
                }
            }
        }
    }
    found.into_iter().max_by_key(|(t, _)| *t).map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal cubin-shaped ELF: header, one section of 16 bytes, the section header table.
    fn tiny_cubin() -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2; // 64-bit
        b[5] = 1; // little-endian
        b[18..20].copy_from_slice(&EM_CUDA.to_le_bytes());
        b.extend_from_slice(&[0xab; 16]); // section data at 64..80
        let shoff = b.len() as u64;
        b[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        b[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        b[0x3c..0x3e].copy_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&[0u8; 64]); // the null section
        let mut sh = [0u8; 64];
        sh[4..8].copy_from_slice(&1u32.to_le_bytes()); // PROGBITS
        sh[0x18..0x20].copy_from_slice(&64u64.to_le_bytes());
        sh[0x20..0x28].copy_from_slice(&16u64.to_le_bytes());
        b.extend_from_slice(&sh);
        b
    }

    #[test]
    fn a_whole_cubin_passes_and_each_defect_is_named() {
        let good = tiny_cubin();
        assert_eq!(check_cubin(&good), Ok(()));
        assert_eq!(
            check_cubin(&good[..10]),
            Err(NotACubin::TooShort { len: 10 })
        );
        assert!(matches!(
            check_cubin(&good[..good.len() - 1]),
            Err(NotACubin::Truncated {
                what: "section header table",
                ..
            })
        ));
        assert_eq!(check_cubin(&[7u8; 4096]), Err(NotACubin::NotElf));
        let mut host = good.clone();
        host[18..20].copy_from_slice(&62u16.to_le_bytes());
        assert_eq!(
            check_cubin(&host),
            Err(NotACubin::OtherMachine { machine: 62 })
        );
        let mut elf32 = good.clone();
        elf32[4] = 1;
        assert_eq!(check_cubin(&elf32), Err(NotACubin::WrongElfClass));
        let mut fat = vec![0x50, 0xed, 0x55, 0xba];
        fat.extend_from_slice(&good);
        assert_eq!(check_cubin(&fat), Err(NotACubin::FatBinary));
        // A section that runs past the end of the file.
        let mut long = good.clone();
        let sh = long.len() - 64;
        long[sh + 0x20..sh + 0x28].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = check_cubin(&long).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("truncated: the file has 208 bytes, its section data needs"),
            "{e}"
        );
    }
}
