//! Developer tasks: `cargo xtask <task>`. Run `cargo xtask help` for the list.

mod bundle;
mod codegen;
mod export;
mod package;
mod prebuild;
mod setup;
mod stub;
mod tasks;

use std::path::PathBuf;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

const HELP: &str = "\
cargo xtask <task>

  setup             install the pinned CUDA toolchain (NVIDIA wheels from PyPI) into .cuda/
  build [ARGS]      setup, compile the kernels (a line per nvcc job), cargo build ARGS, and
                    print a line per kernel file x arch (per kernel: inspect report --build)
  test [ARGS]       setup, link stub, kernels for every arch (CUBINS_ARCHS=all unless
                    CUBINS_ARCHS or CUDA_COMPUTE_CAP is set; a line per nvcc job), then the
                    whole suite with the runtime (cargo test --workspace --no-fail-fast
                    --features cubins/cust,cubins/cudarc ARGS), no GPU or driver needed
  link-stub         build target/cuda-stub/lib64/libcuda.so: a driver stand-in to link `cust`
  codegen [--check] regenerate the GEMM tile tables, entry points, planner tables and flag bits
                    (C++, Rust, manifest sets) from cuda/gemm_catalogue.toml; --check: fail
                    naming each stale file
  gpu-bundle [--out DIR]
                    GPU tests + benchmarks (release, sm_90 included), stripped, with run.sh,
                    into DIR (default bundle/); on the GPU machine: bash DIR/run.sh RESULTS all
  export-prebuilt --out DIR [--archs LIST]
                    compile the kernels per arch (default: every supported one) and export
                    cubins, PTX and reports with a manifest into DIR/<arch>/ (sizes printed);
                    a build with CUBINS_PREBUILT=DIR embeds them without a CUDA toolkit
  package           package cubins-build and cubins (sizes), unpack them, build a fresh crate
                    on the unpacked cubins with sm90 (nvcc), export sm_90 prebuilt kernels and
                    build it again with no CUDA on PATH from them: the same cubins
  inspect [ARGS]    run the cubins-inspect CLI (report, diff, or a .cu/.cubin file)
  help              this text
";

fn main() {
    let mut args = std::env::args().skip(1);
    let task = args.next().unwrap_or_else(|| "help".into());
    let rest: Vec<String> = args.collect();
    let result = match task.as_str() {
        "setup" => setup::run().map(|_| ()),
        "build" => tasks::build(&rest),
        "test" => tasks::test(&rest),
        "inspect" => tasks::inspect(&rest),
        "link-stub" => stub::run().map(|_| ()),
        "gpu-bundle" => bundle::run(&rest),
        "codegen" => codegen::run(&rest),
        "package" => package::run(&rest),
        "export-prebuilt" => export::run(&rest),
        "help" | "--help" | "-h" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown task `{other}`\n\n{HELP}").into()),
    };
    if let Err(e) = result {
        eprintln!("xtask {task}: {e}");
        std::process::exit(1);
    }
}

/// The workspace root (this crate lives in `xtask/`).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the workspace")
        .to_path_buf()
}
