//! A launcher whose arguments disagree with the kernel's parameters fails the build.
//!
//! Compiles the fixture kernel (`tests/fixtures/abi_mismatch/cuda/scale_rows.cu`) with the
//! local toolchain through the same pipeline, inspection and launcher generation the build
//! script runs, and checks the generated launcher against the real cubin's `.nv.info`
//! parameter table: the agreeing manifest generates, the disagreeing ones are refused with
//! a message naming kernel, arch, parameter index, and both layouts.

use cubins_build::analyze::analyze_cubin;
use cubins_build::arch::Arch;
use cubins_build::launcher::generate;
use cubins_build::manifest::Manifest;
use cubins_build::model::CubinReport;
use cubins_build::pipeline::{build, Plan};
use cubins_build::shapes::LaunchShapes;
use cubins_build::toolchain::cache::Cache;
use cubins_build::toolchain::Toolchain;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const ARCH: Arch = Arch::new(90);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/abi_mismatch")
}

/// The fixture's sm_90 report, compiled once for all tests here.
fn report() -> &'static CubinReport {
    static REPORT: OnceLock<CubinReport> = OnceLock::new();
    REPORT.get_or_init(|| {
        let tc = Toolchain::discover(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| {
            panic!("this test compiles a fixture kernel; run `cargo xtask setup`.\n{e}")
        });
        let plan = Plan::discover(&fixture().join("cuda"), vec![ARCH]).unwrap();
        let scratch =
            std::env::temp_dir().join(format!("cubins-abi-mismatch-{}", std::process::id()));
        let cache = Cache::new(scratch.join("cache")).unwrap();
        let built =
            build(&tc, &plan, &cache, 2).unwrap_or_else(|e| panic!("compiling the fixture: {e}"));
        let cubin = &built.files[0].cubins[0];
        let report = analyze_cubin(cubin.arch, &cubin.outputs, &LaunchShapes::default()).unwrap();
        let _ = std::fs::remove_dir_all(&scratch);
        report
    })
}

fn manifest(text: &str) -> Manifest {
    Manifest::parse(text, "kernels.toml").unwrap()
}

fn check(m: &Manifest) -> Result<String, Vec<String>> {
    generate(m, &[("scale_rows".to_string(), report())])
}

#[test]
fn the_cubin_states_its_parameter_table() {
    let k = report()
        .kernels
        .iter()
        .find(|k| k.mangled == "scale_rows")
        .expect("scale_rows in the cubin");
    let mut table: Vec<(u32, u32)> = k.params.iter().map(|p| (p.offset, p.size)).collect();
    table.sort();
    assert_eq!(
        table,
        vec![(0, 8), (8, 8), (16, 4), (20, 4), (24, 4)],
        "x, rows, cols, alpha, flags"
    );
}

#[test]
fn agreeing_launcher_is_generated() {
    let text = std::fs::read_to_string(fixture().join("agree.toml")).unwrap();
    let src = check(&manifest(&text)).unwrap_or_else(|e| panic!("{e:#?}"));
    assert!(src.contains("pub struct ScaleRows;"));
    assert!(src.contains("type Args = (::cubins::runtime::DevicePtr<f32>, u64, u32, f32, u32);"));
}

#[test]
fn wider_parameter_fails_with_kernel_arch_index_and_layouts() {
    let text = std::fs::read_to_string(fixture().join("disagree.toml")).unwrap();
    let errors = check(&manifest(&text))
        .expect_err("a launcher that disagrees with the cubin must fail the build");
    assert_eq!(
        errors,
        vec![
            "scale_rows on sm_90: parameter 3 (`alpha: f64`): the launcher passes offset 24, size 8; \
             the cubin expects offset 20, size 4"
                .to_string(),
            "scale_rows on sm_90: parameter 4 (`flags: u32`): the launcher passes offset 32, size 4; \
             the cubin expects offset 24, size 4"
                .to_string(),
        ]
    );
}

#[test]
fn swapped_missing_and_extra_parameters_fail() {
    let variant = |params: &str| {
        check(&manifest(&format!(
            "[kernels.scale_rows]\nfile = \"scale_rows.cu\"\nparams = [{params}]\n"
        )))
        .expect_err(params)
    };
    // A 4-byte scalar before the pointer: both move.
    let e = variant(r#""cols: u32", "x: *mut f32", "rows: u64", "alpha: f32", "flags: u32""#);
    assert!(
        e.iter()
            .any(|m| m.contains("parameter 0 (`cols: u32`)") && m.contains("size 4;")),
        "{e:#?}"
    );
    // One argument short.
    let e = variant(r#""x: *mut f32", "rows: u64", "cols: u32", "alpha: f32""#);
    assert_eq!(
        e,
        vec!["scale_rows on sm_90: parameter count: the launcher declares 4 (x, rows, cols, alpha), the cubin's \
              parameter table has 5"
            .to_string()]
    );
    // One argument too many.
    let e = variant(
        r#""x: *mut f32", "rows: u64", "cols: u32", "alpha: f32", "flags: u32", "extra: u32""#,
    );
    assert!(
        e[0].contains("the launcher declares 6") && e[0].ends_with("has 5"),
        "{e:#?}"
    );
}
