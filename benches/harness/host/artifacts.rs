//! Another build's artifacts, for judging a change against its own baseline in the same
//! process: `--dump-artifacts DIR` writes this build's embedded cubins and PTX with an
//! index; `--baseline-artifacts DIR` reads them back, checking every byte against the index.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

pub const INDEX: &str = "artifacts.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    /// Kernel file stem (`copy`).
    pub kernel_file: String,
    /// `sm_90` for a cubin, `compute_80` for PTX.
    pub arch: String,
    /// `cubin` or `PTX`.
    pub kind: String,
    pub sha256: String,
    pub toolkit: String,
    pub source_digest: String,
    /// File name inside the dump folder.
    pub file: String,
}

/// An artifact and its bytes (PTX without the trailing NUL).
pub struct Artifact<'a> {
    pub record: ArtifactRecord,
    pub bytes: &'a [u8],
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every artifact embedded in this build.
pub fn embedded() -> Result<Vec<Artifact<'static>>, String> {
    let files = cubins::kernel_files().map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for f in files {
        let record = |arch: &str, kind: &str, sha: &str, ext: &str| ArtifactRecord {
            kernel_file: f.name.into(),
            arch: arch.into(),
            kind: kind.into(),
            sha256: sha.into(),
            toolkit: f.toolkit.into(),
            source_digest: f.source_digest.into(),
            file: format!("{}.{arch}.{ext}", f.name),
        };
        for c in f.cubins {
            out.push(Artifact {
                record: record(c.arch, "cubin", c.sha256, "cubin"),
                bytes: c.bytes,
            });
        }
        if let Some(p) = &f.ptx {
            out.push(Artifact {
                record: record(p.arch, "PTX", p.sha256, "ptx"),
                bytes: p.text().as_bytes(),
            });
        }
    }
    Ok(out)
}

/// Writes the artifacts and their index into `dir` (created if needed).
pub fn dump(dir: &Path, artifacts: &[Artifact<'_>]) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for a in artifacts {
        fs::write(dir.join(&a.record.file), a.bytes)
            .map_err(|e| format!("{}: {e}", a.record.file))?;
    }
    let records: Vec<&ArtifactRecord> = artifacts.iter().map(|a| &a.record).collect();
    let json = serde_json::to_string_pretty(&records).map_err(|e| e.to_string())?;
    fs::write(dir.join(INDEX), json + "\n").map_err(|e| format!("{INDEX}: {e}"))
}

/// A dump folder of another build.
pub struct Baseline {
    pub dir: PathBuf,
    pub records: Vec<ArtifactRecord>,
}

impl Baseline {
    pub fn open(dir: &Path) -> Result<Baseline, String> {
        let index = dir.join(INDEX);
        let text = fs::read_to_string(&index).map_err(|e| {
            format!(
                "{}: {e} (make it with `<bench> --dump-artifacts DIR` from the baseline build)",
                index.display()
            )
        })?;
        let records =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", index.display()))?;
        Ok(Baseline {
            dir: dir.to_path_buf(),
            records,
        })
    }

    /// The bytes of `kernel_file` for `arch`, verified against the recorded SHA-256.
    pub fn load(&self, kernel_file: &str, arch: &str) -> Result<(ArtifactRecord, Vec<u8>), String> {
        let record = self
            .records
            .iter()
            .find(|r| r.kernel_file == kernel_file && r.arch == arch)
            .ok_or_else(|| {
                let have: Vec<String> = self
                    .records
                    .iter()
                    .map(|r| format!("{}/{}", r.kernel_file, r.arch))
                    .collect();
                format!(
                    "baseline {} has no {kernel_file}/{arch}; it has: {}",
                    self.dir.display(),
                    have.join(", ")
                )
            })?;
        let path = self.dir.join(&record.file);
        let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let actual = sha256_hex(&bytes);
        if actual != record.sha256 {
            return Err(format!(
                "{}: SHA-256 {actual} does not match the index ({})",
                path.display(),
                record.sha256
            ));
        }
        Ok((record.clone(), bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("cubins-artifacts-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn fake(kernel_file: &str, arch: &str, bytes: &'static [u8]) -> Artifact<'static> {
        Artifact {
            record: ArtifactRecord {
                kernel_file: kernel_file.into(),
                arch: arch.into(),
                kind: "cubin".into(),
                sha256: sha256_hex(bytes),
                toolkit: "13.0.88".into(),
                source_digest: "d".into(),
                file: format!("{kernel_file}.{arch}.cubin"),
            },
            bytes,
        }
    }

    #[test]
    fn dumped_artifacts_load_back_verified() {
        let dir = scratch("roundtrip");
        dump(
            &dir,
            &[
                fake("copy", "sm_90", b"\x7fELF one"),
                fake("copy", "sm_80", b"\x7fELF two"),
            ],
        )
        .unwrap();
        let b = Baseline::open(&dir).unwrap();
        let (rec, bytes) = b.load("copy", "sm_90").unwrap();
        assert_eq!(
            (rec.arch.as_str(), bytes.as_slice()),
            ("sm_90", &b"\x7fELF one"[..])
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_corrupted_or_missing_artifact_is_refused() {
        let dir = scratch("corrupt");
        dump(&dir, &[fake("copy", "sm_90", b"\x7fELF one")]).unwrap();
        let b = Baseline::open(&dir).unwrap();
        let missing = b.load("copy", "sm_89").unwrap_err();
        assert!(
            missing.contains("has no copy/sm_89; it has: copy/sm_90"),
            "{missing}"
        );
        fs::write(dir.join("copy.sm_90.cubin"), b"tampered").unwrap();
        assert!(b
            .load("copy", "sm_90")
            .unwrap_err()
            .contains("does not match the index"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_without_an_index_says_how_to_make_one() {
        let err = Baseline::open(&scratch("empty")).err().unwrap();
        assert!(err.contains("--dump-artifacts"), "{err}");
    }

    #[test]
    fn this_build_embeds_artifacts_whose_hashes_match_their_bytes() {
        match embedded() {
            Ok(list) => {
                assert!(!list.is_empty());
                for a in &list {
                    assert_eq!(sha256_hex(a.bytes), a.record.sha256, "{}", a.record.file);
                }
            }
            Err(e) => eprintln!("SKIPPED: this build has no kernels ({e})"),
        }
    }
}
