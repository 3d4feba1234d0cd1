//! The build pipeline against the real nvcc: incremental rebuilds through the cache,
//! error reporting, and cache keys. Needs the toolchain (`cargo xtask setup`).

use cubins_build::arch::Arch;
use cubins_build::pipeline::{build, Plan};
use cubins_build::toolchain::cache::Cache;
use cubins_build::toolchain::Toolchain;
use std::fs;
use std::path::{Path, PathBuf};

fn toolchain() -> Toolchain {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    Toolchain::discover(root)
        .unwrap_or_else(|e| panic!("these tests need nvcc; run `cargo xtask setup`.\n{e}"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cubins-pipeline-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(d.join("cuda/include")).unwrap();
    d
}

const KERNEL: &str = r#"#include "HEADER"
extern "C" __global__ void NAME(float* x) { x[threadIdx.x] = scale(x[threadIdx.x]); }
"#;

fn write_kernel(dir: &Path, name: &str, header: &str) {
    let src = KERNEL.replace("HEADER", header).replace("NAME", name);
    fs::write(dir.join(format!("cuda/{name}.cu")), src).unwrap();
}

#[test]
fn touching_a_header_recompiles_exactly_its_includers() {
    let tc = toolchain();
    let d = scratch("incremental");
    fs::write(
        d.join("cuda/include/one.cuh"),
        "__device__ inline float scale(float v) { return v * 2.0f; }\n",
    )
    .unwrap();
    fs::write(
        d.join("cuda/include/two.cuh"),
        "__device__ inline float scale(float v) { return v * 3.0f; }\n",
    )
    .unwrap();
    write_kernel(&d, "alpha", "one.cuh");
    write_kernel(&d, "beta", "two.cuh");
    write_kernel(&d, "third", "one.cuh");
    let plan = Plan::discover(&d.join("cuda"), vec![Arch::new(80)]).unwrap();
    let cache = Cache::new(d.join("cache")).unwrap();

    let first = build(&tc, &plan, &cache, 2).unwrap();
    assert_eq!(
        first.compiled.len(),
        6,
        "3 files x (cubin + ptx): {:?}",
        first.compiled
    );

    let again = build(&tc, &plan, &cache, 2).unwrap();
    assert!(
        again.compiled.is_empty(),
        "a no-op rebuild compiled {:?}",
        again.compiled
    );
    for (a, b) in first.files.iter().zip(&again.files) {
        assert_eq!(a.source_digest, b.source_digest);
        assert_eq!(a.cubins[0].sha256, b.cubins[0].sha256);
    }

    fs::write(
        d.join("cuda/include/one.cuh"),
        "__device__ inline float scale(float v) { return v * 4.0f; }\n",
    )
    .unwrap();
    let edited = build(&tc, &plan, &cache, 2).unwrap();
    let mut compiled = edited.compiled.clone();
    compiled.sort();
    assert_eq!(
        compiled,
        [
            "alpha.compute_80.ptx",
            "alpha.sm_80.cubin",
            "third.compute_80.ptx",
            "third.sm_80.cubin"
        ],
        "only the includers of one.cuh recompile"
    );
    assert_ne!(
        first.files[0].source_digest, edited.files[0].source_digest,
        "alpha's closure changed"
    );
    assert_eq!(
        first.files[1].source_digest, edited.files[1].source_digest,
        "beta's closure did not"
    );
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn a_failing_kernel_reports_file_and_line_and_the_command() {
    let tc = toolchain();
    let d = scratch("failing");
    fs::write(
        d.join("cuda/bad.cu"),
        "extern \"C\" __global__ void bad(float* x) {\n  x[0] = undefined_name;\n}\n",
    )
    .unwrap();
    let plan = Plan::discover(&d.join("cuda"), vec![Arch::new(90)]).unwrap();
    let cache = Cache::new(d.join("cache")).unwrap();
    let err = build(&tc, &plan, &cache, 1).unwrap_err().to_string();
    assert!(
        err.contains("bad.cu:2: identifier \"undefined_name\" is undefined"),
        "{err}"
    );
    assert!(
        err.contains("command: ") && err.contains("-gencode=arch=compute_90,code=sm_90"),
        "{err}"
    );
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn flags_and_toolkit_are_part_of_the_cache_key() {
    let tc = toolchain();
    let d = scratch("keys");
    fs::write(
        d.join("cuda/include/one.cuh"),
        "__device__ inline float scale(float v) { return v; }\n",
    )
    .unwrap();
    write_kernel(&d, "alpha", "one.cuh");
    let cache = Cache::new(d.join("cache")).unwrap();
    let plan = Plan::discover(&d.join("cuda"), vec![Arch::new(80)]).unwrap();
    assert_eq!(build(&tc, &plan, &cache, 1).unwrap().compiled.len(), 2);

    let mut flagged = plan.clone();
    flagged.flags.push("-DEXTRA=1".into());
    assert_eq!(
        build(&tc, &flagged, &cache, 1).unwrap().compiled.len(),
        2,
        "a new flag misses the cache"
    );

    let mut other_toolkit = tc.clone();
    other_toolkit.version.banner.push_str("\n(patched)");
    assert_eq!(
        build(&other_toolkit, &plan, &cache, 1)
            .unwrap()
            .compiled
            .len(),
        2,
        "another toolkit misses the cache"
    );

    let mut other_arch = plan.clone();
    other_arch.archs = vec![Arch::new(89)];
    assert_eq!(
        build(&tc, &other_arch, &cache, 1).unwrap().compiled.len(),
        2,
        "another arch misses the cache"
    );
    assert!(
        build(&tc, &plan, &cache, 1).unwrap().compiled.is_empty(),
        "the original job still hits"
    );
    let _ = fs::remove_dir_all(&d);
}
