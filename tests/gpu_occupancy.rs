//! The offline occupancy the build embeds (from `cubins_build::occupancy`) against the
//! driver's `cuOccupancyMaxActiveBlocksPerMultiprocessor`, for every entry point at every
//! launch shape `cuda/kernels.toml` declares, on the cubin for the device's own arch.
//! Prints one `OCCUPANCY` line per comparison (the evidence) and fails on any difference.
#![cfg(feature = "cust")]

use cubins::registry::kernel_files;
use cubins::runtime::Gpu;
use cust::sys as cu;
use std::ffi::CString;

#[test]
#[ignore = "needs a GPU: run through the GPU bundle (`cargo xtask gpu-bundle`)"]
fn offline_occupancy_matches_the_driver() {
    let gpu = Gpu::new().expect("a CUDA device");
    gpu.bind().unwrap();
    let dev = gpu.device();
    let arch = format!("sm_{}", dev.cc);
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for file in kernel_files().unwrap() {
        let cubin = file
            .cubin(&arch)
            .unwrap_or_else(|e| panic!("this check needs the device's own arch built: {e}"));
        let mut module: cu::CUmodule = std::ptr::null_mut();
        // SAFETY: the cubin bytes are a complete ELF image that outlives the call.
        let status = unsafe { cu::cuModuleLoadData(&mut module, cubin.bytes.as_ptr().cast()) };
        assert_eq!(
            status,
            cu::cudaError_enum::CUDA_SUCCESS,
            "loading {} {arch}",
            file.name
        );
        for res in cubin.resources {
            let symbol = CString::new(res.mangled).unwrap();
            let mut func: cu::CUfunction = std::ptr::null_mut();
            // SAFETY: module is loaded; symbol is NUL-terminated.
            let status = unsafe { cu::cuModuleGetFunction(&mut func, module, symbol.as_ptr()) };
            assert_eq!(status, cu::cudaError_enum::CUDA_SUCCESS, "{}", res.mangled);
            for &(block, dyn_smem, offline) in res.occupancy {
                if dyn_smem > 48 * 1024 {
                    // SAFETY: plain attribute set on a valid function.
                    let status = unsafe {
                        cu::cuFuncSetAttribute(
                            func,
                            cu::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            dyn_smem as i32,
                        )
                    };
                    assert_eq!(status, cu::cudaError_enum::CUDA_SUCCESS);
                }
                let mut driver = 0i32;
                // SAFETY: writes one int; func is valid.
                let status = unsafe {
                    cu::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        &mut driver,
                        func,
                        block as i32,
                        dyn_smem as usize,
                    )
                };
                assert_eq!(
                    status,
                    cu::cudaError_enum::CUDA_SUCCESS,
                    "{} block {block}",
                    res.mangled
                );
                let verdict = if driver as u32 == offline {
                    "match"
                } else {
                    "MISMATCH"
                };
                println!(
                    "OCCUPANCY kernel={} arch={arch} block={block} dyn_smem={dyn_smem} regs={} static_smem={} offline={offline} driver={driver} {verdict}",
                    res.mangled, res.registers, res.static_smem_bytes
                );
                compared += 1;
                if driver as u32 != offline {
                    mismatches.push(format!(
                        "{} block {block}: offline {offline}, driver {driver}",
                        res.mangled
                    ));
                }
            }
        }
        // SAFETY: nothing from this module is used after this point.
        unsafe { cu::cuModuleUnload(module) };
    }
    println!(
        "OCCUPANCY compared={compared} mismatches={} device=\"{}\" cc={}",
        mismatches.len(),
        dev.name,
        dev.cc
    );
    assert!(compared > 0, "no declared launch shapes were compared");
    assert!(
        mismatches.is_empty(),
        "offline occupancy differs from the driver:\n{}",
        mismatches.join("\n")
    );
}
