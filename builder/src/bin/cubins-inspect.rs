//! `cubins-inspect`: resource and SASS reports of CUDA kernels without a GPU.
//! Run `cubins-inspect help` for the commands.

use cubins_build::analyze::analyze_cubin;
use cubins_build::arch::{Arch, SUPPORTED};
use cubins_build::builder;
use cubins_build::compile::{self, InspectError, Request};
use cubins_build::contract::{self, Outcome};
use cubins_build::diff;
use cubins_build::manifest::Manifest;
use cubins_build::model::CubinReport;
use cubins_build::pipeline::BuildError;
use cubins_build::report::{self, KernelSummary};
use cubins_build::schema::{CubinEntry, FileEntry, ReportsFile};
use cubins_build::shapes::LaunchShapes;
use cubins_build::toolchain::{cache, Toolchain};
use serde::Serialize;
use std::path::{Path, PathBuf};

const USAGE: &str = "\
cubins-inspect: resource and SASS reports of CUDA kernels, without a GPU

USAGE:
  cubins-inspect report [--json] [--arch sm_XX ...]
      compile this workspace's cuda/ (through the cache `cargo build` uses: target/cubins-cache/,
      or CUBINS_CACHE_DIR) and print a kernels x arches table (registers, spills, stack, smem,
      occupancy, key opcode classes) and the contract check, or the full reports as JSON
  cubins-inspect report --build [--json]
      the table of the most recent `cargo build` (its OUT_DIR/reports.json); no other arguments
  cubins-inspect diff A B [--arch sm_XX ...]
      register, spill, stack, smem, occupancy and opcode-class deltas per kernel; A and B are
      report JSON files (`report --json`, a build's reports.json), checkout folders, or git
      revisions (their cuda/ is exported with `git archive` and compiled)
  cubins-inspect FILE.cu --arch sm_XX [--arch ...] [--json] [--contracts kernels.toml]
  cubins-inspect FILE.cubin [--arch sm_XX] [--json] [--contracts kernels.toml]
      inspect any kernel file or cubin; with --contracts, check the manifest's entries for
      this file (exit status 1 on a violation)

`report` and `diff` without --arch take CUBINS_ARCHS, else CUDA_COMPUTE_CAP, else the default
arches, as `cargo build` does.
";

/// The usage text with the supported arches.
fn usage() -> String {
    let names: Vec<String> = SUPPORTED.iter().map(|a| a.sm_name()).collect();
    format!(
        "{USAGE}Arches: {}, or `all` (also written 89, 8.9, sm89, compute_89, 90a, 9.0a).\n",
        names.join(" ")
    )
}

enum CliError {
    /// Bad command line: the message and the usage text, exit status 2.
    Usage(String),
    /// The work failed: the message, exit status 1.
    Failed(String),
}

impl From<InspectError> for CliError {
    fn from(e: InspectError) -> Self {
        CliError::Failed(e.to_string())
    }
}

type CliResult<T = ()> = Result<T, CliError>;

#[derive(Default)]
struct Opts {
    json: bool,
    build: bool,
    help: bool,
    archs: Vec<Arch>,
    contracts: Option<PathBuf>,
    positional: Vec<String>,
    /// The options given, as the command line spelled them (`--arch sm_90`), for the commands
    /// that take none of them to name.
    given: Vec<(&'static str, String)>,
}

fn parse_args(args: &[String]) -> CliResult<Opts> {
    let mut o = Opts::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |name: &str| -> CliResult<String> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| CliError::Usage(format!("{name} needs a value")))
        };
        let name: &'static str = match flag {
            "--json" if inline.is_none() => {
                o.json = true;
                "--json"
            }
            "--build" if inline.is_none() => {
                // Part of the command word (`report --build`), checked there.
                o.build = true;
                continue;
            }
            "--arch" => {
                let v = value("--arch")?;
                o.archs
                    .extend(Arch::parse_list(&v).map_err(|e| CliError::Usage(e.to_string()))?);
                o.given.push(("--arch", format!("--arch {v}")));
                continue;
            }
            "--contracts" => {
                let v = value("--contracts")?;
                o.contracts = Some(PathBuf::from(&v));
                o.given.push(("--contracts", format!("--contracts {v}")));
                continue;
            }
            "-h" | "--help" => {
                o.help = true;
                "--help"
            }
            f if f.starts_with('-') && f.len() > 1 => {
                return Err(CliError::Usage(format!("unknown option `{a}`")))
            }
            _ => {
                o.positional.push(a.clone());
                continue;
            }
        };
        o.given.push((name, a.clone()));
    }
    o.archs.sort();
    o.archs.dedup();
    Ok(o)
}

