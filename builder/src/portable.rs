//! Compiles whose artifacts and cache keys do not depend on where the checkout (or the
//! repo-local toolkit) lies, so a cubin has one SHA-256 for its source, toolkit and flags.
//!
//! What nvcc 13.0 embeds, and what this module does about it:
//! - `-lineinfo` line tables name every file absolutely: cicc joins the working directory to
//!   relative paths, and nvcc has no prefix-map option. A job therefore compiles to PTX first,
//!   the PTX's `.file` directives are rewritten to portable names ([`line_info_name`]), and
//!   the cubin is assembled from that PTX (`nvcc -cubin x.ptx`, the same ptxas run nvcc does
//!   itself: the SASS and the ptxas log are identical to a one-step compile). ptxas runs in
//!   the job's scratch folder: it stats every file it can find by its line-info name and
//!   records the modification time and size, which would make the cubin depend on when the
//!   checkout was made.
//! - Anonymous namespaces are mangled with a hash of the source's absolute path
//!   (`_GLOBAL__N__<hash>_...`), line info or not: `--orig_src_path_name`, which nvcc hands to
//!   cicc, is set to the file's name.
//! - nvcc runs in the kernel folder with the source and include folders given relative to it,
//!   so `__FILE__` and error locations name files as the folder does.
//!
//! Dependencies are recorded for the cache relative to the kernel folder when they lie in the
//! crate (its parent folder: kernel headers, a repo-local toolkit), absolute otherwise (a
//! system toolkit, system headers: the same for every checkout on the machine).

use crate::pipeline::BuildError;
use crate::toolchain::nvcc::{error_locations, parse_depfile, CompileError, Job, OutputKind};
use crate::toolchain::Toolchain;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Names the compile procedure in every cache key: change it when the procedure changes what
/// an identical job produces.
pub const PROCEDURE: &str = "ptx-relative-lineinfo-v1";

/// How line info names a toolkit header: `$CUDA_HOME/include/cuda_bf16.hpp`.
pub const TOOLKIT_PREFIX: &str = "$CUDA_HOME";

/// The folders whose absolute paths a job's outputs must not contain.
#[derive(Debug, Clone)]
pub struct Roots {
    /// The kernel folder, as given and canonical (cicc resolves the working directory).
    kernel_dir: Vec<PathBuf>,
    /// The toolkit (nvcc's `bin/..`), as nvcc names it and canonical.
    toolkit: Vec<PathBuf>,
}

impl Roots {
    pub fn new(kernel_dir: &Path, toolkit: &Path) -> Roots {
        let both = |p: &Path| {
            let mut v = vec![normalize(&absolute(p))];
            if let Ok(c) = p.canonicalize() {
                if !v.contains(&c) {
                    v.push(c);
                }
            }
            v
        };
        Roots {
            kernel_dir: both(kernel_dir),
            toolkit: both(toolkit),
        }
    }

    /// The roots of `job` compiled by `tc`.
    pub fn of(tc: &Toolchain, job: &Job) -> Roots {
        let toolkit = tc
            .nvcc
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("/"));
        Roots::new(job.work_dir(), toolkit)
    }
}

/// The name line info gives the file at `path`: relative to the kernel folder inside it,
/// [`TOOLKIT_PREFIX`]-relative inside the toolkit, `None` (kept as it is) elsewhere.
pub fn line_info_name(path: &str, roots: &Roots) -> Option<String> {
    let p = normalize(Path::new(path));
    let under = |roots: &[PathBuf]| roots.iter().find_map(|r| p.strip_prefix(r).ok());
    let slashed = |rel: &Path| rel.to_string_lossy().replace('\\', "/");
    if let Some(rel) = under(&roots.kernel_dir) {
        Some(slashed(rel))
    } else {
        under(&roots.toolkit).map(|rel| format!("{TOOLKIT_PREFIX}/{}", slashed(rel)))
    }
}

