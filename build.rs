//! Compiles `cuda/*.cu` for the selected arches, inspects and contract-checks the cubins, and
//! generates the kernels `src/lib.rs` includes: through the same builder any crate uses for
//! its own kernels (see the README for features and environment variables).

fn main() {
    cubins_build::Build::new().compile();
}