/// `what` takes the options `allowed` and `positional` positional arguments (the command
/// word included): anything else on the command line is an error, never ignored.
fn takes(o: &Opts, what: &str, allowed: &[&str], positional: usize) -> CliResult {
    let extra: Vec<&str> = o
        .positional
        .iter()
        .skip(positional)
        .map(String::as_str)
        .chain(
            o.given
                .iter()
                .filter(|(name, _)| !allowed.contains(name))
                .map(|(_, spelled)| spelled.as_str()),
        )
        .collect();
    if extra.is_empty() {
        return Ok(());
    }
    let takes = if allowed.is_empty() {
        "no options".to_string()
    } else {
        format!("only {}", allowed.join(", "))
    };
    Err(CliError::Usage(format!(
        "{what} takes {takes}, not {}",
        extra.join(" ")
    )))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match parse_args(&args).and_then(|o| run(&o)) {
        Ok(code) => code,
        Err(CliError::Usage(m)) => {
            eprintln!("cubins-inspect: {m}\n\n{}", usage());
            2
        }
        Err(CliError::Failed(m)) => {
            eprintln!("cubins-inspect: {m}");
            1
        }
    };
    std::process::exit(code);
}

fn run(o: &Opts) -> CliResult<i32> {
    if o.help {
        print!("{}", usage());
        return Ok(0);
    }
    if o.build && o.positional.first().map(String::as_str) != Some("report") {
        return Err(CliError::Usage(
            "--build belongs to `report` (report --build)".into(),
        ));
    }
    match o.positional.first().map(String::as_str) {
        None if o.given.is_empty() && !o.build => {
            print!("{}", usage());
            Ok(0)
        }
        None => Err(CliError::Usage(
            "which command? (report, diff, or a file)".into(),
        )),
        Some("help") => {
            takes(o, "help", &[], 1)?;
            print!("{}", usage());
            Ok(0)
        }
        Some("report") if o.build => {
            takes(o, "report --build", &["--json"], 1)?;
            report_build(o)
        }
        Some("report") => {
            takes(o, "report", &["--json", "--arch"], 1)?;
            report_workspace(o)
        }
        Some("diff") => match o.positional.as_slice() {
            [_, a, b] => {
                takes(o, "diff", &["--arch"], 3)?;
                diff_cmd(o, a, b)
            }
            _ => Err(CliError::Usage(
                "diff takes two reports or revisions: diff A B".into(),
            )),
        },
        Some(file) if o.positional.len() == 1 => {
            takes(o, "a file", &["--json", "--arch", "--contracts"], 1)?;
            inspect_file(o, Path::new(file))
        }
        Some(_) => Err(CliError::Usage(format!(
            "unexpected arguments: {}",
            o.positional.join(" ")
        ))),
    }
}

/// The workspace whose `cuda/` to compile: the nearest folder upwards holding
/// `cuda/kernels.toml`, else the one this tool was built in.
fn workspace_root() -> CliResult<PathBuf> {
    let cwd =
        std::env::current_dir().map_err(|e| CliError::Failed(format!("current folder: {e}")))?;
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf);
    cwd.ancestors()
        .map(Path::to_path_buf)
        .chain(built_in)
        .find(|d| d.join("cuda").join("kernels.toml").is_file())
        .ok_or_else(|| CliError::Failed("no workspace with cuda/kernels.toml here or above".into()))
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

fn jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn toolchain(root: &Path, archs: &[Arch]) -> CliResult<Toolchain> {
    let tc = Toolchain::discover(root).map_err(|e| CliError::Failed(e.to_string()))?;
    for a in archs {
        tc.check_arch(*a)
            .map_err(|e| CliError::Failed(e.to_string()))?;
    }
    Ok(tc)
}

