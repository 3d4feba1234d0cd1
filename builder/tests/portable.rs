//! Identity that does not depend on the checkout path: the same kernels compiled from two
//! checkouts at different paths give byte-identical artifacts and cache keys, no artifact
//! holds an absolute path of either checkout or of the toolkit, and one cache serves both
//! without mixing up their sources. Needs the toolchain (`cargo xtask setup`).

mod common;

use common::{scratch, toolchain, workspace_root};
use cubins_build::arch::Arch;
use cubins_build::pipeline::{build, BuildOutput, Plan};
use cubins_build::toolchain::cache::{Cache, Limits};
use cubins_build::toolchain::Toolchain;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Every leak at once: an anonymous namespace (its mangling hashes the source path), a kernel
/// header, and a toolkit header's inline code in the line table (`__float2bfloat16`).
const ANON: &str = r#"#include <cuda_bf16.h>
#include "cubins/common.cuh"
namespace {
__device__ __nv_bfloat16 half_of(float v) { return __float2bfloat16(v * 0.5f); }
}
extern "C" __global__ void halve(const float* x, __nv_bfloat16* y, unsigned n) {
  const uint64_t i = cubins::global_thread_index();
  if (i < n) y[i] = half_of(x[i]);
}
"#;

/// A checkout: the repository's `copy.cu` and headers, and [`ANON`], under `root`, every
/// file modified at `mtime` (ptxas would record the times of files it finds).
fn checkout(root: &Path, mtime: SystemTime) -> PathBuf {
    let cuda = root.join("cuda");
    copy_dir(
        &workspace_root().join("cuda/include"),
        &cuda.join("include"),
    );
    fs::copy(workspace_root().join("cuda/copy.cu"), cuda.join("copy.cu")).unwrap();
    fs::write(cuda.join("anon.cu"), ANON).unwrap();
    touch_all(&cuda, mtime);
    cuda
}

fn touch_all(dir: &Path, mtime: SystemTime) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            touch_all(&p, mtime);
        } else {
            fs::File::options()
                .append(true)
                .open(&p)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn compile(tc: &Toolchain, cuda: &Path, cache: &Path) -> BuildOutput {
    let plan = Plan::discover(cuda, vec![Arch::new(90)]).unwrap();
    let cache = Cache::with_limits(cache.to_path_buf(), Limits::default()).unwrap();
    build(tc, &plan, &cache, 2).unwrap()
}

/// `copy.sm_90.cubin` -> (SHA-256, bytes) for every artifact of a build.
fn artifacts(b: &BuildOutput) -> BTreeMap<String, (String, Vec<u8>)> {
    let mut m = BTreeMap::new();
    for f in &b.files {
        for a in f.cubins.iter().chain(f.ptx.iter()) {
            let name = match a.kind {
                cubins_build::toolchain::nvcc::OutputKind::Cubin => {
                    format!("{}.{}.cubin", f.name, a.arch.sm_name())
                }
                cubins_build::toolchain::nvcc::OutputKind::Ptx => {
                    format!("{}.{}.ptx", f.name, a.arch.compute_name())
                }
            };
            m.insert(name, (a.sha256.clone(), a.bytes.clone()));
        }
    }
    m
}

/// The cache's keys: dependency-list names and contents, object names.
fn keys(cache: &Path) -> (BTreeMap<String, String>, Vec<String>) {
    let names = |dir: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(cache.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    };
    let manifests = names("manifests")
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).unwrap())
        })
        .collect();
    let objects = names("objects")
        .into_iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    (manifests, objects)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn two_checkouts_give_identical_artifacts_and_cache_keys() {
    let tc = toolchain();
    let d = scratch("portable");
    let (a, b) = (d.join("a"), d.join("somewhere/much/deeper/b"));
    let (cuda_a, cuda_b) = (
        checkout(&a, SystemTime::now()),
        checkout(&b, UNIX_EPOCH + Duration::from_secs(1_000_000_000)),
    );
    let (cache_a, cache_b) = (d.join("cache-a"), d.join("cache-b"));
    let built_a = compile(&tc, &cuda_a, &cache_a);
    let built_b = compile(&tc, &cuda_b, &cache_b);
    assert_eq!(built_a.compiled.len(), 4, "{:?}", built_a.compiled);

    let (arts_a, arts_b) = (artifacts(&built_a), artifacts(&built_b));
    for (name, (sha, _)) in &arts_a {
        println!("{name} sha256={sha}");
    }
    let shas = |m: &BTreeMap<String, (String, Vec<u8>)>| -> Vec<(String, String)> {
        m.iter().map(|(n, (s, _))| (n.clone(), s.clone())).collect()
    };
    assert_eq!(
        shas(&arts_a),
        shas(&arts_b),
        "the same sources, toolkit and flags"
    );
    for (f_a, f_b) in built_a.files.iter().zip(&built_b.files) {
        assert_eq!(f_a.source_digest, f_b.source_digest, "{}", f_a.name);
    }

    // No path of a checkout, of the toolkit, or of the cache in any artifact.
    let toolkit = tc.nvcc.parent().unwrap().parent().unwrap();
    let toolkit_canon = toolkit.canonicalize().unwrap();
    for (name, (_, bytes)) in &arts_a {
        for path in [
            d.display().to_string(),
            toolkit.display().to_string(),
            toolkit_canon.display().to_string(),
        ] {
            assert!(!contains(bytes, &path), "{name} holds {path}");
        }
    }
    // The line table still names the files, relative to the kernel folder and the toolkit.
    let (_, anon) = &arts_a["anon.sm_90.cubin"];
    assert!(contains(anon, "anon.cu") && contains(anon, "$CUDA_HOME/include"));

    assert_eq!(keys(&cache_a), keys(&cache_b), "byte-identical cache keys");

    // One cache serves both checkouts ...
    let shared = compile(&tc, &cuda_b, &cache_a);
    assert!(shared.compiled.is_empty(), "{:?}", shared.compiled);
    assert_eq!(shas(&artifacts(&shared)), shas(&arts_a));
    // ... and reads each checkout's own sources: an edit in one recompiles there only.
    let header = cuda_b.join("include/cubins/common.cuh");
    let text = fs::read_to_string(&header).unwrap();
    fs::write(&header, format!("{text}\n// edited in b\n")).unwrap();
    let edited = compile(&tc, &cuda_b, &cache_a);
    assert_eq!(edited.compiled.len(), 4, "{:?}", edited.compiled);
    assert!(compile(&tc, &cuda_a, &cache_a).compiled.is_empty());
    let _ = fs::remove_dir_all(&d);
}
