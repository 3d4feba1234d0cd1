//! One nvcc job: its command line, its dependency file, and its errors.

use crate::arch::Arch;
use std::fmt;
use std::path::{Path, PathBuf};

/// What a job produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputKind {
    /// Machine code for one real arch.
    Cubin,
    /// PTX for the arch's virtual architecture (the driver-JIT fallback).
    Ptx,
}

impl OutputKind {
    pub fn extension(&self) -> &'static str {
        match self {
            OutputKind::Cubin => "cubin",
            OutputKind::Ptx => "ptx",
        }
    }
}

/// One kernel file compiled for one arch into one artifact.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub source: PathBuf,
    pub arch: Arch,
    pub kind: OutputKind,
    /// Flags every job of the build shares (`-O3`, `-lineinfo`, `-std=c++17`, include dirs).
    pub flags: Vec<String>,
}

impl Job {
    /// `copy.sm_90.cubin`, `copy.compute_80.ptx`
    pub fn artifact_name(&self) -> String {
        let stem = self
            .source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match self.kind {
            OutputKind::Cubin => format!("{stem}.{}.cubin", self.arch.sm_name()),
            OutputKind::Ptx => format!("{stem}.{}.ptx", self.arch.compute_name()),
        }
    }

    /// Target selection flags. `-gencode` for cubins: the `-arch=sm_90a` shorthand also runs
    /// a plain sm_90 pass that rejects arch-specific instructions.
    pub fn target_flags(&self) -> Vec<String> {
        match self.kind {
            OutputKind::Cubin => vec![
                "-cubin".into(),
                format!(
                    "-gencode=arch={},code={}",
                    self.arch.compute_name(),
                    self.arch.sm_name()
                ),
                "-Xptxas".into(),
                "-v".into(),
            ],
            OutputKind::Ptx => vec!["-ptx".into(), format!("-arch={}", self.arch.compute_name())],
        }
    }

    /// The folder nvcc runs in: the kernel file's own (see [`crate::portable`]).
    pub fn work_dir(&self) -> &Path {
        self.source.parent().unwrap_or(Path::new("."))
    }

    /// The kernel file's name, as nvcc is given it from [`Job::work_dir`].
    pub fn source_name(&self) -> String {
        self.source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// [`Job::flags`] as passed from [`Job::work_dir`]: include folders inside it relative.
    pub fn portable_flags(&self) -> Vec<String> {
        let dir = self.work_dir();
        self.flags
            .iter()
            .map(|f| crate::portable::include_flag(f, dir))
            .collect()
    }

    /// The first step of every job: the source to PTX for the job's virtual arch, with its
    /// dependency file. `--orig_src_path_name` keeps the checkout path out of the mangling of
    /// anonymous namespaces.
    pub fn ptx_args(&self, ptx: &Path, depfile: &Path) -> Vec<String> {
        let name = self.source_name();
        let mut a = vec!["-ptx".into(), format!("-arch={}", self.arch.compute_name())];
        a.extend(self.portable_flags());
        a.extend([
            "-Xcicc".into(),
            format!("--orig_src_path_name,{name}"),
            "-MD".into(),
            "-MF".into(),
            depfile.display().to_string(),
            "-o".into(),
            ptx.display().to_string(),
            name,
        ]);
        a
    }

    /// The second step of a cubin job: the (rewritten) PTX assembled for the real arch.
    pub fn cubin_args(&self, ptx: &Path, output: &Path) -> Vec<String> {
        let mut a = self.target_flags();
        a.extend(self.portable_flags());
        a.extend([
            "-o".into(),
            output.display().to_string(),
            ptx.display().to_string(),
        ]);
        a
    }
}

/// nvcc failed: the command, its stderr, and the `file:line` of each error it names.
#[derive(Debug, Clone)]
pub struct CompileError {
    pub command: String,
    pub stderr: String,
    pub locations: Vec<ErrorLocation>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLocation {
    pub file: String,
    pub line: u32,
    pub message: String,
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "nvcc failed:")?;
        for l in &self.locations {
            writeln!(f, "  {}:{}: {}", l.file, l.line, l.message)?;
        }
        writeln!(f, "command: {}", self.command)?;
        write!(f, "stderr:\n{}", self.stderr.trim_end())
    }
}

impl std::error::Error for CompileError {}