/// `ptx` with every `.file N "path"` directive naming its file by [`line_info_name`].
pub fn rewrite_ptx_files(ptx: &str, roots: &Roots) -> String {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        out.push_str(&rewrite_file_directive(line, roots).unwrap_or_else(|| line.to_string()));
    }
    out
}

/// `\t.file\t3 "/abs/x.cuh"` (optionally `, timestamp, size` after the name).
fn rewrite_file_directive(line: &str, roots: &Roots) -> Option<String> {
    let rest = line.trim_start().strip_prefix(".file")?;
    let open = rest.find('"')?;
    let number = rest[..open].trim();
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let close = open + 1 + rest[open + 1..].find('"')?;
    let name = line_info_name(&rest[open + 1..close], roots)?;
    let indent = &line[..line.len() - line.trim_start().len()];
    Some(format!(
        "{indent}.file{}\"{name}\"{}",
        &rest[..open],
        &rest[close + 1..]
    ))
}

/// An include flag as a job in `kernel_dir` passes it: relative when the folder lies in it.
/// Other flags, and include folders elsewhere (absolute), are left as they are.
pub fn include_flag(flag: &str, kernel_dir: &Path) -> String {
    let Some(dir) = flag.strip_prefix("-I").filter(|d| !d.is_empty()) else {
        return flag.to_string();
    };
    let dir = normalize(&absolute(Path::new(dir)));
    let base = normalize(&absolute(kernel_dir));
    match dir.strip_prefix(&base) {
        Ok(rel) if rel.as_os_str().is_empty() => "-I.".to_string(),
        Ok(rel) => format!("-I{}", rel.display()),
        Err(_) => format!("-I{}", dir.display()),
    }
}

/// The name the cache records for a dependency of a job in `kernel_dir`: relative to it when
/// it lies in the crate (`include/cubins/common.cuh`, `../.cuda/site/...`), else absolute.
pub fn cache_dep_name(dep: &Path, kernel_dir: &Path) -> PathBuf {
    let base = kernel_dir
        .canonicalize()
        .unwrap_or_else(|_| normalize(&absolute(kernel_dir)));
    let dep = kernel_dir
        .join(dep)
        .canonicalize()
        .unwrap_or_else(|_| normalize(&absolute(&kernel_dir.join(dep))));
    if let Ok(rel) = dep.strip_prefix(&base) {
        return rel.to_path_buf();
    }
    match base.parent() {
        Some(crate_dir) if crate_dir.parent().is_some() => match dep.strip_prefix(crate_dir) {
            Ok(rel) => Path::new("..").join(rel),
            Err(_) => dep,
        },
        _ => dep,
    }
}

/// What a finished compile leaves besides the artifact.
#[derive(Debug)]
pub struct Compiled {
    /// nvcc's stderr: front-end warnings and, for a cubin, the `ptxas -v` report.
    pub log: String,
    /// Every dependency nvcc reported, absolute.
    pub deps: Vec<PathBuf>,
}

/// Compiles `job` into `out`, using `scratch` for the intermediate PTX and the dependency
/// file (see the module documentation for the steps).
pub fn compile(
    tc: &Toolchain,
    job: &Job,
    out: &Path,
    scratch: &Path,
) -> Result<Compiled, BuildError> {
    // nvcc runs in the kernel folder: paths into the cache must not depend on the cwd.
    let out = absolute(out);
    let scratch = absolute(scratch);
    let dir = job.work_dir().to_path_buf();
    let ptx = match job.kind {
        OutputKind::Ptx => out.clone(),
        OutputKind::Cubin => scratch.join("input.ptx"),
    };
    let depfile = scratch.join("deps.d");
    let mut steps = vec![job.ptx_args(&ptx, &depfile)];
    if job.kind == OutputKind::Cubin {
        steps.push(job.cubin_args(&ptx, &out));
    }
    let mut log = String::new();
    for (i, args) in steps.iter().enumerate() {
        let output = tc
            .nvcc_command()
            .current_dir(if i == 0 { &dir } else { &scratch })
            .args(args)
            .output()
            .map_err(|error| BuildError::Io {
                what: format!("running {}", tc.nvcc.display()),
                error,
            })?;
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if !output.status.success() {
            return Err(BuildError::Compile(failure(tc, &dir, &steps, stderr)));
        }
        log.push_str(&stderr);
        if i == 0 {
            rewrite_in_place(&ptx, &Roots::of(tc, job))?;
        }
    }
    let text = fs::read_to_string(&depfile).map_err(|error| BuildError::Io {
        what: format!("reading {}", depfile.display()),
        error,
    })?;
    let deps = parse_depfile(&text)
        .into_iter()
        .map(|d| normalize(&dir.join(d)))
        .collect();
    Ok(Compiled { log, deps })
}

