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
use cubins::runtime::{ArtifactKind, DevicePtr, Gpu, LaunchConfig, U8x16};
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

/// One way of launching the same kernel with the same arguments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Arm {
    /// A bare `cuLaunchKernel` on the function handle.
    Raw,
    /// The typed launcher on a cust stream.
    Typed,
    /// `ops::copy_with` on cust buffers.
    Ops,
    /// The typed launcher on a cudarc stream.
    CudarcTyped,
    /// `ops::copy_with` on cudarc slices (with cudarc's event tracking).
    CudarcOps,
}

impl Arm {
    const ALL: [Arm; 5] = [
        Arm::Raw,
        Arm::Typed,
        Arm::Ops,
        Arm::CudarcTyped,
        Arm::CudarcOps,
    ];

    fn name(self) -> &'static str {
        match self {
            Arm::Raw => "raw",
            Arm::Typed => "typed",
            Arm::Ops => "ops",
            Arm::CudarcTyped => "cudarc_typed",
            Arm::CudarcOps => "cudarc_ops",
        }
    }
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
    let (ps, pd): (DevicePtr<U8x16>, DevicePtr<U8x16>) = (
        DevicePtr::from_raw(src.as_device_ptr().as_raw()),
        DevicePtr::from_raw(dst.as_device_ptr().as_raw()),
    );
    let n_vec: u64 = 1;
    let function = kernel.raw_function();
    // The same copy on cudarc's stream and slices (the Gpu's primary context).
    let ctx = gpu.cudarc_context().unwrap();
    let cudarc_stream = ctx.new_stream().unwrap();
    let cudarc_src = cudarc_stream.clone_htod(&[7u8; 16]).unwrap();
    let mut cudarc_dst = cudarc_stream.alloc_zeros::<u8>(16).unwrap();
    cudarc_stream.synchronize().unwrap();
    let (cps, cpd): (DevicePtr<U8x16>, DevicePtr<U8x16>) = {
        use cubins::cudarc::driver::DevicePtr as _;
        let (s, _) = cudarc_src.device_ptr(&cudarc_stream);
        let (d, _) = cudarc_dst.device_ptr(&cudarc_stream);
        (DevicePtr::from_raw(s), DevicePtr::from_raw(d))
    };
    let mut window = |arm: Arm| -> f64 {
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
                            function.cast(),
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
                // SAFETY: 16-byte cudarc buffers, one vector.
                Arm::CudarcTyped => unsafe {
                    kernel
                        .launch(&cudarc_stream, &config, (cps, cpd, n_vec))
                        .unwrap()
                },
                Arm::CudarcOps => copy_with(
                    &gpu,
                    &cudarc_stream,
                    CopyKernel::Vec16,
                    &cudarc_src,
                    &mut cudarc_dst,
                    &config,
                )
                .map(drop)
                .unwrap(),
            }
        }
        let host = start.elapsed();
        stream.synchronize().unwrap();
        cudarc_stream.synchronize().unwrap();
        micros(host) * 1e3 / LAUNCHES_PER_WINDOW as f64
    };
    for arm in Arm::ALL {
        window(arm); // warm-up
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); Arm::ALL.len()];
    for i in 0..WINDOWS_PER_ARM {
        let mut order = Arm::ALL;
        if i % 2 == 1 {
            order.reverse();
        }
        for arm in order {
            let ns = window(arm);
            samples[arm as usize].push(ns);
        }
    }
    let medians: Vec<f64> = samples.iter().map(|s| median(s.clone())).collect();
    let r = medians[Arm::Raw as usize];
    let mut line = format!("MEASURE launch host cost per launch: raw cuLaunchKernel {r:.0} ns");
    for arm in &Arm::ALL[1..] {
        let m = medians[*arm as usize];
        line += &format!(", {} {m:.0} ns ({:.3}x raw)", arm.name(), m / r);
    }
    let typed_ratios = [
        medians[Arm::Typed as usize] / r,
        medians[Arm::CudarcTyped as usize] / r,
    ];
    let worst = typed_ratios.iter().cloned().fold(0.0, f64::max);
    println!(
        "{line}; {WINDOWS_PER_ARM} alternating windows of {LAUNCHES_PER_WINDOW} launches, goal typed <= \
         {GOAL_RATIO:.2}x raw on both runtimes: {}",
        if worst <= GOAL_RATIO { "met" } else { "NOT MET" }
    );
    let ratio = worst;
    let mut check = vec![0u8; 16];
    cust::memory::CopyDestination::copy_to(&*dst, &mut check[..]).unwrap();
    assert_eq!(check, [7u8; 16], "the measured launches did the copy");
    let check = cudarc_stream.clone_dtoh(&cudarc_dst).unwrap();
    assert_eq!(
        check, [7u8; 16],
        "the measured cudarc launches did the copy"
    );

    let report = json!({
        "stamp": route.to_string(),
        "device": &*gpu.device().name,
        "cc": gpu.device().cc,
        "driver_version": gpu.device().driver_version,
        "module_load": loads,
        "launch_host_ns": {
            "medians": Arm::ALL.iter().map(|a| (a.name(), medians[*a as usize])).collect::<std::collections::BTreeMap<_, _>>(),
            "over_raw": Arm::ALL.iter().map(|a| (a.name(), medians[*a as usize] / r)).collect::<std::collections::BTreeMap<_, _>>(),
            "goal_typed_over_raw": GOAL_RATIO,
            "launches_per_window": LAUNCHES_PER_WINDOW, "windows_per_arm": WINDOWS_PER_ARM,
            "samples": Arm::ALL.iter().map(|a| (a.name(), samples[*a as usize].clone())).collect::<std::collections::BTreeMap<_, _>>(),
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
        "a typed launcher costs {ratio:.3}x a bare cuLaunchKernel (cust, cudarc: {typed_ratios:.3?}); goal {GOAL_RATIO}x"
    );
}
