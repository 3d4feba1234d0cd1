//! Turns the captured tool outputs of one cubin into a [`CubinReport`].
//! (Placeholder until the parsers land: reports no kernels.)

use crate::arch::Arch;
use crate::manifest::Manifest;
use crate::model::{CubinOutputs, CubinReport};

#[derive(Debug)]
pub struct AnalyzeError(pub String);

impl std::fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AnalyzeError {}

pub fn analyze_cubin(arch: Arch, _outputs: &CubinOutputs, _manifest: &Manifest) -> Result<CubinReport, AnalyzeError> {
    Ok(CubinReport { arch, warnings: vec![], kernels: vec![] })
}