/// Finds `file(line): error: message` (front end) and `ptxas ... error : ...` lines.
pub fn error_locations(stderr: &str) -> Vec<ErrorLocation> {
    let re = regex::Regex::new(r"^(?P<file>[^\s()][^()]*)\((?P<line>\d+)\): (?P<kind>error|catastrophic error)[^:]*: (?P<msg>.*)$")
        .expect("static regex");
    let ptxas = regex::Regex::new(
        r#"^ptxas (?:(?P<file>[^,']+), line (?P<line>\d+); )?(?:fatal|error)\s*: (?:'(?P<qfile>[^']+)', line (?P<qline>\d+); )?(?P<msg>.*)$"#,
    )
    .expect("static regex");
    let mut out = Vec::new();
    for line in stderr.lines() {
        let line = line.trim_end();
        if let Some(c) = re.captures(line) {
            out.push(ErrorLocation {
                file: c["file"].to_string(),
                line: c["line"].parse().unwrap_or(0),
                message: c["msg"].to_string(),
            });
        } else if let Some(c) = ptxas.captures(line) {
            out.push(ErrorLocation {
                file: c
                    .name("file")
                    .or(c.name("qfile"))
                    .map_or("ptxas", |m| m.as_str())
                    .to_string(),
                line: c
                    .name("line")
                    .or(c.name("qline"))
                    .and_then(|m| m.as_str().parse().ok())
                    .unwrap_or(0),
                message: c["msg"].to_string(),
            });
        }
    }
    out
}

/// Parses a make-style dependency file (`target : dep \` continuation lines) into paths.
pub fn parse_depfile(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut deps = Vec::new();
    for rule in joined.lines() {
        let Some((_, rhs)) = rule.split_once(": ").or_else(|| rule.split_once(" :")) else {
            continue;
        };
        // Escaped spaces (`\ `) are part of a path.
        let mut cur = String::new();
        let mut chars = rhs.chars().peekable();
        while let Some(ch) = chars.next() {
            match ch {
                '\\' if chars.peek() == Some(&' ') => {
                    cur.push(' ');
                    chars.next();
                }
                ' ' | '\t' => {
                    if !cur.is_empty() {
                        deps.push(PathBuf::from(std::mem::take(&mut cur)));
                    }
                }
                c => cur.push(c),
            }
        }
        if !cur.is_empty() {
            deps.push(PathBuf::from(cur));
        }
    }
    deps.sort();
    deps.dedup();
    deps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_location_from_front_end() {
        let stderr = "cuda/bad.cu(12): error: identifier \"x\" is undefined\n  x = 1;\n  ^\n\n1 error detected in the compilation of \"cuda/bad.cu\".\n";
        let locs = error_locations(stderr);
        assert_eq!(
            locs,
            vec![ErrorLocation {
                file: "cuda/bad.cu".into(),
                line: 12,
                message: "identifier \"x\" is undefined".into()
            }]
        );
    }

    #[test]
    fn error_location_from_ptxas() {
        let locs = error_locations("ptxas fatal   : Unresolved extern function 'foo'\n");
        assert_eq!(locs.len(), 1);
        assert_eq!(locs[0].message, "Unresolved extern function 'foo'");
        let locs =
            error_locations("ptxas /tmp/k.ptx, line 26; error   : Unknown modifier '.real'\n");
        assert_eq!((locs[0].file.as_str(), locs[0].line), ("/tmp/k.ptx", 26));
        assert_eq!(locs[0].message, "Unknown modifier '.real'");
    }

    #[test]
    fn depfile_with_continuations_and_escaped_spaces() {
        let d = "out.cubin : a.cu \\\n    /inc/x.h \\\n    /my\\ dir/y.h\n";
        let deps = parse_depfile(d);
        assert_eq!(
            deps,
            vec![
                PathBuf::from("/inc/x.h"),
                PathBuf::from("/my dir/y.h"),
                PathBuf::from("a.cu")
            ]
        );
    }

    #[test]
    fn arch_specific_cubin_uses_gencode() {
        let j = Job {
            source: "cuda/gemm.cu".into(),
            arch: Arch::specific(90),
            kind: OutputKind::Cubin,
            flags: vec![],
        };
        assert!(j
            .target_flags()
            .contains(&"-gencode=arch=compute_90a,code=sm_90a".to_string()));
        assert_eq!(j.artifact_name(), "gemm.sm_90a.cubin");
        let p = Job {
            kind: OutputKind::Ptx,
            arch: Arch::new(80),
            ..j
        };
        assert_eq!(p.artifact_name(), "gemm.compute_80.ptx");
    }
}
