//! Per-file arch sets: which nvcc jobs the plan makes for which kernel files, on a scratch
//! folder and on this repository's `cuda/`, and (with nvcc) that the build hands each file
//! the artifacts of its own arches.

use cubins_build::arch::{Arch, SUPPORTED};
use cubins_build::manifest::Manifest;
use cubins_build::pipeline::{build, Plan};
use cubins_build::toolchain::cache::Cache;
use cubins_build::toolchain::Toolchain;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn scratch(files: &[&str]) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "cubins-plan-{}-{}",
        files.join("-"),
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(d.join("include")).unwrap();
    for f in files {
        fs::write(d.join(f), "").unwrap();
    }
    d
}

/// `file -> ["sm_80", "sm_90", "compute_80"]`, in job order.
fn jobs_by_file(plan: &Plan) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for j in plan.jobs() {
        let name = j.artifact_name();
        let (stem, rest) = name.split_once('.').unwrap();
        let arch = rest.rsplit_once('.').unwrap().0;
        m.entry(format!("{stem}.cu"))
            .or_default()
            .push(arch.to_string());
    }
    m
}

fn plan(dir: &Path, archs: &str, declared: Option<&[&str]>) -> Plan {
    let declared: Option<Vec<String>> = declared.map(|d| d.iter().map(|s| s.to_string()).collect());
    Plan::discover(dir, Arch::parse_list(archs).unwrap())
        .unwrap()
        .with_arch_specific(declared.as_deref())
        .unwrap()
}

#[test]
fn only_declared_files_get_arch_specific_variants() {
    let d = scratch(&["copy.cu", "wg.cu"]);
    let p = plan(&d, "80;90;90a", Some(&["wg.cu"]));
    let jobs = jobs_by_file(&p);
    assert_eq!(jobs["copy.cu"], ["sm_80", "sm_90", "compute_80"]);
    assert_eq!(jobs["wg.cu"], ["sm_80", "sm_90", "sm_90a", "compute_80"]);
    assert_eq!(
        p.archs_for(&d.join("copy.cu")),
        [Arch::new(80), Arch::new(90)]
    );

    // sm_90a alone: the other files get sm_90 and its PTX; PTX per file for its lowest arch.
    let jobs = jobs_by_file(&plan(&d, "90a", Some(&["wg.cu"])));
    assert_eq!(jobs["copy.cu"], ["sm_90", "compute_90"]);
    assert_eq!(jobs["wg.cu"], ["sm_90a", "compute_90a"]);

    // No arch-specific arch selected: every file the same.
    let jobs = jobs_by_file(&plan(&d, "80;89", Some(&["wg.cu"])));
    assert_eq!(jobs["copy.cu"], jobs["wg.cu"]);

    // Nothing declared (a standalone file, an older manifest): every file as selected.
    let jobs = jobs_by_file(&plan(&d, "90;90a", None));
    assert_eq!(jobs["copy.cu"], ["sm_90", "sm_90a", "compute_90"]);
    assert_eq!(jobs["wg.cu"], jobs["copy.cu"]);

    // An empty declaration: no file gets sm_90a.
    let jobs = jobs_by_file(&plan(&d, "90;90a", Some(&[])));
    assert!(
        jobs.values().all(|j| j == &["sm_90", "compute_90"]),
        "{jobs:?}"
    );
}

#[test]
fn a_declared_file_that_is_not_there_is_an_error_naming_the_files() {
    let d = scratch(&["copy.cu", "wgmma.cu"]);
    for bad in ["wgmma", "gemm_wgmma.cu", "include", "../wgmma.cu"] {
        let e = Plan::discover(&d, vec![Arch::specific(90)])
            .unwrap()
            .with_arch_specific(Some(&[bad.to_string()]))
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!(
                "[arch_specific] names `{bad}`, which is not a kernel file in"
            )) && msg.ends_with("kernel files: copy.cu, wgmma.cu"),
            "{msg}"
        );
    }
}

#[test]
fn this_repository_builds_sm90a_only_for_the_wgmma_and_tma_gemm() {
    let cuda = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuda");
    let manifest = Manifest::load(&cuda.join("kernels.toml")).unwrap();
    assert_eq!(
        manifest.arch_specific_files(),
        Some(&["gemm_wgmma.cu".to_string(), "gemm_tma.cu".to_string()][..])
    );
    let all = Plan::discover(&cuda, SUPPORTED.to_vec()).unwrap();
    let before = all.jobs().len();
    let per_file = all
        .clone()
        .with_arch_specific(manifest.arch_specific_files())
        .unwrap();
    let jobs = jobs_by_file(&per_file);
    for (file, archs) in &jobs {
        let has_90a = archs.iter().any(|a| a == "sm_90a");
        assert_eq!(
            has_90a,
            file == "gemm_wgmma.cu" || file == "gemm_tma.cu",
            "{file}: {archs:?}"
        );
        assert!(archs.contains(&"sm_90".to_string()), "{file}: {archs:?}");
    }
    let files = all.sources.len();
    let specific = SUPPORTED.iter().filter(|a| a.arch_specific).count();
    assert_eq!(before, files * (SUPPORTED.len() + 1));
    assert_eq!(per_file.jobs().len(), before - (files - 2) * specific);
    eprintln!(
        "all-arch build: {before} nvcc jobs without per-file arch sets, {} with them ({files} kernel files)",
        per_file.jobs().len()
    );
}

#[test]
fn the_build_groups_each_files_own_artifacts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let tc = Toolchain::discover(root)
        .unwrap_or_else(|e| panic!("this test needs nvcc; run `cargo xtask setup`.\n{e}"));
    let d = scratch(&[]);
    for name in ["alpha", "wg", "zeta"] {
        fs::write(
            d.join(format!("{name}.cu")),
            format!(
                "extern \"C\" __global__ void {name}(float* x) {{ x[threadIdx.x] += 1.0f; }}\n"
            ),
        )
        .unwrap();
    }
    let p = plan(&d, "90;90a", Some(&["wg.cu"]));
    let cache = Cache::new(d.join("cache")).unwrap();
    let out = build(&tc, &p, &cache, 2).unwrap();
    let got: Vec<(String, Vec<Arch>, Option<Arch>)> = out
        .files
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                f.cubins.iter().map(|c| c.arch).collect(),
                f.ptx.as_ref().map(|p| p.arch),
            )
        })
        .collect();
    let (plain, specific) = (Arch::new(90), Arch::specific(90));
    assert_eq!(
        got,
        [
            ("alpha".to_string(), vec![plain], Some(plain)),
            ("wg".to_string(), vec![plain, specific], Some(plain)),
            ("zeta".to_string(), vec![plain], Some(plain)),
        ]
    );
    assert_eq!(out.compiled.len(), 7, "{:?}", out.compiled);
}