fn rewrite_in_place(ptx: &Path, roots: &Roots) -> Result<(), BuildError> {
    let io = |what: &str| {
        let what = format!("{what} {}", ptx.display());
        move |error| BuildError::Io { what, error }
    };
    let text = fs::read_to_string(ptx).map_err(io("reading"))?;
    fs::write(ptx, rewrite_ptx_files(&text, roots)).map_err(io("writing"))
}

/// The failed job as one command line to paste (`cd DIR && nvcc ... && nvcc ...`), with the
/// error locations resolved against the kernel folder.
fn failure(tc: &Toolchain, dir: &Path, steps: &[Vec<String>], stderr: String) -> CompileError {
    let nvcc = match &tc.wrapper {
        Some(w) => format!("{w} {}", tc.nvcc.display()),
        None => tc.nvcc.display().to_string(),
    };
    let mut command = format!("cd {}", dir.display());
    for args in steps {
        command.push_str(&format!(" && {nvcc} {}", args.join(" ")));
    }
    let mut locations = error_locations(&stderr);
    for l in &mut locations {
        let p = dir.join(&l.file);
        if Path::new(&l.file).is_relative() && p.is_file() {
            l.file = p.display().to_string();
        }
    }
    CompileError {
        command,
        stderr,
        locations,
    }
}