/// `--arch` when given, else what a `cargo build` would select (`CUBINS_ARCHS`,
/// `CUDA_COMPUTE_CAP` or the default).
fn archs_or_default(o: &Opts) -> CliResult<Vec<Arch>> {
    if !o.archs.is_empty() {
        return Ok(o.archs.clone());
    }
    let env = |k: &str| std::env::var(k).ok();
    builder::select_archs(&env)
        .map(|(a, _)| a)
        .map_err(|e| CliError::Usage(e.to_string()))
}

fn print_json<T: Serialize>(v: &T) -> CliResult {
    let s = serde_json::to_string_pretty(v).map_err(|e| CliError::Failed(e.to_string()))?;
    println!("{s}");
    Ok(())
}

fn flat(r: &ReportsFile) -> Vec<(String, &CubinReport)> {
    r.files
        .iter()
        .flat_map(|f| f.cubins.iter().map(move |c| (f.name.clone(), &c.report)))
        .collect()
}

fn print_outcome(outcome: &Outcome) {
    for w in &outcome.warnings {
        println!("warning: {w}\n");
    }
    for e in &outcome.errors {
        println!("error: {e}\n");
    }
}

/// Compiles the kernel files in `source_dir` (only `only` when given) for `archs` through
/// the artifact cache under the target folder.
fn compile_dir(
    root: &Path,
    source_dir: &Path,
    only: Vec<PathBuf>,
    archs: &[Arch],
    manifest: &Manifest,
) -> CliResult<ReportsFile> {
    let tc = toolchain(root, archs)?;
    // The cache `cargo build` uses too.
    let cache = cache::dir_for_target_dir(&|k| std::env::var(k).ok(), &target_dir(root));
    let what = match only.first() {
        Some(f) => source_dir.join(f).display().to_string(),
        None => source_dir.display().to_string(),
    };
    let req = Request {
        source_dir,
        only,
        archs: archs.to_vec(),
        extra_flags: vec![],
        cache_dir: &cache,
        jobs: jobs(),
    };
    match compile::compile_and_inspect(&tc, &req, manifest) {
        Ok((build, reports)) => {
            for note in &build.cache_notes {
                eprintln!("note: {note}");
            }
            Ok(reports)
        }
        Err(InspectError::Build(BuildError::Compile(e))) => {
            Err(CliError::Failed(format!("{what} does not compile:\n{e}")))
        }
        Err(e) => Err(e.into()),
    }
}

fn report_workspace(o: &Opts) -> CliResult<i32> {
    let root = workspace_root()?;
    let archs = archs_or_default(o)?;
    let manifest_path = root.join("cuda").join("kernels.toml");
    let manifest = Manifest::load(&manifest_path).map_err(|e| CliError::Failed(e.to_string()))?;
    let reports = compile_dir(&root, &root.join("cuda"), vec![], &archs, &manifest)?;
    if kernel_count(&reports) == 0 {
        return Err(CliError::Failed(format!(
            "{} holds no entry points (no `__global__` function in any .cu file): nothing to report",
            root.join("cuda").display()
        )));
    }
    if o.json {
        print_json(&reports)?;
        return Ok(0);
    }
    print!("{}", report::markdown_table(&reports));
    let outcome = contract::check_all(&manifest, &flat(&reports));
    println!();
    if outcome.errors.is_empty() && outcome.warnings.is_empty() {
        println!("contracts (cuda/kernels.toml): all hold");
    } else {
        println!(
            "contracts (cuda/kernels.toml): {} violation(s), {} warning(s)\n",
            outcome.errors.len(),
            outcome.warnings.len()
        );
        print_outcome(&outcome);
    }
    Ok(0)
}

