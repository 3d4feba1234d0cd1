//! Helpers shared by the integration tests: paths, the toolchain, fixture tool outputs.
#![allow(dead_code)]

use cubins_build::arch::Arch;
use cubins_build::model::CubinOutputs;
use cubins_build::toolchain::Toolchain;
use std::path::PathBuf;

pub fn inspect_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn workspace_root() -> PathBuf {
    inspect_dir()
        .parent()
        .expect("builder/ is inside the workspace")
        .to_path_buf()
}

pub fn fixtures() -> PathBuf {
    inspect_dir().join("fixtures")
}

/// The CUDA toolchain; tests that compile need it (`cargo xtask setup` installs it).
pub fn toolchain() -> Toolchain {
    Toolchain::discover(&workspace_root())
        .unwrap_or_else(|e| panic!("these tests compile kernels and need nvcc:\n{e}"))
}

/// An artifact cache for tests, kept between runs under the target folder.
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cubins-inspect-cache")
}

/// A fresh scratch folder under the target folder.
pub fn scratch(name: &str) -> PathBuf {
    let d =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Captured tool outputs: which kernel file, built for which arches, with which extra flags.
pub struct FixtureSpec {
    /// Folder name under `fixtures/tool-output/` (before `.<arch>`).
    pub label: &'static str,
    /// Kernel file under `fixtures/kernels/` (or `fixtures/broken/`).
    pub file: &'static str,
    pub archs: &'static [&'static str],
    pub extra_flags: &'static [&'static str],
}

pub const SPECS: &[FixtureSpec] = &[
    FixtureSpec {
        label: "cp_async",
        file: "cp_async.cu",
        archs: &["sm_80", "sm_89", "sm_90"],
        extra_flags: &[],
    },
    FixtureSpec {
        label: "local_array",
        file: "local_array.cu",
        archs: &["sm_80", "sm_90"],
        extra_flags: &[],
    },
    FixtureSpec {
        label: "local_array.maxrregcount24",
        file: "local_array.cu",
        archs: &["sm_80"],
        extra_flags: &["-maxrregcount=24"],
    },
    FixtureSpec {
        label: "spill",
        file: "spill.cu",
        archs: &["sm_80", "sm_90"],
        extra_flags: &[],
    },
    FixtureSpec {
        label: "template",
        file: "template.cu",
        archs: &["sm_89", "sm_90"],
        extra_flags: &[],
    },
    FixtureSpec {
        label: "helper_spill",
        file: "helper_spill.cu",
        archs: &["sm_80", "sm_90"],
        extra_flags: &[],
    },
    FixtureSpec {
        label: "wgmma",
        file: "wgmma.cu",
        archs: &["sm_90a"],
        extra_flags: &[],
    },
];

/// The folder holding the captured outputs of `label` for `arch`.
pub fn tool_output_dir(label: &str, arch: &str) -> PathBuf {
    fixtures()
        .join("tool-output")
        .join(format!("{label}.{arch}"))
}

pub const PTXAS_LOG: &str = "ptxas.log";
pub const RES_USAGE: &str = "res-usage.txt";
pub const SASS: &str = "sass.txt";
pub const ELF: &str = "elf.txt";
/// nvcc's dependency list of the kernel file, beside the outputs of its first arch only.
pub const DEPS: &str = "deps.d";

/// The captured outputs of one fixture cubin.
pub fn fixture_outputs(label: &str, arch: &str) -> CubinOutputs {
    let dir = tool_output_dir(label, arch);
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f))
            .unwrap_or_else(|e| panic!("{}/{f}: {e}", dir.display()))
    };
    CubinOutputs {
        ptxas_log: read(PTXAS_LOG),
        res_usage: read(RES_USAGE),
        sass: read(SASS),
        elf: read(ELF),
    }
}

/// Every captured dependency file: (label, text).
pub fn fixture_depfiles() -> Vec<(&'static str, String)> {
    SPECS
        .iter()
        .map(|s| {
            let p = tool_output_dir(s.label, s.archs[0]).join(DEPS);
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (s.label, text)
        })
        .collect()
}

/// Every captured (label, arch).
pub fn all_fixtures() -> Vec<(&'static str, Arch)> {
    SPECS
        .iter()
        .flat_map(|s| {
            s.archs
                .iter()
                .map(move |a| (s.label, Arch::parse(a).unwrap()))
        })
        .collect()
}
