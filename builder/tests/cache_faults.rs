//! The artifact cache under faults, with real compiles of one tiny kernel: every kind of
//! damage to a cache entry is found, evicted and compiled again, said once, and the build
//! returns exactly what a clean compile returns; killed compiles' leftovers are cleaned; and
//! concurrent `cubins-inspect` runs sharing one cache all succeed with identical artifacts.
//! Needs the toolchain (`cargo xtask setup`).

mod common;

use common::{scratch, toolchain};
use cubins_build::arch::Arch;
use cubins_build::pipeline::{build, BuildOutput, Plan};
use cubins_build::toolchain::cache::{self, Cache, Limits, SUMS};
use cubins_build::toolchain::Toolchain;
use cubins_build::Build;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

const KERNEL: &str = r#"extern "C" __global__ void twice(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
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

const CUBIN: &str = "tiny.sm_80.cubin";
const PTX: &str = "tiny.compute_80.ptx";

/// A workspace holding `cuda/tiny.cu` and its `kernels.toml`.
fn workspace(name: &str) -> PathBuf {
    let ws = scratch(name);
    fs::create_dir_all(ws.join("cuda/include")).unwrap();
    fs::write(ws.join("cuda/tiny.cu"), KERNEL).unwrap();
    fs::write(ws.join("cuda/kernels.toml"), MANIFEST).unwrap();
    ws
}

fn tc() -> &'static Toolchain {
    static TC: OnceLock<Toolchain> = OnceLock::new();
    TC.get_or_init(toolchain)
}

fn plan(ws: &Path) -> Plan {
    Plan::discover(&ws.join("cuda"), vec![Arch::new(80)]).unwrap()
}

fn open(dir: &Path) -> Cache {
    Cache::with_limits(dir.to_path_buf(), Limits::default()).unwrap()
}

/// A clean compile of the shared workspace into a cache that the fault tests copy, so each
/// fault is judged against the same bytes.
struct Clean {
    ws: PathBuf,
    cache: PathBuf,
    build: BuildOutput,
}

fn clean() -> &'static Clean {
    static CLEAN: OnceLock<Clean> = OnceLock::new();
    CLEAN.get_or_init(|| {
        let ws = workspace("cache-faults-ws");
        let cache = ws.join("clean-cache");
        let build = build(tc(), &plan(&ws), &open(&cache), 2).unwrap();
        assert_eq!(build.compiled.len(), 2, "{:?}", build.compiled);
        Clean { ws, cache, build }
    })
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Where the cubin's entry and its dependency list lie in a copy of the clean cache.
struct Target {
    cache: PathBuf,
    object: PathBuf,
    ptx_object: PathBuf,
    manifest: PathBuf,
}

fn copy_of_clean(name: &str) -> Target {
    let clean = clean();
    let cache = scratch(name).join("cache");
    copy_dir(&clean.cache, &cache);
    let object_of = |path: &Path| {
        cache
            .join("objects")
            .join(path.parent().unwrap().file_name().unwrap())
    };
    let file = &clean.build.files[0];
    let object = object_of(&file.cubins[0].path);
    let key = object.file_name().unwrap().to_string_lossy().into_owned();
    Target {
        manifest: manifest_of(&cache, &key),
        ptx_object: object_of(&file.ptx.as_ref().unwrap().path),
        object,
        cache,
    }
}

/// The dependency list whose dependencies hash to `object_key`.
fn manifest_of(cache: &Path, object_key: &str) -> PathBuf {
    for e in fs::read_dir(cache.join("manifests")).unwrap() {
        let path = e.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        let deps: Vec<PathBuf> = text.lines().skip(1).map(PathBuf::from).collect();
        let mkey = path.file_stem().unwrap().to_string_lossy().into_owned();
        // Kernel-folder dependencies are recorded relative to it.
        let base = clean().ws.join("cuda");
        if Cache::object_key_in(&base, &mkey, &deps).as_deref() == Some(object_key) {
            return path;
        }
    }
    panic!(
        "no dependency list in {} names {object_key}",
        cache.display()
    );
}

