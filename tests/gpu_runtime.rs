//! The runtime on a real GPU: route selection (the exact-arch cubin taken; a forced PTX
//! fallback that works and is counted), every launch check refusing before the GPU sees the
//! launch, and both starter kernels copying random data correctly into poisoned outputs.
//!
//! `#[ignore]`d: run through the GPU bundle, which passes `--include-ignored`.
#![cfg(feature = "cust")]

mod gpu_common;

use cubins::kernels::{CopyCpAsync, CopyVec16};
use cubins::ops::copy::{copy, copy_with, default_config, CopyKernel};
use cubins::runtime::{
    ptx_fallbacks, ArtifactKind, DevicePtr, Error, Gpu, LaunchConfig, LaunchError, RoutePolicy,
    StreamHandle, U8x16, FORCE_ROUTE_ENV,
};
use cust::memory::{CopyDestination, DeviceSlice};
use gpu_common::{first_difference, gpu, gpu_with, random_bytes, POISON};
use std::sync::{Arc, Barrier, Mutex, MutexGuard};

/// Tests here read the process-wide fallback counter and set environment variables: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Copies `n_vec` random 16-byte vectors with `kernel` into a poisoned buffer with a red zone
/// behind it; asserts the copy is exact and the red zone untouched.
fn check_copy(gpu: &Gpu, kernel: CopyKernel, n_vec: usize, config: Option<&LaunchConfig>) {
    const RED_ZONE: usize = 256;
    let bytes = n_vec * 16;
    let src_host = random_bytes(bytes, 0x5EED ^ n_vec as u64);
    let src = gpu_common::uploaded(&src_host).expect("upload the input");
    let dst =
        gpu_common::uploaded(&vec![POISON; bytes + RED_ZONE]).expect("upload the poisoned output");
    let stream = gpu.stream().expect("stream");
    let mut out = dst.index(..bytes);
    let result = match config {
        None => copy(gpu, &stream, kernel, &src, &mut out),
        Some(c) => copy_with(gpu, &stream, kernel, &src, &mut out, c),
    };
    let launched = result.unwrap_or_else(|e| panic!("{kernel:?} n_vec={n_vec} {config:?}: {e}"));
    // The record says what ran: the default geometry, nothing for an empty copy.
    assert_eq!(launched.kernel, kernel.name());
    let expected = match config {
        Some(c) => *c,
        None if n_vec == 0 => LaunchConfig::linear(0, CopyKernel::BLOCK),
        None => default_config(gpu, kernel, n_vec as u64),
    };
    assert_eq!(launched.config, expected, "{kernel:?} n_vec={n_vec}");
    stream.synchronize().expect("kernel ran to completion");
    let mut got = vec![0u8; bytes + RED_ZONE];
    dst.copy_to(&mut got[..]).expect("download");
    if let Some((i, g, w)) = first_difference(&got[..bytes], &src_host) {
        panic!("{kernel:?} n_vec={n_vec} {config:?}: byte {i} is {g:#04x}, the input has {w:#04x}");
    }
    assert!(
        got[bytes..].iter().all(|&b| b == POISON),
        "{kernel:?} n_vec={n_vec}: wrote past the end"
    );
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn exact_arch_cubin_is_taken() {
    let _s = serial();
    let before = ptx_fallbacks();
    let gpu = gpu();
    let cc = gpu.device().cc;
    for (kernel, file) in [("copy_vec16", "copy"), ("copy_cp_async", "copy_async")] {
        let route = gpu.route(kernel).unwrap();
        println!("{route}");
        assert_eq!(route.kind, ArtifactKind::Cubin, "{route}");
        assert!(!route.is_fallback());
        assert_eq!((route.kernel, route.file), (kernel, file));
        let cubin = cubins::kernel_file(file)
            .unwrap()
            .cubin(route.arch)
            .unwrap();
        assert_eq!(
            cubin.sha256, route.sha256,
            "the stamp names the artifact that was loaded"
        );
        assert_eq!(
            cubin.cc / 10,
            cc / 10,
            "a cubin of another major version cannot run"
        );
        if cc == 90 {
            assert!(route.arch == "sm_90" || route.arch == "sm_90a", "{route}");
        }
        assert_eq!(route.toolkit, cubins::build_info().toolkit);
        assert!(route.to_string().starts_with(&format!(
            "STAMP kernel={kernel} file={file} route=cubin arch=sm_"
        )));
        assert!(gpu.module_load_time(file).unwrap() > std::time::Duration::ZERO);
    }
    assert_eq!(
        ptx_fallbacks(),
        before,
        "automatic routes on a built arch never JIT"
    );
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn forced_ptx_route_works_and_is_counted() {
    let _s = serial();
    let before = ptx_fallbacks();
    let gpu = gpu_with(RoutePolicy::ForcePtx);
    for kernel in CopyKernel::ALL {
        check_copy(&gpu, kernel, 4099, None);
        let route = gpu.route(kernel.name()).unwrap();
        println!("{route}");
        assert_eq!(route.kind, ArtifactKind::PtxJit);
        assert!(route.is_fallback());
        assert!(route.arch.starts_with("compute_"), "{route}");
        let line = route.to_string();
        assert!(
            line.contains(" route=ptx-jit (FALLBACK) ") && line.ends_with(" policy=force-ptx"),
            "{line}"
        );
    }
    assert_eq!(
        ptx_fallbacks(),
        before + 2,
        "one JIT per kernel file, each counted"
    );
    // The modules are cached: more launches load nothing.
    check_copy(&gpu, CopyKernel::Vec16, 17, None);
    assert_eq!(ptx_fallbacks(), before + 2);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn route_policy_from_the_environment() {
    let _s = serial();
    std::env::set_var(FORCE_ROUTE_ENV, "ptx");
    let forced = Gpu::new();
    std::env::set_var(FORCE_ROUTE_ENV, "sometimes");
    let bad = Gpu::new();
    std::env::remove_var(FORCE_ROUTE_ENV);
    let forced = forced.expect("a GPU");
    assert_eq!(forced.policy(), RoutePolicy::ForcePtx);
    assert!(forced.route("copy_vec16").unwrap().is_fallback());
    let err = bad.expect_err("an unknown CUBINS_FORCE_ROUTE is refused");
    assert!(
        matches!(
            err,
            Error::BadEnv {
                var: "CUBINS_FORCE_ROUTE",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(Gpu::new().unwrap().policy(), RoutePolicy::Auto);
    let unknown = gpu().route("no_such_kernel").unwrap_err();
    assert!(unknown.to_string().contains("copy_vec16"), "{unknown}");
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn both_kernels_copy_exactly_at_every_size() {
    let _s = serial();
    let gpu = gpu();
    // Under compute-sanitizer (the bundle's `sanitize` mode) the 256 MiB size takes minutes.
    let sanitizer = std::env::var("CUBINS_SANITIZER").ok();
    let sizes: Vec<usize> = [0, 1, 2, 17, 255, 256, 257, 4099, 1_000_003, (1 << 24) + 3]
        .into_iter()
        .filter(|&n| sanitizer.is_none() || n < 1 << 24)
        .collect();
    if let Some(tool) = &sanitizer {
        println!("under compute-sanitizer {tool}: sizes above 2^24 vectors left out");
    }
    for kernel in CopyKernel::ALL {
        for &n_vec in &sizes {
            check_copy(&gpu, kernel, n_vec, None);
        }
        println!(
            "{kernel:?}: exact at {} sizes, default grid {:?}",
            sizes.len(),
            default_config(&gpu, kernel, (1 << 24) + 3).grid
        );
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn explicit_geometries_copy_exactly() {
    let _s = serial();
    let gpu = gpu();
    let sms = gpu.device().sm_count;
    for (grid, block) in [(1, 32), (7, 96), (sms * 8, 256), (3, 256)] {
        check_copy(
            &gpu,
            CopyKernel::Vec16,
            100_003,
            Some(&LaunchConfig::linear(grid, block)),
        );
    }
    for grid in [1, 3, sms * 6, 1000] {
        check_copy(
            &gpu,
            CopyKernel::CpAsync,
            100_003,
            Some(&LaunchConfig::linear(grid, 256)),
        );
    }
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn dynamic_shared_memory_above_48k_is_opted_into() {
    let _s = serial();
    let gpu = gpu();
    let kernel = gpu.kernel::<CopyVec16>().unwrap();
    let limits = kernel.limits();
    let optin = gpu.device().limits.max_smem_per_block_optin;
    let wanted = optin - limits.static_smem_bytes;
    assert!(
        wanted > 48 * 1024,
        "this device offers no opt-in shared memory above 48 KiB ({optin})"
    );
    let config = LaunchConfig::linear(4, 256).with_dynamic_smem(wanted);
    check_copy(&gpu, CopyKernel::Vec16, 4099, Some(&config));
    assert_eq!(
        kernel.limits().max_dynamic_smem_bytes,
        wanted,
        "the function's limit was raised"
    );
    // Smaller launches keep working under the raised limit.
    check_copy(
        &gpu,
        CopyKernel::Vec16,
        4099,
        Some(&LaunchConfig::linear(4, 256).with_dynamic_smem(1024)),
    );
}

/// Every refused launch returns its error and leaves the poisoned output untouched.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn launch_checks_refuse_before_the_gpu() {
    let _s = serial();
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let src = gpu_common::uploaded(&random_bytes(8192, 7)).unwrap();
    let dst = gpu_common::uploaded(&vec![POISON; 8192]).unwrap();
    // Ops return a record, bare launches `()`: either refused.
    fn launch<T: std::fmt::Debug>(e: Result<T, Error>) -> LaunchError {
        match e {
            Err(Error::Launch(l)) => l,
            other => panic!("expected a refused launch, got {other:?}"),
        }
    }

    // Buffers (ops layer).
    let e = launch(copy(
        &gpu,
        &stream,
        CopyKernel::Vec16,
        &src.index(1..4097),
        &mut dst.index(0..4096),
    ));
    assert_eq!(
        e,
        LaunchError::Misaligned {
            param: "src",
            address: src.as_device_ptr().as_raw() + 1,
            align: 16
        }
    );
    let e = launch(copy(
        &gpu,
        &stream,
        CopyKernel::Vec16,
        &src.index(0..4096),
        &mut dst.index(8..4104),
    ));
    assert!(
        matches!(
            e,
            LaunchError::Misaligned {
                param: "dst",
                align: 16,
                ..
            }
        ),
        "{e}"
    );
    let e = launch(copy(
        &gpu,
        &stream,
        CopyKernel::CpAsync,
        &src.index(0..4095),
        &mut dst.index(0..4095),
    ));
    assert_eq!(
        e,
        LaunchError::NotMultiple {
            param: "src",
            bytes: 4095,
            multiple: 16
        }
    );
    let e = launch(copy(
        &gpu,
        &stream,
        CopyKernel::Vec16,
        &src.index(0..4096),
        &mut dst.index(0..4112),
    ));
    assert!(
        matches!(
            e,
            LaunchError::LengthMismatch {
                a: "src",
                b: "dst",
                ..
            }
        ),
        "{e}"
    );
    let e = launch(copy(
        &gpu,
        &stream,
        CopyKernel::Vec16,
        &dst.index(0..4096),
        &mut dst.index(2048..6144),
    ));
    assert_eq!(e, LaunchError::Overlap { a: "src", b: "dst" });

    // Geometry (ops layer, then the launcher's own checks).
    let (s, mut d) = (src.index(0..8192), dst.index(0..8192));
    let with = |k, c: LaunchConfig, d: &mut DeviceSlice<u8>| {
        launch(copy_with(&gpu, &stream, k, &s, d, &c))
    };
    let e = with(CopyKernel::CpAsync, LaunchConfig::linear(4, 128), &mut d);
    assert!(
        matches!(
            e,
            LaunchError::Geometry {
                kernel: "copy_cp_async",
                ..
            }
        ),
        "{e}"
    );
    let e = with(
        CopyKernel::Vec16,
        LaunchConfig {
            grid: [2, 2, 1],
            block: [256, 1, 1],
            dynamic_smem_bytes: 0,
            programmatic_dependent: false,
        },
        &mut d,
    );
    assert!(
        matches!(
            e,
            LaunchError::Geometry {
                kernel: "copy_vec16",
                ..
            }
        ),
        "{e}"
    );
    let e = with(CopyKernel::Vec16, LaunchConfig::linear(4, 512), &mut d);
    assert_eq!(
        e,
        LaunchError::TooManyThreads {
            threads: 512,
            kernel_max: 256,
            device_max: 1024
        }
    );
    let e = with(CopyKernel::Vec16, LaunchConfig::linear(0, 256), &mut d);
    assert!(
        matches!(e, LaunchError::EmptyDimension { what: "grid", .. }),
        "{e}"
    );
    let e = with(
        CopyKernel::Vec16,
        LaunchConfig::linear(u32::MAX, 256),
        &mut d,
    );
    assert!(
        matches!(
            e,
            LaunchError::GridTooLarge {
                axis: 'x',
                value: u32::MAX,
                ..
            }
        ),
        "{e}"
    );
    let optin = gpu.device().limits.max_smem_per_block_optin;
    let e = with(
        CopyKernel::CpAsync,
        LaunchConfig::linear(4, 256).with_dynamic_smem(optin),
        &mut d,
    );
    assert!(
        matches!(e, LaunchError::SharedMemory { limit, .. } if limit == optin),
        "{e}"
    );

    // The typed launcher itself, below the ops layer: its checks hold for direct callers too.
    let vec16 = gpu.kernel::<CopyVec16>().unwrap();
    let cp = gpu.kernel::<CopyCpAsync>().unwrap();
    let (ps, pd): (DevicePtr<U8x16>, DevicePtr<U8x16>) = (
        DevicePtr::from_raw(src.as_device_ptr().as_raw()),
        DevicePtr::from_raw(dst.as_device_ptr().as_raw()),
    );
    let block_z = LaunchConfig {
        grid: [1, 1, 1],
        block: [1, 1, 65],
        dynamic_smem_bytes: 0,
        programmatic_dependent: false,
    };
    let grid_y = LaunchConfig {
        grid: [1, 70_000, 1],
        block: [32, 1, 1],
        dynamic_smem_bytes: 0,
        programmatic_dependent: false,
    };
    // SAFETY: both pointers address 8192-byte buffers and n_vec = 512 covers exactly that; the
    // launches are refused before reaching the GPU anyway, which is what is asserted.
    unsafe {
        let e = launch(vec16.launch(&stream, &block_z, (ps, pd, 512)));
        assert!(
            matches!(
                e,
                LaunchError::BlockTooLarge {
                    axis: 'z',
                    value: 65,
                    ..
                }
            ),
            "{e}"
        );
        let e = launch(cp.launch(&stream, &grid_y, (ps, pd, 512)));
        assert!(
            matches!(
                e,
                LaunchError::GridTooLarge {
                    axis: 'y',
                    value: 70_000,
                    ..
                }
            ),
            "{e}"
        );
        let mut two = [std::ptr::null_mut(); 2];
        let e =
            launch(vec16.launch_raw(stream.raw_stream(), &LaunchConfig::linear(1, 32), &mut two));
        assert_eq!(
            e,
            LaunchError::ArgumentCount {
                kernel: "copy_vec16",
                expected: 3,
                actual: 2
            }
        );
    }

    stream.synchronize().unwrap();
    let mut got = vec![0u8; 8192];
    dst.copy_to(&mut got[..]).unwrap();
    assert!(
        got.iter().all(|&b| b == POISON),
        "a refused launch must not have run"
    );
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn one_gpu_shared_by_threads_loads_each_module_once() {
    let _s = serial();
    let gpu = Arc::new(gpu());
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (gpu, barrier) = (gpu.clone(), barrier.clone());
            std::thread::spawn(move || {
                gpu.bind().unwrap();
                barrier.wait();
                let kernel = CopyKernel::ALL[t % 2];
                check_copy(&gpu, kernel, 10_007 + t, None);
                (
                    kernel,
                    gpu.route(kernel.name()).unwrap(),
                    gpu.module_load_time(if t % 2 == 0 { "copy" } else { "copy_async" })
                        .unwrap(),
                )
            })
        })
        .collect();
    let results: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("thread panicked"))
        .collect();
    for (kernel, route, load_time) in &results {
        let first = results.iter().find(|(k, _, _)| k == kernel).unwrap();
        assert_eq!(route, &first.1, "one route per kernel");
        assert_eq!(load_time, &first.2, "one module load per kernel file");
    }
}

/// A zero-length copy launches nothing and succeeds.
#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn empty_copy_is_a_no_op() {
    let _s = serial();
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    let src = gpu_common::uploaded(&[1u8; 16]).unwrap();
    let dst = gpu_common::uploaded(&[POISON; 16]).unwrap();
    copy(
        &gpu,
        &stream,
        CopyKernel::CpAsync,
        &src.index(0..0),
        &mut dst.index(0..0),
    )
    .unwrap();
    stream.synchronize().unwrap();
    let mut got = [0u8; 16];
    dst.copy_to(&mut got[..]).unwrap();
    assert_eq!(got, [POISON; 16]);
}

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (bash bundle/run.sh RESULTS tests)"]
fn the_driver_encodes_tensor_maps_and_refusals_come_first() {
    use cubins::runtime::{Swizzle, Tiled2d, TmaElem};
    use cust::memory::DevicePointer;
    let _gpu = gpu();
    let buf = gpu_common::uploaded(&vec![0u16; 320 * 776]).expect("upload");
    let base = DevicePointer::as_raw(&buf.as_device_ptr());
    let tile = Tiled2d {
        param: "a",
        elem: TmaElem::Bf16,
        base,
        cols: 776,
        rows: 320,
        pitch: 776,
        box_cols: 64,
        box_rows: 128,
        swizzle: Swizzle::B128,
    };
    let map = tile
        .encode()
        .expect("the driver encodes a GEMM operand tile");
    println!("TENSOR_MAP encoded {tile:?}: {map:?}");
    // An odd leading dimension is refused by the check, naming the parameter.
    let odd = Tiled2d {
        cols: 775,
        pitch: 775,
        ..tile
    };
    match odd.encode() {
        Err(Error::Launch(LaunchError::TensorMap { param: "a", .. })) => {}
        other => panic!("an odd pitch must be refused before the driver: {other:?}"),
    }
}
