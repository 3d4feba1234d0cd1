//! Where no GPU can be used, the runtime answers with a clear `Err`, never a crash.
//!
//! Runs everywhere the runtime builds: on CI the process loads the link stub
//! (`cargo xtask link-stub`), whose every entry point returns CUDA_ERROR_STUB_LIBRARY; on a
//! GPU machine the real driver loads and this test hides every device with
//! `CUDA_VISIBLE_DEVICES=""`. It is the only test in this binary, because that variable must
//! be set before the driver initializes.
#![cfg(feature = "driver")]

use cubins::runtime::{Error, Gpu, RoutePolicy};

/// The file `libcuda.so.1` was loaded from, as the process's memory map shows it.
fn loaded_libcuda() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("libcuda.so"))
        .map(str::to_string)
}

#[test]
fn no_driver_or_no_device_is_a_clear_error() {
    std::env::set_var("CUDA_VISIBLE_DEVICES", "");
    let attempts = [Gpu::new(), Gpu::with_policy(0, RoutePolicy::ForcePtx)];
    // The runtime loads libcuda.so.1 at its first call; from then on it is mapped. Where
    // none can be loaded (no driver, no stub on the loader path), each attempt says so.
    let Some(library) = loaded_libcuda() else {
        for attempt in attempts {
            let err = attempt.expect_err("no driver loads here, yet a Gpu was created");
            let message = err.to_string();
            assert!(matches!(err, Error::DriverNotFound { .. }), "{err:?}");
            assert!(message.starts_with("no CUDA driver: the NVIDIA driver's libcuda.so.1 could not be loaded (libcuda.so.1: "), "{message}");
            assert!(message.contains("install the NVIDIA driver"), "{message}");
            println!("error: {message}");
        }
        return;
    };
    for attempt in attempts {
        let err = attempt.expect_err("no device is usable here, yet a Gpu was created");
        let message = err.to_string();
        println!("libcuda: {library}\nerror: {message}");
        if library.contains("cuda-stub") {
            assert_eq!(err, Error::NoDriver { call: "cuInit" });
            assert!(
                message.starts_with("no CUDA driver: cuInit returned CUDA_ERROR_STUB_LIBRARY (34)"),
                "{message}"
            );
            assert!(message.contains("loaded the build stub"), "{message}");
        } else {
            assert!(matches!(err, Error::NoDevice { .. }), "{err:?}");
            assert!(message.starts_with("no CUDA device: "), "{message}");
            assert!(message.contains("CUDA_VISIBLE_DEVICES"), "{message}");
        }
    }
}