fn report_build(o: &Opts) -> CliResult<i32> {
    let root = workspace_root()?;
    let target = target_dir(&root);
    let path = compile::latest_build_reports(&target).ok_or_else(|| {
        CliError::Failed(format!(
            "no build reports under {}: run `cargo build` first (a build with CUBINS_NO_BUILD=1 writes none)",
            target.display()
        ))
    })?;
    let reports = load_reports(&path)?;
    if o.json {
        print_json(&reports)?;
    } else {
        println!("reports of the latest build: {}\n", path.display());
        print!("{}", report::markdown_table(&reports));
    }
    Ok(0)
}

fn load_reports(path: &Path) -> CliResult<ReportsFile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::Failed(format!("{}: not a reports JSON file: {e}", path.display())))
}

/// A report file, a checkout folder (its `cuda/`), or a git revision of this workspace.
fn reports_of_side(o: &Opts, root: &Path, side: &str) -> CliResult<ReportsFile> {
    let p = Path::new(side);
    let cuda = if p.is_file() {
        return load_reports(p);
    } else if p.is_dir() {
        if p.join("cuda").is_dir() {
            p.join("cuda")
        } else {
            p.to_path_buf()
        }
    } else {
        compile::export_revision(
            root,
            side,
            &target_dir(root).join("cubins-inspect").join("revisions"),
        )?
    };
    let manifest_path = cuda.join("kernels.toml");
    let manifest = if manifest_path.is_file() {
        Manifest::load(&manifest_path).map_err(|e| CliError::Failed(e.to_string()))?
    } else {
        Manifest::default()
    };
    compile_dir(root, &cuda, vec![], &archs_or_default(o)?, &manifest)
}

fn diff_cmd(o: &Opts, a: &str, b: &str) -> CliResult<i32> {
    let root = workspace_root()?;
    let ra = reports_of_side(o, &root, a)?;
    let rb = reports_of_side(o, &root, b)?;
    let deltas = diff::diff(&ra, &rb);
    print!("{}", diff::render(a, b, &ra, &deltas, &rb));
    Ok(0)
}

/// The CLI's JSON for one inspected file.
#[derive(Serialize)]
struct FileInspection {
    file: String,
    toolkit: String,
    kernels: Vec<KernelSummary>,
    warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    contracts: Option<ContractResult>,
}

#[derive(Serialize)]
struct ContractResult {
    manifest: String,
    errors: Vec<String>,
    warnings: Vec<String>,
}

/// Compiles `file` (named `name`) for the arches asked and inspects it.
fn reports_of_source(
    o: &Opts,
    root: &Path,
    file: &Path,
    name: &str,
    manifest: &Manifest,
) -> CliResult<ReportsFile> {
    if o.archs.is_empty() {
        let names: Vec<String> = SUPPORTED.iter().map(|a| a.sm_name()).collect();
        return Err(CliError::Usage(format!(
            "which arch? pass --arch (one of {})",
            names.join(", ")
        )));
    }
    let source_dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let source_dir = source_dir
        .canonicalize()
        .map_err(|e| CliError::Failed(format!("{}: {e}", source_dir.display())))?;
    compile_dir(
        root,
        &source_dir,
        vec![PathBuf::from(name)],
        &o.archs,
        manifest,
    )
}

/// Inspects a cubin compiled elsewhere (from cuobjdump's outputs alone).
fn reports_of_cubin(
    o: &Opts,
    root: &Path,
    file: &Path,
    stem: &str,
    manifest: &Manifest,
) -> CliResult<ReportsFile> {
    let bytes = std::fs::read(file)
        .map_err(|e| CliError::Failed(format!("reading {}: {e}", file.display())))?;
    compile::check_cubin(&bytes)
        .map_err(|e| CliError::Failed(format!("{}: not a cubin: {e}", file.display())))?;
    let tc = toolchain(root, &[])?;
    let outputs = compile::outputs_of_cubin(&tc, file).map_err(|e| {
        CliError::Failed(format!(
            "{}: cuobjdump cannot read it, so it is not a cubin it understands: {e}",
            file.display()
        ))
    })?;
    let arch = compile::cubin_arch(&outputs).ok_or_else(|| {
        CliError::Failed(format!(
            "{}: cannot tell its arch from `cuobjdump -sass`",
            file.display()
        ))
    })?;
    if !o.archs.is_empty() && o.archs != [arch] {
        return Err(CliError::Failed(format!(
            "{} is a {arch} cubin, not {}",
            file.display(),
            o.archs[0]
        )));
    }
    let report = analyze_cubin(arch, &outputs, &LaunchShapes::of(manifest))
        .map_err(|e| CliError::Failed(format!("{}: {e}", file.display())))?;
    Ok(ReportsFile {
        toolkit: tc.version.full.clone(),
        toolkit_major_minor: tc.version.major_minor(),
        files: vec![FileEntry {
            name: stem.to_string(),
            source_digest: String::new(),
            cubins: vec![CubinEntry {
                sha256: String::new(),
                report,
            }],
        }],
    })
}

