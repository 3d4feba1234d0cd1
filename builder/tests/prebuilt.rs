//! Prebuilt artifacts: an export loads as exactly the fresh build it came from (artifacts,
//! reports, declarations), and a tampered artifact, a stale export (a kernel source edited
//! after it, other flags), a missing arch or kernel file each fail with a message that names
//! the file and says how to rebuild; the build script embeds an export with no nvcc at all.
//! Needs the toolchain for the export (`cargo xtask setup`).

mod common;

use common::{scratch, toolchain};
use cubins_build::analyze::analyze_cubin;
use cubins_build::arch::Arch;
use cubins_build::builder::kernel_plan;
use cubins_build::launcher::signature;
use cubins_build::manifest::Manifest;
use cubins_build::pipeline::{self, Plan};
use cubins_build::prebuilt::{self, PrebuiltError};
use cubins_build::shapes::LaunchShapes;
use cubins_build::toolchain::cache::{sha256_hex, Cache, Limits};
use cubins_build::toolchain::Toolchain;
use cubins_build::Build;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const HEADER: &str = "__device__ inline float scale(float v) { return v * 2.0f; }\n";

const KERNEL: &str = r#"#include "tiny/scale.cuh"
extern "C" __global__ void twice(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = scale(x[i]);
}
"#;

const MANIFEST: &str = r#"[kernels.twice]
file = "tiny.cu"
params = ["x: *mut f32", "n: u32"]
block_sizes = [256]

[kernels.twice.contract]
max_registers = 64
spills = false
max_stack_bytes = 0
require = ["LDG", "STG"]
"#;

const ARCH: Arch = Arch::new(80);

fn tc() -> &'static Toolchain {
    static TC: OnceLock<Toolchain> = OnceLock::new();
    TC.get_or_init(toolchain)
}

/// A crate folder holding `cuda/tiny.cu`, its header and `kernels.toml`.
fn workspace(root: &Path) -> PathBuf {
    fs::create_dir_all(root.join("cuda/include/tiny")).unwrap();
    fs::write(root.join("cuda/include/tiny/scale.cuh"), HEADER).unwrap();
    fs::write(root.join("cuda/tiny.cu"), KERNEL).unwrap();
    fs::write(root.join("cuda/kernels.toml"), MANIFEST).unwrap();
    root.to_path_buf()
}

fn manifest(ws: &Path) -> Manifest {
    Manifest::load(&ws.join("cuda/kernels.toml")).unwrap()
}

fn plan(ws: &Path, arch: Arch) -> Plan {
    let cuda = ws.join("cuda");
    kernel_plan(&cuda, &cuda.join("kernels.toml"), vec![arch], &manifest(ws)).unwrap()
}

fn cache(ws: &Path) -> Cache {
    Cache::with_limits(ws.join("cache"), Limits::default()).unwrap()
}

/// One export of the workspace for sm_80, made once; tests work on copies.
struct Exported {
    ws: PathBuf,
    dir: PathBuf,
}

fn exported() -> &'static Exported {
    static E: OnceLock<Exported> = OnceLock::new();
    E.get_or_init(|| {
        let ws = workspace(&scratch("prebuilt-clean"));
        let dir = ws.join("export");
        let m = manifest(&ws);
        let out = prebuilt::export(tc(), &plan(&ws, ARCH), &m, &[ARCH], &cache(&ws), &dir, 2)
            .unwrap_or_else(|e| panic!("export: {e}"));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].arch, "sm_80");
        // The manifest, cubin, PTX, report and declarations.
        assert_eq!(out[0].files, 5, "{out:?}");
        Exported { ws, dir }
    })
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of the exported workspace (sources and export) to damage.
fn copy_of_export(name: &str) -> PathBuf {
    let e = exported();
    let ws = scratch(name);
    copy_dir(&e.ws.join("cuda"), &ws.join("cuda"));
    copy_dir(&e.dir, &ws.join("export"));
    ws
}

fn load_err(ws: &Path, plan: &Plan) -> PrebuiltError {
    match prebuilt::load(&ws.join("export"), plan, &manifest(ws)) {
        Ok(_) => panic!("the export should not serve this build"),
        Err(e) => e,
    }
}

