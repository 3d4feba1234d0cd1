//! Acceptance: the cp.async starter kernel's contract (`require = ["LDGSTS", ...]` in
//! cuda/kernels.toml) holds, and removing the cp.async from cuda/copy_async.cu makes the
//! build fail with the contract diagnostic naming LDGSTS. Runs the build script's own code
//! (`Build::try_compile`) on a scratch workspace holding cuda/copy_async.cu, cuda/include/ and
//! the entries of the real cuda/kernels.toml for that file (the other kernel files are left
//! out so that the test does not compile them).
//! One test in this binary: it sets NVCC for the copy, which has no repo-local toolchain.

mod common;

use common::*;
use cubins_build::manifest::Manifest;
use cubins_build::Build;
use std::fs;
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).unwrap();
        }
    }
}

fn build(workspace: &Path) -> Result<(), String> {
    let out_dir = workspace.join("out");
    fs::create_dir_all(&out_dir).unwrap();
    Build::new()
        .crate_dir(workspace)
        .crate_name("cubins")
        .out_dir(out_dir)
        .jobs(2)
        .cargo_metadata(false)
        .try_compile()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn removing_cp_async_fails_the_build_with_the_ldgsts_diagnostic() {
    let tc = toolchain();
    std::env::set_var("NVCC", &tc.nvcc);
    std::env::set_var("CUBINS_CACHE_DIR", cache_dir());
    std::env::remove_var("CUBINS_ARCHS");
    std::env::remove_var("CUBINS_NO_BUILD");

    // A fixed folder, emptied first: each run starts from the same tree.
    let ws = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("contract-copy-async");
    let _ = fs::remove_dir_all(&ws);
    let cuda = workspace_root().join("cuda");
    copy_dir(&cuda.join("include"), &ws.join("cuda").join("include"));
    fs::copy(
        cuda.join("copy_async.cu"),
        ws.join("cuda").join("copy_async.cu"),
    )
    .unwrap();
    let mut manifest = Manifest::load(&cuda.join("kernels.toml")).unwrap();
    manifest.kernels.retain(|_, e| e.file == "copy_async.cu");
    if let Some(a) = &mut manifest.arch_specific {
        a.files.retain(|f| f == "copy_async.cu");
    }
    let contract = &manifest
        .kernels
        .get("copy_cp_async")
        .expect("cuda/kernels.toml has copy_cp_async")
        .contract;
    assert!(
        contract.require.iter().flatten().any(|c| c == "LDGSTS"),
        "its contract requires LDGSTS"
    );
    fs::write(
        ws.join("cuda").join("kernels.toml"),
        toml::to_string(&manifest).unwrap(),
    )
    .unwrap();
    build(&ws).unwrap_or_else(|e| panic!("the unmodified kernels must hold their contracts:\n{e}"));

    let source = ws.join("cuda").join("copy_async.cu");
    let text = fs::read_to_string(&source).unwrap();
    let cp_async = "cubins::cp_async_16(&stage[buf][t], &src[i]);";
    assert!(
        text.contains(cp_async),
        "copy_async.cu no longer issues `{cp_async}`; update this test"
    );
    fs::write(&source, text.replace(cp_async, "stage[buf][t] = src[i];")).unwrap();

    let err = build(&ws).expect_err("a copy_cp_async without cp.async must fail its contract");
    eprintln!("{err}");
    assert!(err.contains("kernel contract violations"), "{err}");
    let diagnostics: Vec<&str> = err
        .split("\n\n")
        .filter(|d| d.contains("no LDGSTS instruction"))
        .collect();
    assert!(!diagnostics.is_empty(), "no LDGSTS diagnostic in:\n{err}");
    for d in &diagnostics {
        assert!(
            d.contains("copy_cp_async on sm_") && d.contains("(cuda/copy_async.cu): require:"),
            "{d}"
        );
        assert!(d.contains("the contract requires LDGSTS"), "{d}");
        assert!(
            d.contains("under [kernels.copy_cp_async.contract] in cuda/kernels.toml"),
            "{d}"
        );
    }
    // Every built arch reports it (the default build is sm_80 and sm_90).
    assert!(
        diagnostics.iter().any(|d| d.contains("on sm_80"))
            && diagnostics.iter().any(|d| d.contains("on sm_90")),
        "{err}"
    );

    // A dependent cannot edit kernels.toml: CUBINS_CONTRACTS=warn reports and goes on.
    std::env::set_var("CUBINS_CONTRACTS", "warn");
    let warned = build(&ws);
    std::env::set_var("CUBINS_CONTRACTS", "errors");
    let bad_level = build(&ws);
    std::env::remove_var("CUBINS_CONTRACTS");
    warned.unwrap_or_else(|e| panic!("CUBINS_CONTRACTS=warn must not fail the build:\n{e}"));
    assert!(ws.join("out").join("cubins_kernels.rs").is_file());
    let e = bad_level.expect_err("an unknown contract level is an error");
    assert!(
        e.contains("CUBINS_CONTRACTS=\"errors\" is not a contract level") && e.contains("`warn`"),
        "{e}"
    );
    assert!(build(&ws).is_err(), "unset is fail-closed again");
}