/// Drops ptxas's `Compile time = ... ms`, the one line two compiles of a file differ in.
fn without_timing(log: &str) -> String {
    log.lines()
        .filter(|l| !l.contains("Compile time"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The build returned what the clean compile did: artifact bytes, identity and tool outputs.
fn assert_same_as_clean(got: &BuildOutput, what: &str) {
    let want = &clean().build.files[0];
    let got = &got.files[0];
    let (c, w) = (&got.cubins[0], &want.cubins[0]);
    assert!(
        c.bytes == w.bytes,
        "{what}: cubin bytes differ from a clean compile"
    );
    assert_eq!(c.sha256, w.sha256, "{what}");
    assert_eq!(c.sha256, cache::sha256_hex(&c.bytes), "{what}");
    assert!(
        c.outputs.sass == w.outputs.sass,
        "{what}: SASS listing differs"
    );
    assert!(
        c.outputs.res_usage == w.outputs.res_usage,
        "{what}: res-usage differs"
    );
    assert!(c.outputs.elf == w.outputs.elf, "{what}: ELF dump differs");
    assert_eq!(
        without_timing(&c.outputs.ptxas_log),
        without_timing(&w.outputs.ptxas_log),
        "{what}"
    );
    let (p, wp) = (got.ptx.as_ref().unwrap(), want.ptx.as_ref().unwrap());
    assert!(p.bytes == wp.bytes, "{what}: PTX differs");
}

/// Damages a copy of the clean cache, builds on it, and checks what the build did: it
/// compiled `recompiled`, said `note` (a fragment) once or nothing, returned the clean
/// compile's bytes, and a second build hits the cache without a word.
fn check_fault(name: &str, damage: impl FnOnce(&Target), recompiled: &[&str], note: Option<&str>) {
    let t = copy_of_clean(name);
    damage(&t);
    let cache = open(&t.cache);
    let p = plan(&clean().ws);
    let got = build(tc(), &p, &cache, 2).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut compiled = got.compiled.clone();
    compiled.sort();
    assert_eq!(compiled, recompiled, "{name}: what was compiled");
    match note {
        Some(fragment) => {
            assert_eq!(got.cache_notes.len(), 1, "{name}: {:?}", got.cache_notes);
            let n = &got.cache_notes[0];
            assert!(
                n.contains(fragment)
                    && n.contains("failed verification")
                    && n.contains("compiled again"),
                "{name}: {n}"
            );
        }
        None => assert!(got.cache_notes.is_empty(), "{name}: {:?}", got.cache_notes),
    }
    assert_same_as_clean(&got, name);
    let again = build(tc(), &p, &cache, 2).unwrap();
    assert!(
        again.compiled.is_empty() && again.cache_notes.is_empty(),
        "{name}: the second build compiled {:?} and said {:?}",
        again.compiled,
        again.cache_notes
    );
    assert_same_as_clean(&again, name);
    assert!(
        fs::read_dir(t.cache.join("tmp")).unwrap().next().is_none(),
        "{name}: temporaries left"
    );
    let _ = fs::remove_dir_all(t.cache.parent().unwrap());
}

fn truncate(path: &Path) {
    let bytes = fs::read(path).unwrap();
    assert!(bytes.len() > 1, "{} is empty already", path.display());
    fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

/// Flips one bit in the middle of the file.
fn flip_bit(path: &Path) {
    let mut bytes = fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    fs::write(path, bytes).unwrap();
}

/// The files of a cubin's entry (besides its sums).
const CUBIN_ENTRY_FILES: [&str; 5] = [
    "artifact",
    "ptxas.log",
    "res-usage.txt",
    "sass.txt",
    "elf.txt",
];

#[test]
fn a_truncated_file_of_an_entry_is_evicted_and_compiled_again() {
    for file in CUBIN_ENTRY_FILES {
        let mismatch = format!("{file} does not match its SHA-256");
        check_fault(
            &format!("fault-truncate-{file}"),
            |t| truncate(&t.object.join(file)),
            &[CUBIN],
            Some(&mismatch),
        );
    }
}

#[test]
fn a_bit_flip_in_the_cubin_is_never_embedded() {
    check_fault(
        "fault-flip-cubin",
        |t| flip_bit(&t.object.join("artifact")),
        &[CUBIN],
        Some("artifact does not match its SHA-256"),
    );
}

#[test]
fn a_bit_flip_in_the_sass_listing_is_never_inspected() {
    check_fault(
        "fault-flip-sass",
        |t| flip_bit(&t.object.join("sass.txt")),
        &[CUBIN],
        Some("sass.txt does not match its SHA-256"),
    );
}

#[test]
fn a_truncated_ptx_is_compiled_again() {
    check_fault(
        "fault-truncate-ptx",
        |t| truncate(&t.ptx_object.join("artifact")),
        &[PTX],
        Some(&format!("{PTX} failed verification")),
    );
}

#[test]
fn a_missing_file_or_sums_file_is_compiled_again() {
    check_fault(
        "fault-missing-sass",
        |t| fs::remove_file(t.object.join("sass.txt")).unwrap(),
        &[CUBIN],
        Some("sass.txt is missing"),
    );
    check_fault(
        "fault-missing-sums",
        |t| fs::remove_file(t.object.join(SUMS)).unwrap(),
        &[CUBIN],
        Some("SHA256SUMS is missing"),
    );
    check_fault(
        "fault-truncated-sums",
        |t| truncate(&t.object.join(SUMS)),
        &[CUBIN],
        Some("SHA256SUMS"),
    );
}

#[test]
fn a_missing_dependency_list_is_a_plain_miss() {
    // Nothing says the entry was damaged: the job compiles as if new, and its intact object
    // (already there) is kept.
    check_fault(
        "fault-missing-manifest",
        |t| fs::remove_file(&t.manifest).unwrap(),
        &[CUBIN],
        None,
    );
}

#[test]
fn a_garbage_dependency_list_is_compiled_again() {
    check_fault(
        "fault-garbage-manifest",
        |t| fs::write(&t.manifest, b"\x00\x9f garbage\n/no/such/header.h\n").unwrap(),
        &[CUBIN],
        Some("not a cubins-deps-v2 dependency list"),
    );
}

#[test]
fn a_lost_dependency_list_over_a_corrupt_object_is_replaced_at_commit() {
    check_fault(
        "fault-manifest-and-object",
        |t| {
            fs::remove_file(&t.manifest).unwrap();
            flip_bit(&t.object.join("elf.txt"));
        },
        &[CUBIN],
        Some("elf.txt does not match its SHA-256"),
    );
}

#[test]
fn a_killed_compiles_leftovers_are_cleaned_and_the_job_compiled() {
    check_fault(
        "fault-killed-compile",
        |t| {
            // The compile died after nvcc wrote half an artifact and before its commit.
            let left = t.cache.join("tmp/job-4242-0-0");
            fs::create_dir_all(&left).unwrap();
            let half = fs::read(t.object.join("artifact")).unwrap();
            fs::write(left.join("artifact"), &half[..half.len() / 2]).unwrap();
            fs::write(left.join("deps.d"), "tiny.cubin: tiny.cu").unwrap();
            fs::remove_dir_all(&t.object).unwrap();
            fs::remove_file(&t.manifest).unwrap();
            let long_ago = SystemTime::now() - cache::STALE_TEMPORARY_AGE - Duration::from_secs(60);
            fs::File::open(&left)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        },
        &[CUBIN],
        None,
    );
}

#[test]
fn a_failed_compile_leaves_no_temporaries() {
    let ws = workspace("cache-faults-failing");
    fs::write(
        ws.join("cuda/tiny.cu"),
        "extern \"C\" __global__ void k() { nope; }\n",
    )
    .unwrap();
    let cache = open(&ws.join("cache"));
    assert!(build(tc(), &plan(&ws), &cache, 2).is_err());
    let left: Vec<_> = fs::read_dir(ws.join("cache/tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The issue's symptoms through the build script: a truncated cached SASS listing made a
/// false contract failure, a truncated cached cubin was embedded. Now both compile again.
#[test]
fn the_build_script_embeds_no_corrupt_bytes_and_fails_no_contract_on_them() {
    std::env::set_var("NVCC", &tc().nvcc);
    std::env::set_var("CUBINS_ARCHS", "80");
    std::env::remove_var("CUBINS_NO_BUILD");
    std::env::remove_var("CUBINS_CONTRACTS");
    let ws = workspace("cache-faults-build-script");
    let cache_dir = ws.join("cache");
    std::env::set_var(cache::DIR_VAR, &cache_dir);
    let out_dir = ws.join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let mut ctx = Build::new();
    ctx.crate_dir(&ws)
        .crate_name("cubins")
        .out_dir(&out_dir)
        .jobs(2)
        .cargo_metadata(false);
    ctx.try_compile()
        .unwrap_or_else(|e| panic!("the clean build: {e}"));
    let staged = out_dir.join("artifacts/tiny.sm_80.cubin");
    let clean_cubin = fs::read(&staged).unwrap();
    let registry = fs::read_to_string(out_dir.join("cubins_kernels.rs")).unwrap();
    assert!(registry.contains(&cache::sha256_hex(&clean_cubin)));

    let object = find_object_with(&cache_dir, "sass.txt");
    let sass = fs::read_to_string(object.join("sass.txt")).unwrap();
    // Whole lines up to the first store: a listing that parses, without the STG.
    let stg = sass.find("STG").expect("the kernel stores with STG");
    let cut = sass[..stg].rfind('\n').unwrap() + 1;
    fs::write(object.join("sass.txt"), &sass[..cut]).unwrap();
    truncate(&object.join("artifact"));
    fs::remove_file(&staged).unwrap();
    ctx.try_compile()
        .unwrap_or_else(|e| panic!("a corrupt entry failed the build: {e}"));
    assert!(
        fs::read(&staged).unwrap() == clean_cubin,
        "the embedded cubin is the clean one"
    );
    assert_eq!(
        fs::read_to_string(out_dir.join("cubins_kernels.rs")).unwrap(),
        registry
    );
    assert_eq!(
        fs::read_to_string(out_dir.join("compiled.txt")).unwrap(),
        "tiny.sm_80.cubin"
    );
    let _ = fs::remove_dir_all(&ws);
}

/// The object folder in `cache` that holds `file` (there is one cubin entry).
fn find_object_with(cache: &Path, file: &str) -> PathBuf {
    fs::read_dir(cache.join("objects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join(file).is_file())
        .unwrap_or_else(|| panic!("no object with {file} in {}", cache.display()))
}

const WRITERS: usize = 8;

/// `cubins-inspect report --json --arch sm_80` in `ws` on the shared cache, `WRITERS` at
/// once; each run's exit status, stdout and stderr.
fn concurrent_reports(ws: &Path, cache: &Path) -> Vec<std::process::Output> {
    let children: Vec<_> = (0..WRITERS)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_cubins-inspect"))
                .args(["report", "--json", "--arch", "sm_80"])
                .current_dir(ws)
                .env(cache::DIR_VAR, cache)
                .env("NVCC", &tc().nvcc)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("running cubins-inspect")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// The cubin SHA-256 a report names.
fn cubin_sha(stdout: &[u8]) -> String {
    let v: Value = serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(stdout)));
    v["files"][0]["cubins"][0]["sha256"]
        .as_str()
        .expect("files[0].cubins[0].sha256")
        .to_string()
}

#[test]
fn concurrent_cli_runs_sharing_one_cache_all_succeed_with_identical_artifacts() {
    let ws = workspace("cache-stress");
    let cache = ws.join("shared-cache");
    let mut shas = Vec::new();
    let mut notes = 0;
    // Cold (every run compiles and commits the same entries), the cubin's entry damaged
    // (runs race to evict it and commit it again), then warm (reads only).
    for round in ["cold", "damaged", "warm"] {
        if round == "damaged" {
            flip_bit(&find_object_with(&cache, "sass.txt").join("sass.txt"));
        }
        for (i, o) in concurrent_reports(&ws, &cache).iter().enumerate() {
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{round} run {i} failed: {stderr}");
            let said = stderr.matches("failed verification").count();
            assert!(said <= 1, "{round} run {i} said it {said} times: {stderr}");
            notes += said;
            shas.push(cubin_sha(&o.stdout));
        }
    }
    assert_eq!(shas.len(), 3 * WRITERS);
    assert!(
        shas.iter().all(|s| *s == shas[0]),
        "artifacts differ: {shas:?}"
    );
    assert!(notes >= 1, "no run noticed the damaged entry");
    let object = find_object_with(&cache, "sass.txt");
    assert_eq!(
        cache::sha256_hex(&fs::read(object.join("artifact")).unwrap()),
        shas[0]
    );
    assert_eq!(
        fs::read_dir(cache.join("objects")).unwrap().count(),
        2,
        "cubin + PTX"
    );
    assert!(fs::read_dir(cache.join("tmp")).unwrap().next().is_none());
    eprintln!(
        "{WRITERS} concurrent runs x 3 rounds: 0 failures, 1 distinct cubin, {notes} run(s) \
         reported the damaged entry"
    );
    let _ = fs::remove_dir_all(&ws);
}