/// How many entry points `reports` holds, over every cubin.
fn kernel_count(reports: &ReportsFile) -> usize {
    reports
        .files
        .iter()
        .flat_map(|f| &f.cubins)
        .map(|c| c.report.kernels.len())
        .sum()
}

fn inspect_file(o: &Opts, file: &Path) -> CliResult<i32> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !file.exists() {
        return Err(CliError::Failed(format!(
            "no such file: {}",
            file.display()
        )));
    }
    if file.is_dir() {
        return Err(CliError::Failed(format!(
            "{} is a directory, not a kernel file (give a .cu or .cubin file)",
            file.display()
        )));
    }
    if ext != "cu" && ext != "cubin" {
        return Err(CliError::Usage(format!(
            "{}: expected a .cu or .cubin file",
            file.display()
        )));
    }
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    // `foo.cu` -> `foo`; `foo.sm_90.cubin` -> `foo`: the kernel file a manifest entry names.
    let stem = name.split('.').next().unwrap_or_default().to_string();
    let manifest = match &o.contracts {
        Some(p) => {
            let mut m = Manifest::load(p).map_err(|e| CliError::Failed(e.to_string()))?;
            m.kernels
                .retain(|_, e| e.file.split('.').next() == Some(stem.as_str()));
            // A file inspected alone builds for exactly the arches asked.
            m.arch_specific = None;
            m
        }
        None => Manifest::default(),
    };
    let root = workspace_root().unwrap_or_else(|_| std::env::temp_dir());
    let reports = if ext == "cu" {
        reports_of_source(o, &root, file, &name, &manifest)?
    } else {
        reports_of_cubin(o, &root, file, &stem, &manifest)?
    };
    let contracts = o
        .contracts
        .as_ref()
        .map(|p| contract::check_all_in(&manifest, &flat(&reports), &p.display().to_string()));
    let failed = contracts.as_ref().is_some_and(|c| !c.errors.is_empty());
    if o.json {
        let cubins = reports.files.iter().flat_map(|f| &f.cubins);
        print_json(&FileInspection {
            file: file.display().to_string(),
            toolkit: reports.toolkit.clone(),
            kernels: cubins
                .clone()
                .flat_map(|c| c.report.kernels.iter().map(KernelSummary::of))
                .collect(),
            warnings: cubins
                .flat_map(|c| c.report.warnings.iter().cloned())
                .collect(),
            contracts: contracts.map(|c| ContractResult {
                manifest: o
                    .contracts
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                errors: c.errors,
                warnings: c.warnings,
            }),
        })?;
    } else {
        println!("{} (CUDA {})\n", file.display(), reports.toolkit);
        for c in reports.files.iter().flat_map(|f| &f.cubins) {
            for w in &c.report.warnings {
                println!("{w}");
            }
            for k in &c.report.kernels {
                println!("{}", report::kernel_resources_text(k));
            }
        }
        if let Some(outcome) = &contracts {
            if outcome.errors.is_empty() && outcome.warnings.is_empty() {
                println!("contracts: all hold");
            } else {
                print_outcome(outcome);
            }
        }
    }
    if kernel_count(&reports) == 0 {
        // It compiled, but there is nothing to report: not a success.
        eprintln!(
            "cubins-inspect: {} defines no entry points (no `__global__` function): nothing to inspect",
            file.display()
        );
        return Ok(1);
    }
    Ok(if failed { 1 } else { 0 })
}
