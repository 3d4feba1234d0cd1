//! Measurements of the runtime itself, printed and written as JSON
//! (`$CUBINS_RESULTS_DIR/runtime-measure.json`, else in the temp folder):
//!
//! - module load time of each kernel file's cubin vs its PTX through the driver JIT: the
//!   median of repeated loads, each into a freshly created context, with the driver's JIT
//!   disk cache disabled so every PTX load compiles;
//! - host-side cost per launch of a typed launcher, of the checked `ops` call, and of a bare
//!   `cuLaunchKernel` with the same function and arguments, in alternating windows
//!   (A B B A ...) so clock and thermal drift falls on both arms; the goal is the typed
//!   launcher within 10% of the bare call.
//!
//! One test, because `CUDA_CACHE_DISABLE` must be set before the driver initializes.
#![cfg(feature = "cust")]

mod gpu_common;

use cubins::kernels::CopyVec16;
use cubins::ops::copy::{copy_with, CopyKernel};
use cubins::runtime::{ArtifactKind, Gpu, LaunchConfig, U8x16};
use cust::memory::DevicePointer;
use cust::sys as cu;
use gpu_common::gpu;
use serde_json::json;
use std::ffi::c_void;
use std::time::{Duration, Instant};

const LOAD_REPEATS: usize = 21;
const LAUNCHES_PER_WINDOW: usize = 256;
const WINDOWS_PER_ARM: usize = 60;
/// Typed launcher over bare `cuLaunchKernel`, host time per launch.
const GOAL_RATIO: f64 = 1.10;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn load_times(gpu: &Gpu, file: &str, kind: ArtifactKind) -> (String, Vec<f64>) {
    let mut arch = String::new();
    let samples = (0..LOAD_REPEATS)
        .map(|_| {
            let (selected, t) = gpu
                .time_fresh_load(file, kind)
                .unwrap_or_else(|e| panic!("{file} {kind:?}: {e}"));
            arch = selected.arch.to_string();
            micros(t)
        })
        .collect();
    (arch, samples)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Arm {
    Raw,
    Typed,
    Ops,
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn module_load_and_launch_overhead() {
    std::env::set_var("CUDA_CACHE_DISABLE", "1");
    let gpu = gpu();

    // Module loads.
    let mut loads = Vec::new();
    for file in ["copy", "copy_async"] {
        let (cubin_arch, cubin) = load_times(&gpu, file, ArtifactKind::Cubin);
        let (ptx_arch, ptx) = load_times(&gpu, file, ArtifactKind::PtxJit);
        let (c, p) = (median(cubin.clone()), median(ptx.clone()));
        println!(
            "MEASURE module-load file={file} cubin={cubin_arch} median={c:.1}us ptx-jit={ptx_arch} median={p:.1}us \
             ratio={:.1}x (n={LOAD_REPEATS}, fresh context each, JIT cache disabled)",
            p / c
        );
        assert!(c > 0.0 && p > 0.0);
        loads.push(json!({
            "file": file, "cubin_arch": cubin_arch, "ptx_arch": ptx_arch,
            "cubin_us_median": c, "ptx_jit_us_median": p, "ptx_over_cubin": p / c,
            "cubin_us": cubin, "ptx_jit_us": ptx,
        }));
    }

    // Host cost per launch: the same function, one 16-byte vector, one 32-thread block.
    let kernel = gpu.kernel::<CopyVec16>().unwrap();
    let route = kernel.route().clone();
    println!("{route}");
    assert!(
        !route.is_fallback(),
        "launch overhead is measured on the cubin route"
    );
    let stream = gpu.stream().unwrap();
    let src = gpu_common::uploaded(&[7u8; 16]).unwrap();
    let dst = gpu_common::uploaded(&[0u8; 16]).unwrap();
    let config = LaunchConfig::linear(1, 32);
    let (ps, pd): (DevicePointer<U8x16>, DevicePointer<U8x16>) =
        (src.as_device_ptr().cast(), dst.as_device_ptr().cast());
    let n_vec: u64 = 1;
    let function = kernel.raw_function();
    let window = |arm: Arm| -> f64 {
        let start = Instant::now();
        for _ in 0..LAUNCHES_PER_WINDOW {
            match arm {
                Arm::Raw => {
                    let mut params: [*mut c_void; 3] = [
                        &ps as *const _ as *mut c_void,
                        &pd as *const _ as *mut c_void,
                        &n_vec as *const _ as *mut c_void,
                    ];
                    // SAFETY: the same function and arguments the typed arm launches.
                    let status = unsafe {
                        cu::cuLaunchKernel(
                            function,
                            1,
                            1,
                            1,
                            32,
                            1,
                            1,
                            0,
                            stream.as_inner(),
                            params.as_mut_ptr(),
                            std::ptr::null_mut(),
                        )
                    };
                    assert_eq!(status, cu::CUresult::CUDA_SUCCESS);
                }
                // SAFETY: 16-byte buffers, one vector.
                Arm::Typed => unsafe { kernel.launch(&stream, &config, (ps, pd, n_vec)).unwrap() },
                Arm::Ops => copy_with(
                    &gpu,
                    &stream,
                    CopyKernel::Vec16,
                    &src,
                    &mut dst.index(..),
                    &config,
                )
                .map(drop)
                .unwrap(),
            }
        }
        let host = start.elapsed();
        stream.synchronize().unwrap();
        micros(host) * 1e3 / LAUNCHES_PER_WINDOW as f64
    };
    for arm in [Arm::Raw, Arm::Typed, Arm::Ops] {
        window(arm); // warm-up
    }
    let (mut raw, mut typed, mut ops) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WINDOWS_PER_ARM {
        let order = if i % 2 == 0 {
            [Arm::Raw, Arm::Typed, Arm::Ops]
        } else {
            [Arm::Ops, Arm::Typed, Arm::Raw]
        };
        for arm in order {
            let ns = window(arm);
            match arm {
                Arm::Raw => raw.push(ns),
                Arm::Typed => typed.push(ns),
                Arm::Ops => ops.push(ns),
            }
        }
    }
    let (r, t, o) = (
        median(raw.clone()),
        median(typed.clone()),
        median(ops.clone()),
    );
    let ratio = t / r;
    println!(
        "MEASURE launch host cost per launch: raw cuLaunchKernel {r:.0} ns, typed launcher {t:.0} ns ({ratio:.3}x raw), \
         ops::copy_with {o:.0} ns ({:.3}x raw); {WINDOWS_PER_ARM} alternating windows of {LAUNCHES_PER_WINDOW} launches, \
         goal typed <= {GOAL_RATIO:.2}x raw: {}",
        o / r,
        if ratio <= GOAL_RATIO { "met" } else { "NOT MET" }
    );
    let mut check = vec![0u8; 16];
    cust::memory::CopyDestination::copy_to(&*dst, &mut check[..]).unwrap();
    assert_eq!(check, [7u8; 16], "the measured launches did the copy");

    let report = json!({
        "stamp": route.to_string(),
        "device": &*gpu.device().name,
        "cc": gpu.device().cc,
        "driver_version": gpu.device().driver_version,
        "module_load": loads,
        "launch_host_ns": {
            "raw_median": r, "typed_median": t, "ops_median": o,
            "typed_over_raw": ratio, "ops_over_raw": o / r, "goal_typed_over_raw": GOAL_RATIO,
            "launches_per_window": LAUNCHES_PER_WINDOW, "windows_per_arm": WINDOWS_PER_ARM,
            "raw": raw, "typed": typed, "ops": ops,
        },
    });
    let dir = std::env::var_os("CUBINS_RESULTS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runtime-measure.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    println!("MEASURE written to {}", path.display());
    assert!(
        ratio <= GOAL_RATIO,
        "typed launcher costs {ratio:.3}x a bare cuLaunchKernel; goal {GOAL_RATIO}x"
    );
}
