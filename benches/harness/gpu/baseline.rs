//! A kernel from another build of this crate (its artifacts dumped with `--dump-artifacts`),
//! loaded into the same context so a change is timed against its own baseline in one process.

use super::driver::{check, cust_error, Result};
use crate::harness::host::artifacts::Baseline;
use crate::harness::host::stamp::Route;
use cubins::runtime::LaunchConfig;
use cust::module::Module;
use cust::stream::Stream;
use cust::sys as cu;
use std::os::raw::c_void;

pub struct BaselineKernel {
    function: cu::CUfunction,
    pub route: Route,
    pub toolkit: String,
    // Keeps `function` valid.
    _module: Module,
}

impl BaselineKernel {
    /// Loads entry point `entry` of the baseline's `kernel_file` cubin for `arch` (the arch
    /// this build's own route took, so both arms run the same kind of code).
    pub fn load(
        baseline: &Baseline,
        kernel_file: &str,
        arch: &str,
        entry: &str,
    ) -> Result<BaselineKernel> {
        let (record, bytes) = baseline.load(kernel_file, arch)?;
        if record.kind != "cubin" {
            return Err(format!(
                "baseline {kernel_file}/{arch} is {}, not a cubin",
                record.kind
            ));
        }
        let module = Module::from_cubin(&bytes, &[])
            .map_err(|e| cust_error("cuModuleLoadData (baseline cubin)", e))?;
        let function = module
            .get_function(entry)
            .map_err(|e| cust_error(&format!("cuModuleGetFunction({entry})"), e))?
            .to_raw();
        Ok(BaselineKernel {
            function,
            route: Route::Artifact {
                arch: record.arch.clone(),
                kind: record.kind.clone(),
                sha256: record.sha256.clone(),
                fallback: false,
                origin: baseline.dir.join(&record.file).display().to_string(),
            },
            toolkit: record.toolkit,
            _module: module,
        })
    }

    /// # Safety
    /// `params` must match the entry point's parameters exactly (the baseline's ABI is taken
    /// to be this build's: compare builds whose kernel signatures agree), and every device
    /// pointer must be valid for the accesses the kernel makes.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        check(
            "cuLaunchKernel (baseline)",
            cu::cuLaunchKernel(
                self.function,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                config.dynamic_smem_bytes,
                stream.as_inner(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            ),
        )
    }
}
