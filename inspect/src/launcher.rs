//! Typed launcher generation from `cuda/kernels.toml` and the ABI check against the cubins'
//! parameter tables. (Placeholder until the runtime lands: generates nothing.)

use crate::manifest::Manifest;
use crate::model::CubinReport;

/// Rust source for the typed launchers, or the ABI mismatches that fail the build.
pub fn generate(_manifest: &Manifest, _reports: &[(String, &CubinReport)]) -> Result<String, Vec<String>> {
    Ok(String::new())
}
