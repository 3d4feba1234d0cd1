//! Element types of the launchers against the kernels' own declarations, on this repository:
//! every parameter of every `cuda/kernels.toml` entry is compared (none is left unchecked)
//! and every one holds; and a build whose manifest retypes a pointer (same size, so the
//! parameter-table check passes) or breaks a bound fails, naming the entry and the key.
//! One build test in this binary: it sets NVCC and the cache folder for the build script.

mod common;

use common::*;
use cubins_build::arch::Arch;
use cubins_build::launcher::{params, signature, types};
use cubins_build::manifest::{KernelEntry, Manifest};
use cubins_build::pipeline::Plan;
use cubins_build::Build;
use std::fs;
use std::path::Path;

#[test]
fn every_repo_parameter_is_checked_and_holds() {
    let tc = toolchain();
    let cuda = workspace_root().join("cuda");
    let manifest = Manifest::load(&cuda.join("kernels.toml")).unwrap();
    let plan = Plan::discover(&cuda, vec![Arch::new(80)]).unwrap();
    let mut errors = Vec::new();
    let mut unchecked = Vec::new();
    let mut compared = 0;
    for src in &plan.sources {
        let file = src.file_name().unwrap().to_string_lossy().into_owned();
        let text = signature::preprocess(&tc, src, Arch::new(80), &plan.flags).unwrap();
        let declared = signature::declarations(&text);
        for (name, entry) in manifest.kernels.iter().filter(|(_, e)| e.file == file) {
            let p = params::parse_params(name, &entry.params).unwrap();
            match declared.get(name) {
                Some(signature::Declared::Params(d)) => {
                    let f = types::check(name, &format!("the declaration in {file}"), &p, d);
                    compared += p.len();
                    errors.extend(f.errors);
                    unchecked.extend(f.unchecked);
                }
                other => unchecked.push(format!("{name}: {other:?}")),
            }
        }
    }
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(unchecked.is_empty(), "{unchecked:#?}");
    let declared: usize = manifest.kernels.values().map(|e| e.params.len()).sum();
    assert_eq!(compared, declared, "every declared parameter is compared");
}

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

/// A scratch workspace with cuda/copy.cu, cuda/include/ and the real manifest's entries for
/// copy.cu, edited by `edit`; the build script's result on it.
fn build_copy_with(ws: &Path, edit: &dyn Fn(&mut KernelEntry)) -> Result<(), String> {
    let cuda = workspace_root().join("cuda");
    let _ = fs::remove_dir_all(ws);
    copy_dir(&cuda.join("include"), &ws.join("cuda").join("include"));
    fs::copy(cuda.join("copy.cu"), ws.join("cuda").join("copy.cu")).unwrap();
    let mut manifest = Manifest::load(&cuda.join("kernels.toml")).unwrap();
    manifest.kernels.retain(|_, e| e.file == "copy.cu");
    manifest.arch_specific = None;
    edit(
        manifest
            .kernels
            .get_mut("copy_vec16")
            .expect("copy.cu defines copy_vec16"),
    );
    let text = toml::to_string(&manifest).unwrap();
    fs::write(ws.join("cuda").join("kernels.toml"), text).unwrap();
    let out_dir = ws.join("out");
    fs::create_dir_all(&out_dir).unwrap();
    Build::new()
        .crate_dir(ws)
        .crate_name("cubins")
        .out_dir(out_dir)
        .jobs(2)
        .cargo_metadata(false)
        .try_compile()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn manifest_mistakes_fail_the_build_naming_entry_and_key() {
    let tc = toolchain();
    std::env::set_var("NVCC", &tc.nvcc);
    std::env::set_var("CUBINS_CACHE_DIR", cache_dir());
    std::env::set_var("CUBINS_ARCHS", "90");
    std::env::remove_var("CUBINS_NO_BUILD");
    std::env::remove_var("CUBINS_CONTRACTS");
    // A fixed folder: the artifact cache keys on source paths, so reruns hit it.
    let ws = Path::new(env!("CARGO_TARGET_TMPDIR")).join("launcher-types-copy");

    build_copy_with(&ws, &|_| {}).expect("the real entries hold");

    let retyped = build_copy_with(&ws, &|e| {
        assert_eq!(e.params[0], "src: *const u8x16");
        e.params[0] = "src: *const f32".into();
    })
    .unwrap_err();
    assert!(
        retyped.contains(
            "copy_vec16: parameter 0 (`src: *const f32`): kernels.toml says `*const f32`, the declaration \
             in copy.cu says `const uint4*`; in kernels.toml that is `src: *const u8x16`"
        ),
        "{retyped}"
    );

    let bounds = build_copy_with(&ws, &|e| {
        e.block_sizes = vec![0, 5000];
        e.contract.max_registers = Some(1000);
    })
    .unwrap_err();
    for needle in [
        "[kernels.copy_vec16]: block_sizes: 0 is not a block size",
        "[kernels.copy_vec16]: block_sizes: 5000 is above what any arch allows (1024 threads per block)",
        "[kernels.copy_vec16.contract]: max_registers = 1000 is above what any arch allows (255 registers per thread)",
    ] {
        assert!(bounds.contains(needle), "{needle} in:\n{bounds}");
    }

    // copy_vec16 has __launch_bounds__(256).
    let launch = build_copy_with(&ws, &|e| {
        e.block_sizes = vec![256, 512];
        e.contract.min_blocks_per_sm = None;
    })
    .unwrap_err();
    assert!(
        launch.contains(
            "[kernels.copy_vec16]: block_sizes: 512 is above the kernel's __launch_bounds__ of 256 threads per block on sm_90"
        ),
        "{launch}"
    );
}
