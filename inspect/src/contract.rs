//! Kernel contracts: checks every kernel report against `cuda/kernels.toml`.
//! (Placeholder until the checker lands: checks nothing.)

use crate::manifest::Manifest;
use crate::model::CubinReport;

/// Result of checking every contract: errors fail the build, warnings print.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

/// `reports`: (kernel file name, report of one of its cubins).
pub fn check_all(_manifest: &Manifest, _reports: &[(String, &CubinReport)]) -> Outcome {
    Outcome::default()
}
