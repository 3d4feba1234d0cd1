//! The `cubins-inspect` command line on the test-only kernels of `fixtures/kernels/`:
//! spills, the local-array flag, LDGSTS, HGMMA on sm_90a, demangled template names, the
//! JSON fields scripts rely on, contract checks, reports of a build, diffs, and the errors.

mod common;

use common::*;
use cubins_build::arch::Arch;
use cubins_build::compile::{self, Request};
use cubins_build::manifest::Manifest;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cubins-inspect"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("running cubins-inspect")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn kernel_file(name: &str) -> String {
    fixtures().join("kernels").join(name).display().to_string()
}

/// `cubins-inspect FILE --arch ARCH --json`, checked to succeed; the `kernels` array.
fn inspect_json(file: &str, arch: &str) -> Vec<Value> {
    let o = cli(&[&kernel_file(file), "--arch", arch, "--json"]);
    assert!(o.status.success(), "{file} {arch}: {}", stderr(&o));
    let v: Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    let kernels = v["kernels"].as_array().expect("kernels array").clone();
    for k in &kernels {
        for field in [
            "kernel",
            "registers",
            "spill_stores",
            "spill_loads",
            "stack_bytes",
            "smem_bytes",
        ] {
            assert!(!k[field].is_null(), "{file}: {field} missing in {k}");
        }
        for class in ["LDGSTS", "HMMA", "HGMMA", "LDL", "STL"] {
            assert!(
                k["opcode_classes"][class].is_u64(),
                "{file}: opcode_classes.{class} missing (zero counts must be present): {k}"
            );
        }
    }
    kernels
}

fn by_name<'a>(kernels: &'a [Value], name: &str) -> &'a Value {
    kernels
        .iter()
        .find(|k| k["kernel"] == name)
        .unwrap_or_else(|| panic!("no {name} in {kernels:?}"))
}

