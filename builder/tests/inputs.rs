//! Every input has its word: an explicit toolchain that is not there, an empty kernel file, a
//! directory named like one, a cut or foreign cubin, and arguments a command does not take
//! each get a one-line error or note and a non-zero exit, through the CLI and the build.

mod common;

use common::*;
use cubins_build::arch::Arch;
use cubins_build::compile::{self, Request};
use cubins_build::manifest::Manifest;
use cubins_build::pipeline::Plan;
use std::path::Path;
use std::process::{Command, Output};

fn cli_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cubins-inspect"));
    c.args(args).current_dir(workspace_root());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("running cubins-inspect")
}

fn cli(args: &[&str]) -> Output {
    cli_env(args, &[])
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn spill_cu() -> String {
    fixtures()
        .join("kernels")
        .join("spill.cu")
        .display()
        .to_string()
}

#[test]
fn an_explicit_toolchain_that_is_not_there_is_refused() {
    let d = scratch("inputs-explicit");
    let not_nvcc = d.join("nvcc");
    std::fs::write(&not_nvcc, "not a program").unwrap();
    let empty_home = d.join("toolkit");
    std::fs::create_dir_all(&empty_home).unwrap();
    let home = empty_home.display().to_string();
    let file = not_nvcc.display().to_string();
    for (env, says) in [
        (
            ("NVCC", "/nonexistent/nvcc"),
            "NVCC=/nonexistent/nvcc: no nvcc there".to_string(),
        ),
        (
            ("NVCC", file.as_str()),
            format!("NVCC={file}: {file} does not run"),
        ),
        (
            ("CUDA_HOME", home.as_str()),
            format!("CUDA_HOME={home} (its {home}/bin/nvcc): no nvcc there"),
        ),
        (
            ("CUDA_PATH", home.as_str()),
            format!("CUDA_PATH={home} (its {home}/bin/nvcc): no nvcc there"),
        ),
    ] {
        // The repo-local toolchain is there: it must not be taken instead.
        let o = cli_env(&[&spill_cu(), "--arch", "sm_90"], &[env]);
        assert_eq!(o.status.code(), Some(1), "{env:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&says) && e.contains("never replaced"),
            "{env:?}: {e}"
        );
    }
}

#[test]
fn a_directory_named_like_a_kernel_file() {
    let d = scratch("inputs-dir");
    std::fs::create_dir_all(d.join("x.cu")).unwrap();
    let x = d.join("x.cu").display().to_string();
    let o = cli(&[&x, "--arch", "sm_90"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{x} is a directory, not a kernel file")),
        "{}",
        stderr(&o)
    );
    // The build's plan of a kernel folder says the same (nvcc would say `No such file`).
    let e = Plan::discover(&d, vec![Arch::new(90)]).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("{x} is a directory, not a kernel file")),
        "{e}"
    );
}

#[test]
fn a_kernel_file_without_entry_points_gets_a_note_and_fails() {
    let d = scratch("inputs-empty");
    std::fs::write(d.join("empty.cu"), "// nothing yet\n").unwrap();
    let empty = d.join("empty.cu").display().to_string();
    for json in [false, true] {
        let mut args = vec![empty.as_str(), "--arch", "sm_90"];
        if json {
            args.push("--json");
        }
        let o = cli(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "{empty} defines no entry points (no `__global__` function): nothing to inspect"
            )),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn a_cut_or_foreign_cubin_is_named_as_such() {
    let tc = toolchain();
    let req = Request {
        source_dir: &fixtures().join("kernels"),
        only: vec!["spill.cu".into()],
        archs: vec![Arch::new(90)],
        extra_flags: vec![],
        cache_dir: &cache_dir(),
        jobs: 1,
    };
    let (build, _) = compile::compile_and_inspect(&tc, &req, &Manifest::default()).unwrap();
    let bytes = std::fs::read(&build.files[0].cubins[0].path).unwrap();
    let d = scratch("inputs-cubin");
    let write = |name: &str, b: &[u8]| {
        let p = d.join(name);
        std::fs::write(&p, b).unwrap();
        p.display().to_string()
    };
    let random: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for (path, says) in [
        (
            write("half.cubin", &bytes[..bytes.len() / 2]),
            "not a cubin: truncated: the file has",
        ),
        (
            write("random.cubin", &random),
            "not a cubin: not an ELF file",
        ),
        (
            write("tiny.cubin", b"\x7fEL"),
            "not a cubin: 3 bytes, shorter than an ELF header",
        ),
        (write("empty.cubin", b""), "not a cubin: 0 bytes"),
    ] {
        let o = cli(&[&path]);
        assert_eq!(o.status.code(), Some(1), "{path}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(&format!("{path}: {says}")), "{path}: {e}");
        assert!(!e.contains("does not contain device code"), "{e}");
    }
    // The whole file is a cubin.
    let o = cli(&[&write("whole.cubin", &bytes)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn arguments_a_command_does_not_take_are_errors() {
    let spill = spill_cu();
    let a = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("inputs-none.json")
        .display()
        .to_string();
    for (args, says) in [
        (
            vec!["report", "extra"],
            "report takes only --json, --arch, not extra",
        ),
        (
            vec!["report", "--contracts", "k.toml"],
            "report takes only --json, --arch, not --contracts k.toml",
        ),
        (
            vec!["diff", "--json", &a, &a],
            "diff takes only --arch, not --json",
        ),
        (vec!["diff", &a], "diff takes two reports or revisions"),
        (vec!["help", "me"], "help takes no options, not me"),
        (vec![&spill, "--build"], "--build belongs to `report`"),
        (vec!["--build"], "--build belongs to `report`"),
        (vec!["--json"], "which command?"),
        (vec![&spill, "--jsn"], "unknown option `--jsn`"),
        (vec![&spill, "--json=yes"], "unknown option `--json=yes`"),
        (vec![&spill, "x.cu"], "unexpected arguments"),
    ] {
        let o = cli(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // --help anywhere is help.
    let o = cli(&["report", "--help"]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("USAGE"));
}
