//! Compiles every `cuda/*.cu` for the selected arches, inspects and contract-checks the
//! cubins, and writes the embedded registry and typed launchers into `OUT_DIR`.
//! The work lives in `cubins_inspect::build_script`; see the README for features and env vars.

fn main() {
    let ctx = cubins_inspect::build_script::Context {
        manifest_dir: std::env::var_os("CARGO_MANIFEST_DIR")
            .expect("cargo sets CARGO_MANIFEST_DIR")
            .into(),
        out_dir: std::env::var_os("OUT_DIR")
            .expect("cargo sets OUT_DIR")
            .into(),
        jobs: std::env::var("NUM_JOBS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1),
    };
    if let Err(message) = cubins_inspect::build_script::run(&ctx) {
        // Logged errors fail the build and cargo shows them first, not a panic backtrace.
        print!(
            "{}",
            cubins_inspect::build_script::error_directives(&message)
        );
    }
}
