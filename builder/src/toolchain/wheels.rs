//! The CUDA toolchain as NVIDIA's PyPI wheels, pinned: what `cargo xtask setup` installs into
//! a checkout's `.cuda/`, and what a build without nvcc tells a dependent to install.
//!
//! Pinned: the 13.0 compiler matches the GPU machines' 580 driver, whose JIT rejects PTX from
//! newer toolkits; nvvm is pinned too, since an unpinned one emits PTX the 13.0 ptxas
//! rejects; cuobjdump and nvdisasm start at 13.2 on PyPI and read 13.0 cubins.

/// (package, version) of every wheel, in install order.
pub const WHEELS: &[(&str, &str)] = &[
    ("nvidia-cuda-nvcc", "13.0.88"),
    ("nvidia-nvvm", "13.0.88"),
    ("nvidia-cuda-crt", "13.0.88"),
    ("nvidia-cuda-runtime", "13.0.96"),
    ("nvidia-cuda-cccl", "13.0.85"),
    ("nvidia-cuda-cuobjdump", "13.2.86"),
    ("nvidia-cuda-nvdisasm", "13.2.86"),
];

/// Where the wheels put nvcc and cuobjdump, under the install target.
pub const BIN_IN_TARGET: &str = "nvidia/cu13/bin";

/// `name==version` of `package`, if it is one of [`WHEELS`].
pub fn pin(package: &str) -> Option<String> {
    WHEELS
        .iter()
        .find(|(n, _)| *n == package)
        .map(|(n, v)| format!("{n}=={v}"))
}

/// The command that installs [`WHEELS`] into `target`.
pub fn pip_install(target: &str) -> String {
    let pins: Vec<String> = WHEELS.iter().map(|(n, v)| format!("{n}=={v}")).collect();
    format!(
        "python3 -m pip install --no-deps --target {target} {}",
        pins.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_line_pins_every_wheel() {
        let line = pip_install("/opt/cuda-wheels");
        assert!(line.starts_with(
            "python3 -m pip install --no-deps --target /opt/cuda-wheels nvidia-cuda-nvcc==13.0.88 "
        ));
        for (n, v) in WHEELS {
            assert!(line.contains(&format!(" {n}=={v}")), "{line}");
        }
        assert_eq!(
            pin("nvidia-cuda-cuobjdump").as_deref(),
            Some("nvidia-cuda-cuobjdump==13.2.86")
        );
        assert!(super::super::discover::REPO_LOCAL_BIN.ends_with(BIN_IN_TARGET));
    }
}
