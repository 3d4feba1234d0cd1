//! The report schema: `reports.json`, what every build writes into `OUT_DIR` and what the
//! CLI, the diff, the prebuilt export and the snapshot tests read. One definition here; the
//! per-kernel facts are [`crate::model`]'s.

use crate::model::CubinReport;
use crate::pipeline::BuildOutput;

/// `OUT_DIR/reports.json`: every cubin's report with the build identity, for tests and tools.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct ReportsFile {
    pub toolkit: String,
    pub toolkit_major_minor: String,
    pub files: Vec<FileEntry>,
}

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct FileEntry {
    pub name: String,
    pub source_digest: String,
    pub cubins: Vec<CubinEntry>,
}

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct CubinEntry {
    pub sha256: String,
    pub report: CubinReport,
}

impl ReportsFile {
    /// `toolkit`: full version and `major.minor`.
    pub(crate) fn new(
        toolkit: &(String, String),
        build: &BuildOutput,
        reports: &[Vec<CubinReport>],
    ) -> ReportsFile {
        ReportsFile {
            toolkit: toolkit.0.clone(),
            toolkit_major_minor: toolkit.1.clone(),
            files: build
                .files
                .iter()
                .zip(reports)
                .map(|(f, rs)| FileEntry {
                    name: f.name.clone(),
                    source_digest: f.source_digest.clone(),
                    cubins: f
                        .cubins
                        .iter()
                        .zip(rs)
                        .map(|(c, r)| CubinEntry {
                            sha256: c.sha256.clone(),
                            report: r.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}
