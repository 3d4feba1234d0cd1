fn main() {
    // cuda/*.cu against cuda/kernels.toml, for the arches the `sm*` features select.
    cubins_build::Build::new().compile();
}
