//! The README's arch status table against the build: every supported arch has a row, and an
//! arch the README says builds with every contract holding was built here with contracts
//! enforced (a violation fails the build, so a finished build is a clean one). CI builds
//! every arch; a build of fewer names the unchecked rows in one loud line (and fails in CI).
//! The GEMM ratios it quotes are checked against the `bench.log` of the run they cite.

use cubins_build::arch::SUPPORTED;

/// (arch, builds clean) rows of the README's status table.
fn status_rows(readme: &str) -> Vec<(String, bool)> {
    let start = readme
        .find("| arch | builds with every contract holding |")
        .expect("the README's arch status table");
    readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let arch = cells[1].trim_matches('`').to_string();
            let builds = match cells[2] {
                "yes" => true,
                "no" => false,
                other => panic!("README status of {arch}: `{other}` is neither yes nor no"),
            };
            (arch, builds)
        })
        .collect()
}

#[test]
fn readme_arch_status_matches_the_build() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let rows = status_rows(&readme);
    let listed: Vec<&str> = rows.iter().map(|(a, _)| a.as_str()).collect();
    let supported: Vec<String> = SUPPORTED.iter().map(|a| a.sm_name()).collect();
    assert_eq!(
        listed, supported,
        "the README's table lists exactly the supported arches, in order"
    );

    if let Some(reason) = cubins::build_info().without_kernels {
        eprintln!("\n!!! NOT CHECKED: the README's arch status (this build has no kernels: {reason}) !!!\n");
        return;
    }
    let level = std::env::var("CUBINS_CONTRACTS").unwrap_or_default();
    assert!(
        level.is_empty() || level == "error",
        "the README's claims need contracts enforced; this build has CUBINS_CONTRACTS={level}"
    );
    let built = cubins::build_info().archs;
    let unbuilt: Vec<&str> = rows
        .iter()
        .filter(|(arch, clean)| *clean && !built.contains(&arch.as_str()))
        .map(|(a, _)| a.as_str())
        .collect();
    if !unbuilt.is_empty() {
        let msg = format!(
            "the README says {} build clean, and this build did not include them (`CUBINS_ARCHS=all` does)",
            unbuilt.join(", ")
        );
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("\n!!! NOT CHECKED: {msg} !!!\n");
    }
}

/// The README's "Building your own kernels" section: its manifest is the example crate's,
/// and the register counts it quotes are the example's reviewed snapshots.
#[test]
fn readme_builder_section_matches_the_example_crate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = &readme[readme
        .find("## Building your own kernels with cubins")
        .expect("the README's builder section")..];
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a toml block in the builder section");
    let snippet: String = block
        .lines()
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    let manifest =
        std::fs::read_to_string(root.join("examples/axpy-kernels/cuda/kernels.toml")).unwrap();
    assert!(
        manifest.contains(snippet.trim_end()),
        "the README's manifest is not the example's:\n{snippet}"
    );
    let snapshots = root.join("examples/axpy-kernels/snapshots/13.0");
    for arch in [
        "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120",
    ] {
        let text =
            std::fs::read_to_string(snapshots.join(format!("axpy_f32@{arch}.resources.snap")))
                .unwrap();
        let registers: u32 = text
            .lines()
            .find_map(|l| l.strip_prefix("registers: "))
            .and_then(|v| v.split(' ').next()?.parse().ok())
            .expect("a registers line");
        let blackwell = arch == "sm_100" || arch == "sm_120";
        assert!(
            if blackwell { registers == 40 } else { (22..=24).contains(&registers) },
            "the README says 40 registers on Blackwell and 22 to 24 elsewhere; {arch} has {registers}"
        );
    }
}

/// The README's minimum-driver line against the runtime's table (and, in a build with
/// kernels, against the toolkit that built them).
#[test]
fn readme_minimum_driver_matches_the_runtime() {
    use cubins::runtime::{driver_needed, ArtifactKind};
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("Minimum driver:"))
        .expect("the README's `Minimum driver:` line");
    let after = |key: &str| -> &str {
        let rest = &line[line
            .find(key)
            .unwrap_or_else(|| panic!("{key:?} in: {line}"))
            + key.len()..];
        rest.split_whitespace().next().unwrap()
    };
    let cuda = after("built by CUDA ");
    let linux = after("on Linux ");
    let need = driver_needed(&format!("{cuda}.0"), ArtifactKind::Cubin).expect("a CUDA version");
    assert_eq!(
        Some(linux),
        need.linux_driver,
        "the README's minimum Linux driver for CUDA {cuda}"
    );
    assert!(
        line.contains(&format!("`cuDriverGetVersion` >= {}", need.version)),
        "the README's cuDriverGetVersion floor for CUDA {cuda}: {line}"
    );
    let toolkit = cubins::build_info().toolkit;
    if toolkit.is_empty() {
        eprintln!("\n!!! NOT CHECKED: the README's toolkit against the build (this build has no kernels) !!!\n");
        return;
    }
    assert!(
        toolkit.starts_with(&format!("{cuda}.")),
        "the README speaks of CUDA {cuda}; the kernels were built by {toolkit}"
    );
}

/// The README's GEMM ratios against the evidence they cite: the range of cuBLAS speed ratios
/// of bf16 and fp16 over the four checked large shapes and every layout, in the run's
/// `bench.log`, written to two decimals (truncated).
#[test]
fn readme_gemm_ratios_match_their_evidence() {
    const SHAPES: [&str; 4] = [
        "4096x4096x4096",
        "8192x8192x8192",
        "4096x14336x4096",
        "4096x4096x14336",
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let prose = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for (claim, run) in [("0.99-1.03x", "run77"), ("0.90-0.99x", "run73")] {
        assert!(
            prose.contains(&format!("{claim} cuBLAS on an H100 from 4096^3 up, {run}"))
                || prose.contains(&format!("{claim} before their staged epilogue, {run}")),
            "the README no longer says {claim} for {run}: update this test with it"
        );
        let log = std::fs::read_dir(root.join("bench/results"))
            .expect("bench/results")
            .flat_map(|day| std::fs::read_dir(day.unwrap().path()).unwrap())
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{run}-"))
            })
            .unwrap_or_else(|| panic!("no evidence directory for {run}"))
            .join("bench.log");
        assert!(
            log.with_file_name("SHA256SUMS").exists(),
            "{run}: SHA256SUMS"
        );
        let text = std::fs::read_to_string(&log).expect("bench.log");
        let ratios: Vec<f64> = text
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                (l.starts_with("bf16 ") || l.starts_with("fp16 "))
                    && SHAPES.iter().any(|s| l.contains(&format!(" {s}:")))
            })
            .filter_map(|l| {
                l.split("speed ratio ")
                    .nth(1)?
                    .split('x')
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        assert_eq!(ratios.len(), 24, "{run}: 2 dtypes x 3 layouts x 4 shapes");
        let two = |v: f64| format!("{:.2}", (v * 100.0).floor() / 100.0);
        let (lo, hi) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &r| (a.min(r), b.max(r)));
        assert_eq!(format!("{}-{}x", two(lo), two(hi)), claim, "{run}");
    }
}