/// `p` joined to the current directory when relative.
pub(crate) fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// `p` without `.`, empty and (lexically) `..` components: `/t/bin/..//include` is `/t/include`.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Roots {
        Roots::new(
            Path::new("/home/u/repo/cuda"),
            Path::new("/home/u/repo/.cuda/site/nvidia/cu13"),
        )
    }

    #[test]
    fn line_info_names_kernel_files_relatively_and_toolkit_headers_by_prefix() {
        let r = roots();
        assert_eq!(
            line_info_name("/home/u/repo/cuda/copy.cu", &r).as_deref(),
            Some("copy.cu")
        );
        assert_eq!(
            line_info_name("/home/u/repo/cuda/include/cubins/rows.cuh", &r).as_deref(),
            Some("include/cubins/rows.cuh")
        );
        // nvcc spells its include folder through bin/.. and a doubled slash.
        assert_eq!(
            line_info_name(
                "/home/u/repo/.cuda/site/nvidia/cu13/bin/..//include/cuda_bf16.hpp",
                &r
            )
            .as_deref(),
            Some("$CUDA_HOME/include/cuda_bf16.hpp")
        );
        assert_eq!(line_info_name("/usr/include/c++/12/cmath", &r), None);
        assert_eq!(line_info_name("/home/u/repo/cudax/k.cu", &r), None);
    }

    #[test]
    fn ptx_file_directives_are_rewritten_and_nothing_else() {
        let ptx = "//\n// /home/u/repo/cuda/copy.cu is mentioned in a comment\n.version 9.0\n\
                   \t.file\t1 \"/home/u/repo/cuda/copy.cu\"\n\
                   \t.file\t2 \"/home/u/repo/.cuda/site/nvidia/cu13/bin/..//include/sm_30_intrinsics.hpp\", 1700000000, 1234\n\
                   \t.file\t3 \"/usr/include/stdint.h\"\n\t.loc\t1 5 0\n";
        let out = rewrite_ptx_files(ptx, &roots());
        assert_eq!(
            out,
            "//\n// /home/u/repo/cuda/copy.cu is mentioned in a comment\n.version 9.0\n\
             \t.file\t1 \"copy.cu\"\n\
             \t.file\t2 \"$CUDA_HOME/include/sm_30_intrinsics.hpp\", 1700000000, 1234\n\
             \t.file\t3 \"/usr/include/stdint.h\"\n\t.loc\t1 5 0\n"
        );
        // No trailing newline, a malformed directive: left alone.
        assert_eq!(
            rewrite_ptx_files(".file x \"/a\"", &roots()),
            ".file x \"/a\""
        );
    }

    #[test]
    fn include_flags_become_relative_to_the_kernel_folder() {
        let k = Path::new("/home/u/repo/cuda");
        assert_eq!(include_flag("-I/home/u/repo/cuda/include", k), "-Iinclude");
        assert_eq!(include_flag("-I/home/u/repo/cuda", k), "-I.");
        assert_eq!(include_flag("-I/opt/inc", k), "-I/opt/inc");
        assert_eq!(include_flag("-O3", k), "-O3");
        assert_eq!(include_flag("-I", k), "-I");
    }

    #[test]
    fn cache_dependencies_are_named_relative_to_the_kernel_folder_inside_the_crate() {
        let d = std::env::temp_dir().join(format!("cubins-portable-{}", std::process::id()));
        let file = |rel: &str| {
            let p = d.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "").unwrap();
            p
        };
        file("crate/cuda/copy.cu");
        let header = file("crate/cuda/include/cubins/a.cuh");
        let toolkit = file("crate/.cuda/site/include/cuda.h");
        let outside = file("elsewhere/include/stdint.h");
        let k = d.join("crate/cuda");
        assert_eq!(
            cache_dep_name(Path::new("copy.cu"), &k),
            PathBuf::from("copy.cu")
        );
        assert_eq!(
            cache_dep_name(&header, &k),
            PathBuf::from("include/cubins/a.cuh")
        );
        assert_eq!(
            cache_dep_name(&toolkit, &k),
            PathBuf::from("../.cuda/site/include/cuda.h")
        );
        assert_eq!(
            cache_dep_name(&outside, &k),
            outside.canonicalize().unwrap()
        );
        // What the cache records resolves back to the file from the kernel folder.
        assert_eq!(
            k.join(cache_dep_name(&toolkit, &k)).canonicalize().unwrap(),
            toolkit.canonicalize().unwrap()
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn a_job_runs_in_its_kernel_folder_with_relative_names() {
        let job = Job {
            source: "/home/u/repo/cuda/rmsnorm.cu".into(),
            arch: crate::arch::Arch::specific(90),
            kind: OutputKind::Cubin,
            flags: vec!["-O3".into(), "-I/home/u/repo/cuda/include".into()],
        };
        assert_eq!(job.work_dir(), Path::new("/home/u/repo/cuda"));
        let ptx = job.ptx_args(
            Path::new("/c/tmp/j/input.ptx"),
            Path::new("/c/tmp/j/deps.d"),
        );
        assert_eq!(
            ptx.join(" "),
            "-ptx -arch=compute_90a -O3 -Iinclude -Xcicc --orig_src_path_name,rmsnorm.cu \
             -MD -MF /c/tmp/j/deps.d -o /c/tmp/j/input.ptx rmsnorm.cu"
        );
        let cubin = job.cubin_args(
            Path::new("/c/tmp/j/input.ptx"),
            Path::new("/c/tmp/j/artifact"),
        );
        assert_eq!(
            cubin.join(" "),
            "-cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -O3 -Iinclude \
             -o /c/tmp/j/artifact /c/tmp/j/input.ptx"
        );
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(
            normalize(Path::new("/t/bin/..//include/./x.h")),
            PathBuf::from("/t/include/x.h")
        );
        assert_eq!(normalize(Path::new("../a")), PathBuf::from("../a"));
    }
}
