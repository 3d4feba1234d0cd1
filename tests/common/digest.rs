//! FNV-1a 64 digests of kernel outputs and the recorded digest files (`tests/digests/*.txt`).
//!
//! A digest file holds one `HASH <key> <16 hex digits>` line per output, `#` comments and
//! blank lines. The recorder tests print such lines; pasting them into the file records
//! them. The gate compares every digest it computes against the file and fails on a
//! difference and on a key the file does not have.

use std::collections::BTreeMap;
use std::path::Path;

/// FNV-1a, 64-bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The line a recorder prints for `key`.
pub fn hash_line(key: &str, digest: u64) -> String {
    format!("HASH {key} {digest:016x}")
}

/// Recorded digests by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DigestFile {
    pub entries: BTreeMap<String, u64>,
}

impl DigestFile {
    /// Parses a digest file; a malformed line or a key recorded twice is an error naming
    /// the line.
    pub fn parse(text: &str) -> Result<DigestFile, String> {
        let mut entries = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [tag, key, hex] = fields[..] else {
                return Err(format!(
                    "line {}: expected `HASH <key> <hex>`, got `{line}`",
                    i + 1
                ));
            };
            if tag != "HASH" {
                return Err(format!("line {}: expected `HASH`, got `{tag}`", i + 1));
            }
            if hex.len() != 16 {
                return Err(format!(
                    "line {}: digest `{hex}` is not 16 hex digits",
                    i + 1
                ));
            }
            let value = u64::from_str_radix(hex, 16)
                .map_err(|e| format!("line {}: digest `{hex}`: {e}", i + 1))?;
            if entries.insert(key.to_string(), value).is_some() {
                return Err(format!("line {}: key `{key}` is recorded twice", i + 1));
            }
        }
        Ok(DigestFile { entries })
    }

    pub fn load(path: &Path) -> Result<DigestFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        DigestFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Compares a computed digest with the recorded one. Missing and different are both
    /// errors; the message says how to record.
    pub fn check(&self, key: &str, got: u64, file: &str) -> Result<(), String> {
        match self.entries.get(key) {
            None => Err(format!(
                "NO DIGEST RECORDED for `{key}` in {file} (computed {got:016x}); run the recorder \
                 (`--ignored record_`) on the GPU and add its line: {}",
                hash_line(key, got)
            )),
            Some(&want) if want != got => Err(format!(
                "digest of `{key}` is {got:016x}, {file} records {want:016x}: the output bits changed"
            )),
            Some(_) => Ok(()),
        }
    }
}