fn flip_a_byte(path: &Path) {
    let mut bytes = fs::read(path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    fs::write(path, bytes).unwrap();
}

#[test]
fn an_export_loads_as_the_fresh_build_it_came_from() {
    let e = exported();
    let folder: prebuilt::ArchManifest =
        serde_json::from_str(&fs::read_to_string(e.dir.join("sm_80/prebuilt.json")).unwrap())
            .unwrap();
    assert_eq!(
        (folder.format.as_str(), folder.arch.as_str()),
        (prebuilt::FORMAT, "sm_80")
    );
    assert_eq!(folder.toolkit, tc().version.full);
    assert!(folder.flags.contains(&"-lineinfo".to_string()));
    let closure: Vec<&str> = folder.files[0]
        .closure
        .iter()
        .map(|h| h.path.as_str())
        .collect();
    assert_eq!(closure, ["include/tiny/scale.cuh", "tiny.cu"]);

    // A manifest declaring other launch shapes than the export's: occupancy follows it, as a
    // fresh analysis does.
    let ws = copy_of_export("prebuilt-roundtrip");
    let toml = MANIFEST.replace("block_sizes = [256]", "block_sizes = [128, 512]");
    fs::write(ws.join("cuda/kernels.toml"), toml).unwrap();
    let m = manifest(&ws);
    let plan = plan(&ws, ARCH);
    let loaded = prebuilt::load(&ws.join("export"), &plan, &m).unwrap();
    let fresh = pipeline::build(tc(), &plan, &cache(&ws), 2).unwrap();

    assert_eq!(loaded.toolkit, tc().version.full);
    let (l, f) = (&loaded.build.files[0], &fresh.files[0]);
    assert_eq!(l.source_digest, f.source_digest);
    assert_eq!(
        l.cubins[0].sha256, f.cubins[0].sha256,
        "byte-identical cubin"
    );
    assert_eq!(l.cubins[0].bytes, f.cubins[0].bytes);
    let (lp, fp) = (l.ptx.as_ref().unwrap(), f.ptx.as_ref().unwrap());
    assert_eq!((lp.arch, &lp.bytes), (fp.arch, &fp.bytes));
    let fresh_report = analyze_cubin(ARCH, &f.cubins[0].outputs, &LaunchShapes::of(&m)).unwrap();
    assert_eq!(
        loaded.reports[0][0], fresh_report,
        "the report a fresh build makes"
    );
    let blocks: Vec<u32> = fresh_report.kernels[0]
        .occupancy
        .iter()
        .map(|o| o.block_size)
        .collect();
    assert_eq!(blocks, [128, 512]);
    assert_eq!(
        loaded.declarations,
        signature::of_build(tc(), &fresh, &plan.flags, 1),
        "the declarations a fresh build reads"
    );
    assert!(loaded.build.compiled.is_empty());
}

#[test]
fn a_tampered_artifact_or_report_fails_naming_the_file() {
    for file in ["tiny.sm_80.cubin", "tiny.sm_80.report.json"] {
        let ws = copy_of_export(&format!("prebuilt-tampered-{file}"));
        let path = ws.join("export/sm_80").join(file);
        flip_a_byte(&path);
        let e = load_err(&ws, &plan(&ws, ARCH));
        assert!(matches!(e, PrebuiltError::Tampered { .. }), "{e:?}");
        let msg = e.to_string();
        println!("{file}: {msg}");
        assert!(
            msg.starts_with(&format!(
                "prebuilt artifact {} was modified after export: its SHA-256 is {}",
                path.display(),
                sha256_hex(&fs::read(&path).unwrap())
            )),
            "{msg}"
        );
        assert!(
            msg.contains(&format!(
                "run `CUBINS_EXPORT_PREBUILT={} CUBINS_ARCHS=\"80\" cargo build -p cubins` with \
                 a CUDA toolkit",
                ws.join("export").display()
            )) && msg.contains("unset CUBINS_PREBUILT"),
            "{msg}"
        );
    }
}

#[test]
fn a_stale_export_fails_naming_the_edited_source() {
    for (file, edit) in [
        ("include/tiny/scale.cuh", "// edited after the export\n"),
        ("tiny.cu", "\n"),
    ] {
        let ws = copy_of_export(&format!("prebuilt-stale-{}", file.replace('/', "-")));
        let path = ws.join("cuda").join(file);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, format!("{text}{edit}")).unwrap();
        let e = load_err(&ws, &plan(&ws, ARCH));
        assert!(matches!(e, PrebuiltError::Stale { .. }), "{e:?}");
        let msg = e.to_string();
        println!("{file}: {msg}");
        assert!(
            msg.starts_with(&format!(
                "prebuilt sm_80 artifacts in {} are stale: cuda/{file} changed after the export",
                ws.join("export/sm_80").display()
            )) && msg.contains("CUBINS_EXPORT_PREBUILT="),
            "{msg}"
        );
    }

    let ws = copy_of_export("prebuilt-stale-flags");
    let mut flagged = plan(&ws, ARCH);
    flagged.flags.push("-DEXTRA=1".into());
    let msg = load_err(&ws, &flagged).to_string();
    assert!(
        msg.contains("are stale: compiled with flags") && msg.contains("-DEXTRA=1"),
        "{msg}"
    );
}

#[test]
fn a_missing_arch_or_kernel_file_fails_naming_it() {
    let ws = copy_of_export("prebuilt-missing");
    let msg = load_err(&ws, &plan(&ws, Arch::new(90))).to_string();
    println!("{msg}");
    assert!(
        msg.starts_with(&format!(
            "no prebuilt sm_90 artifacts: {} does not exist (prebuilt arches there: sm_80)",
            ws.join("export/sm_90/prebuilt.json").display()
        )) && msg.contains("CUBINS_ARCHS=\"90\" cargo build -p cubins`"),
        "{msg}"
    );

    fs::write(ws.join("cuda/later.cu"), KERNEL).unwrap();
    let msg = load_err(&ws, &plan(&ws, ARCH)).to_string();
    assert!(
        msg.contains("has no artifacts of kernel file later.cu for sm_80"),
        "{msg}"
    );
}