fn flags(k: &Value) -> Vec<String> {
    k["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn spilling_kernel_shows_spills() {
    let ks = inspect_json("spill.cu", "sm_80");
    let k = by_name(&ks, "spill_unrolled");
    assert!(
        k["spill_stores"].as_u64().unwrap() > 0 && k["spill_loads"].as_u64().unwrap() > 0,
        "{k}"
    );
    assert!(k["opcode_classes"]["STL"].as_u64().unwrap() > 0);
    assert!(flags(k).iter().any(|f| f.starts_with("spills")), "{k}");
}

#[test]
fn local_array_is_flagged() {
    let ks = inspect_json("local_array.cu", "sm_90");
    let k = by_name(&ks, "local_indexed");
    assert!(k["stack_bytes"].as_u64().unwrap() > 0);
    assert_eq!(
        (k["spill_stores"].as_u64(), k["spill_loads"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(
        flags(k)
            .iter()
            .any(|f| f.starts_with("stack frame with no spills")),
        "{k}"
    );
}

#[test]
fn cp_async_shows_ldgsts() {
    let ks = inspect_json("cp_async.cu", "sm_80");
    let k = by_name(&ks, "cp_async_tile");
    assert!(k["opcode_classes"]["LDGSTS"].as_u64().unwrap() > 0, "{k}");
    assert_eq!(k["opcode_classes"]["HGMMA"].as_u64(), Some(0));
}

#[test]
fn wgmma_shows_hgmma_on_sm90a() {
    let ks = inspect_json("wgmma.cu", "sm_90a");
    let k = by_name(&ks, "wgmma_m64n8k16");
    assert_eq!(k["arch"], "sm_90a");
    assert!(k["opcode_classes"]["HGMMA"].as_u64().unwrap() > 0, "{k}");
}

#[test]
fn template_names_are_demangled() {
    let ks = inspect_json("template.cu", "sm_90");
    let names: Vec<&str> = ks.iter().map(|k| k["kernel"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        vec![
            "void fixtures::scale<float, 4>(float const*, float*, float)",
            "void fixtures::scale<int, 2>(int const*, int*, int)"
        ]
    );
    // The text report shows them too.
    let o = cli(&[&kernel_file("template.cu"), "--arch", "sm_90"]);
    assert!(
        stdout(&o).contains("kernel: void fixtures::scale<float, 4>(float const*, float*, float)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn helper_spill_is_attributed() {
    let ks = inspect_json("helper_spill.cu", "sm_90");
    let k = by_name(&ks, "calls_spilling_helper");
    assert_eq!(k["callees"][0], "spilling_helper(float const*, int, int)");
    assert!(
        k["callee_spills"][0]["spill_stores"].as_u64().unwrap() > 0,
        "{k}"
    );
    assert!(
        flags(k).iter().any(|f| f.starts_with("callee spills")),
        "{k}"
    );
}

#[test]
fn several_arches_in_one_call() {
    let o = cli(&[
        &kernel_file("cp_async.cu"),
        "--arch",
        "sm_80",
        "--arch",
        "89",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let archs: Vec<&str> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["arch"].as_str().unwrap())
        .collect();
    assert_eq!(archs, vec!["sm_80", "sm_89"]);
}

fn write_manifest(dir: &Path, contract: &str) -> PathBuf {
    let p = dir.join("kernels.toml");
    std::fs::write(
        &p,
        format!("[kernels.cp_async_tile]\nfile = \"cp_async.cu\"\nblock_sizes = [128]\n[kernels.cp_async_tile.contract]\n{contract}\n"),
    )
    .unwrap();
    p
}

#[test]
fn contracts_on_a_standalone_file() {
    let dir = scratch("cli-contracts");
    let holds = write_manifest(
        &dir,
        "require = [\"LDGSTS\"]\nforbid = [\"LDL\", \"STL\"]\nspills = false",
    );
    let o = cli(&[
        &kernel_file("cp_async.cu"),
        "--arch",
        "sm_80",
        "--contracts",
        holds.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("contracts: all hold"), "{}", stdout(&o));

    let broken = write_manifest(&dir, "require = [\"HGMMA\"]");
    let o = cli(&[
        &kernel_file("cp_async.cu"),
        "--arch",
        "sm_80",
        "--contracts",
        broken.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let errors = v["contracts"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0].as_str().unwrap();
    assert!(
        e.contains("cp_async_tile on sm_80")
            && e.contains("no HGMMA instruction")
            && e.contains(broken.to_str().unwrap()),
        "{e}"
    );
}

#[test]
fn a_cubin_is_inspected_from_its_own_outputs() {
    let tc = toolchain();
    let req = Request {
        source_dir: &fixtures().join("kernels"),
        only: vec!["cp_async.cu".into()],
        archs: vec![Arch::new(90)],
        extra_flags: vec![],
        cache_dir: &cache_dir(),
        jobs: 1,
    };
    let (build, _) = compile::compile_and_inspect(&tc, &req, &Manifest::default()).unwrap();
    let cubin = scratch("cli-cubin").join("cp_async.sm_90.cubin");
    std::fs::copy(&build.files[0].cubins[0].path, &cubin).unwrap();
    let cubin = cubin.display().to_string();
    let o = cli(&[&cubin, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(
        (k["kernel"].as_str(), k["arch"].as_str()),
        (Some("cp_async_tile"), Some("sm_90"))
    );
    assert!(k["opcode_classes"]["LDGSTS"].as_u64().unwrap() > 0);
    assert!(
        flags(k).iter().any(|f| f.starts_with("no ptxas log")),
        "{k}"
    );
    let o = cli(&[&cubin, "--arch", "sm_80"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("is a sm_90 cubin, not sm_80"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn clear_errors() {
    let bad = fixtures()
        .join("broken")
        .join("syntax_error.cu")
        .display()
        .to_string();
    let o = cli(&[&bad, "--arch", "sm_90"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("does not compile")
            && e.contains("syntax_error.cu:4: identifier \"undeclared_identifier\" is undefined"),
        "{e}"
    );

    let o = cli(&[&kernel_file("spill.cu"), "--arch", "sm_75"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown GPU arch `sm_75`") && stderr(&o).contains("sm_90a"),
        "{}",
        stderr(&o)
    );

    let o = cli(&[&kernel_file("spill.cu")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("pass --arch"), "{}", stderr(&o));

    let o = cli(&["no/such/kernel.cu", "--arch", "sm_90"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no such file: no/such/kernel.cu"),
        "{}",
        stderr(&o)
    );

    let o = cli(&["report", "--frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown option `--frobnicate`"));
}

#[test]
fn report_of_the_latest_build_and_diff() {
    // A build's reports.json where `report --build` looks for it: <target>/<profile>/build/cubins-<hash>/out/.
    let tc = toolchain();
    let req = Request {
        source_dir: &fixtures().join("kernels"),
        only: vec!["cp_async.cu".into(), "spill.cu".into()],
        archs: vec![Arch::new(80)],
        extra_flags: vec![],
        cache_dir: &cache_dir(),
        jobs: 2,
    };
    let (_, reports) = compile::compile_and_inspect(&tc, &req, &Manifest::default()).unwrap();
    let target = scratch("cli-target");
    let out = target
        .join("debug")
        .join("build")
        .join("cubins-0123abcd")
        .join("out");
    std::fs::create_dir_all(&out).unwrap();
    let json = serde_json::to_string(&reports).unwrap();
    std::fs::write(out.join("reports.json"), &json).unwrap();

    let report_build = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cubins-inspect"))
            .args(["report", "--build"])
            .args(extra)
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(workspace_root())
            .output()
            .unwrap()
    };
    // It reads a finished build: anything but --json is a mistake, not something to ignore.
    for (extra, says) in [
        (&["--features", "sm90a"][..], "unknown option `--features`"),
        (
            &["sm90a"][..],
            "report --build takes only --json, not sm90a",
        ),
        (
            &["--arch", "sm_90"][..],
            "takes only --json, not --arch sm_90",
        ),
    ] {
        let o = report_build(extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
    }
    let o = report_build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.contains("| kernel | file | arch | regs | spills st/ld | stack | smem | occupancy | key opcode classes | flags |"), "{table}");
    assert!(
        table.contains("| cp_async_tile | cp_async.cu | sm_80 |")
            && table.contains("| spill_unrolled | spill.cu | sm_80 |"),
        "{table}"
    );
    assert!(table.contains("LDGSTS.128:"), "{table}");

    let empty = scratch("cli-empty-target");
    let o = Command::new(env!("CARGO_BIN_EXE_cubins-inspect"))
        .args(["report", "--build"])
        .env("CARGO_TARGET_DIR", &empty)
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("run `cargo build` first"),
        "{}",
        stderr(&o)
    );

    // diff: the same reports with cp_async_tile using more registers and spilling.
    let mut changed: Value = serde_json::from_str(&json).unwrap();
    for f in changed["files"].as_array_mut().unwrap() {
        for c in f["cubins"].as_array_mut().unwrap() {
            for k in c["report"]["kernels"].as_array_mut().unwrap() {
                if k["mangled"] == "cp_async_tile" {
                    let r = k["registers"]["value"].as_u64().unwrap();
                    k["registers"]["value"] = (r + 10).into();
                    k["spill_stores"] = 16.into();
                }
            }
        }
    }
    let a = target.join("a.json");
    let b = target.join("b.json");
    std::fs::write(&a, &json).unwrap();
    std::fs::write(&b, serde_json::to_string(&changed).unwrap()).unwrap();
    let o = cli(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = stdout(&o);
    assert!(
        d.contains("~ cp_async_tile (cp_async.cu) sm_80")
            && d.contains("(+10)")
            && d.contains("spill stores (bytes): 0 -> 16 (+16)"),
        "{d}"
    );
    assert!(d.contains("1 kernel x arch unchanged"), "{d}");
}