/// The build script itself (one test sets these variables; the others read none of them).
#[test]
fn the_build_script_embeds_an_export_without_nvcc_and_refuses_a_tampered_one() {
    let ws = copy_of_export("prebuilt-build-script");
    let out_dir = ws.join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let mut ctx = Build::new();
    ctx.crate_dir(&ws)
        .crate_name("cubins")
        .out_dir(&out_dir)
        .jobs(1)
        .cargo_metadata(false);
    let run = |b: &Build| b.try_compile().map_err(|e| e.to_string());
    // An nvcc that does not exist: a build that looked for one would fail on it.
    std::env::set_var("NVCC", ws.join("no-such-nvcc"));
    std::env::set_var("CUBINS_ARCHS", "80");
    std::env::remove_var("CUBINS_NO_BUILD");
    std::env::remove_var("CUBINS_CONTRACTS");
    std::env::set_var(prebuilt::ENV, "relative/export");
    let msg = run(&ctx).unwrap_err();
    assert!(
        msg.contains("CUBINS_PREBUILT=relative/export: not an absolute path"),
        "{msg}"
    );

    std::env::set_var(prebuilt::ENV, ws.join("export"));
    run(&ctx).unwrap_or_else(|e| panic!("the prebuilt build: {e}"));
    let registry = fs::read_to_string(out_dir.join("cubins_kernels.rs")).unwrap();
    let cubin = fs::read(ws.join("export/sm_80/tiny.sm_80.cubin")).unwrap();
    assert!(
        registry.contains(
            "static ORIGIN: ::cubins::registry::Origin = ::cubins::registry::Origin::Prebuilt;"
        ) && registry.contains(&sha256_hex(&cubin)),
        "{registry}"
    );
    assert_eq!(
        fs::read(out_dir.join("artifacts/tiny.sm_80.cubin")).unwrap(),
        cubin
    );
    assert!(registry.contains("pub struct Twice;"), "{registry}");

    flip_a_byte(&ws.join("export/sm_80/tiny.sm_80.cubin"));
    let msg = run(&ctx).unwrap_err();
    assert!(
        msg.starts_with("cubins: prebuilt artifact ") && msg.contains("was modified after export"),
        "{msg}"
    );
    std::env::remove_var(prebuilt::ENV);

    // A crate of its own exports through its build: every arch it selects, the same bytes
    // as the export above (same sources, toolkit and flags).
    let mine = prebuilt::Vars::of("my-kernels");
    std::env::set_var("NVCC", &tc().nvcc);
    let fresh = ws.join("fresh-export");
    std::env::set_var(&mine.export, &fresh);
    let mut own = ctx.clone();
    own.crate_name("my-kernels");
    let built = own
        .try_compile()
        .unwrap_or_else(|e| panic!("the exporting build: {e}"));
    assert!(
        built
            .warnings
            .iter()
            .any(|w| w.starts_with("cubins: exported sm_80 prebuilt kernels of my-kernels into")),
        "{:?}",
        built.warnings
    );
    let clean = exported();
    for file in ["tiny.sm_80.cubin", "tiny.compute_80.ptx", "prebuilt.json"] {
        assert_eq!(
            fs::read(fresh.join("sm_80").join(file)).unwrap(),
            fs::read(clean.dir.join("sm_80").join(file)).unwrap(),
            "{file}"
        );
    }
    // And through the method, with the arches set on the builder.
    let direct = ws.join("direct-export");
    let folders = own
        .clone()
        .archs(&[ARCH])
        .export_prebuilt(&direct)
        .unwrap_or_else(|e| panic!("export_prebuilt: {e}"));
    assert_eq!(folders.len(), 1);
    assert_eq!(
        fs::read(direct.join("sm_80/tiny.sm_80.cubin")).unwrap(),
        fs::read(clean.dir.join("sm_80/tiny.sm_80.cubin")).unwrap()
    );

    // An export from prebuilt kernels would export nothing new: refused.
    std::env::set_var(&mine.prebuilt, &fresh);
    let msg = run(&own).unwrap_err();
    assert!(
        msg.contains(&format!(
            "{}={} asks for an export",
            mine.export,
            fresh.display()
        )) && msg.contains(&format!("unset {}", mine.prebuilt)),
        "{msg}"
    );
    std::env::remove_var(&mine.export);

    // The crate's own export serves it, and its failures name the crate's variables.
    run(&own).unwrap_or_else(|e| panic!("the crate's prebuilt build: {e}"));
    flip_a_byte(&fresh.join("sm_80/tiny.sm_80.cubin"));
    let msg = run(&own).unwrap_err();
    assert!(
        msg.contains(&format!(
            "run `MY_KERNELS_EXPORT_PREBUILT={} CUBINS_ARCHS=\"80\" cargo build -p my-kernels`",
            fresh.display()
        )) && msg.contains("unset MY_KERNELS_PREBUILT"),
        "{msg}"
    );
    std::env::remove_var(&mine.prebuilt);
    std::env::remove_var("NVCC");
    std::env::remove_var("CUBINS_ARCHS");
}
