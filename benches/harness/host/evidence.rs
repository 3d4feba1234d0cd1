//! The evidence folder of one bench run: a unique folder per run (never overwritten), its
//! files, a STATUS marker, and a `SHA256SUMS` manifest that `sha256sum -c` verifies.

use sha2::{Digest, Sha256};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

pub const MANIFEST: &str = "SHA256SUMS";

/// `20261130T114800Z` for a time since the epoch (UTC, proleptic Gregorian calendar).
pub fn utc_stamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (H. Hinnant): days since 1970-01-01 to year, month, day.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// What a finished run was: clean, or kept and marked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStatus {
    /// Why the run measured the wrong thing (a failed check, a wrong shape, a harness error).
    pub wrong: Vec<String>,
    /// Some reading ran a PTX fallback route.
    pub fallback: bool,
}

impl RunStatus {
    pub fn is_ok(&self) -> bool {
        self.wrong.is_empty() && !self.fallback
    }

    /// Appended to the folder name of a run that is not clean.
    pub fn suffix(&self) -> &'static str {
        match (self.wrong.is_empty(), self.fallback) {
            (true, false) => "",
            (true, true) => "-FALLBACK",
            (false, false) => "-WRONG",
            (false, true) => "-WRONG-FALLBACK",
        }
    }

    /// The STATUS file: `OK`, or each reason on its own line.
    pub fn text(&self) -> String {
        if self.is_ok() {
            return "OK\n".into();
        }
        let mut s = String::new();
        if self.fallback {
            s += "FALLBACK: a reading ran the PTX JIT route, not a cubin for this device\n";
        }
        for w in &self.wrong {
            s += &format!("WRONG: {w}\n");
        }
        s
    }
}

/// Creates `base`, or `base-2`, `base-3`, ... whichever does not exist yet. `create_dir`
/// fails on an existing folder, so two runs can never share one.
fn create_unique(base: &Path) -> io::Result<PathBuf> {
    for n in 1u32.. {
        let candidate = if n == 1 {
            base.to_path_buf()
        } else {
            PathBuf::from(format!("{}-{n}", base.display()))
        };
        match fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("u32 folder suffixes exhausted")
}

/// Renames `from` to `base` (or `base-2`, ...) without replacing anything.
fn rename_unique(from: &Path, base: &Path) -> io::Result<PathBuf> {
    for n in 1u32.. {
        let candidate = if n == 1 {
            base.to_path_buf()
        } else {
            PathBuf::from(format!("{}-{n}", base.display()))
        };
        if candidate.exists() {
            continue;
        }
        fs::rename(from, &candidate)?;
        return Ok(candidate);
    }
    unreachable!("u32 folder suffixes exhausted")
}

pub struct EvidenceDir {
    dir: PathBuf,
}

impl EvidenceDir {
    /// `root/<bench>-<utc stamp>`, made unique.
    pub fn create(root: &Path, bench: &str, now: SystemTime) -> io::Result<EvidenceDir> {
        fs::create_dir_all(root)?;
        let dir = create_unique(&root.join(format!("{bench}-{}", utc_stamp(now))))?;
        Ok(EvidenceDir { dir })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes one file directly inside the folder. Names are plain file names.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> io::Result<()> {
        if name.is_empty()
            || name.contains(['/', '\\'])
            || name.starts_with('.')
            || name == MANIFEST
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a plain evidence file name: {name:?}"),
            ));
        }
        fs::write(self.dir.join(name), bytes)
    }

    /// Writes STATUS, renames a run that is not clean to carry its marker, and seals the
    /// folder with `SHA256SUMS`. Returns the final path.
    pub fn finish(self, status: &RunStatus) -> io::Result<PathBuf> {
        self.write("STATUS", status.text())?;
        let dir = if status.is_ok() {
            self.dir
        } else {
            rename_unique(
                &self.dir,
                &PathBuf::from(format!("{}{}", self.dir.display(), status.suffix())),
            )?
        };
        write_manifest(&dir)?;
        Ok(dir)
    }
}

/// Every file under `dir` (recursively), as sorted `/`-separated relative paths.
fn files_under(dir: &Path) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let rel_child = rel.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                stack.push(rel_child);
            } else {
                out.push(rel_child.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `SHA256SUMS` in `sha256sum`'s own format (`<hex>  <path>`) over every other file.
pub fn write_manifest(dir: &Path) -> io::Result<()> {
    let mut manifest = String::new();
    for rel in files_under(dir)?.into_iter().filter(|r| r != MANIFEST) {
        manifest += &format!("{}  {rel}\n", sha256_hex(&fs::read(dir.join(&rel))?));
    }
    fs::write(dir.join(MANIFEST), manifest)
}

/// Checks a sealed folder: every listed file matches, and no file is missing from the list.
pub fn verify(dir: &Path) -> Result<(), Vec<String>> {
    let manifest =
        fs::read_to_string(dir.join(MANIFEST)).map_err(|e| vec![format!("{MANIFEST}: {e}")])?;
    let mut problems = Vec::new();
    let mut listed = Vec::new();
    for line in manifest.lines() {
        let Some((hex, rel)) = line.split_once("  ") else {
            problems.push(format!("malformed manifest line: {line:?}"));
            continue;
        };
        listed.push(rel.to_string());
        match fs::read(dir.join(rel)) {
            Ok(bytes) if sha256_hex(&bytes) == hex => {}
            Ok(_) => problems.push(format!("{rel}: checksum mismatch")),
            Err(e) => problems.push(format!("{rel}: {e}")),
        }
    }
    match files_under(dir) {
        Ok(files) => {
            for f in files
                .into_iter()
                .filter(|f| f != MANIFEST && !listed.contains(f))
            {
                problems.push(format!("{f}: not in {MANIFEST}"));
            }
        }
        Err(e) => problems.push(e.to_string()),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::Duration;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cubins-evidence-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn utc_stamps_match_known_dates() {
        assert_eq!(utc_stamp(UNIX_EPOCH), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC (a leap day in a century leap year).
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(951_827_696)),
            "20000229T123456Z"
        );
        // 2026-11-30 11:48:00 UTC.
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(1_796_039_280)),
            "20261130T114800Z"
        );
    }

    #[test]
    fn runs_at_the_same_second_get_distinct_folders() {
        let root = scratch("unique");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_039_280);
        let a = EvidenceDir::create(&root, "copy_ceiling", t).unwrap();
        let b = EvidenceDir::create(&root, "copy_ceiling", t).unwrap();
        assert_eq!(a.path(), root.join("copy_ceiling-20261130T114800Z"));
        assert_eq!(b.path(), root.join("copy_ceiling-20261130T114800Z-2"));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn file_names_cannot_escape_the_folder_or_forge_the_manifest() {
        let root = scratch("names");
        let d = EvidenceDir::create(&root, "b", UNIX_EPOCH).unwrap();
        for bad in ["../x", "a/b", "", ".hidden", MANIFEST] {
            assert!(d.write(bad, "x").is_err(), "{bad}");
        }
        assert!(d.write("ok.json", "{}").is_ok());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn sealed_folder_verifies_and_detects_tampering() {
        let root = scratch("seal");
        let d = EvidenceDir::create(&root, "b", UNIX_EPOCH).unwrap();
        d.write("samples.json", "[1,2,3]").unwrap();
        d.write("summary.md", "# ok\n").unwrap();
        let dir = d.finish(&RunStatus::default()).unwrap();
        assert_eq!(fs::read_to_string(dir.join("STATUS")).unwrap(), "OK\n");
        assert_eq!(verify(&dir), Ok(()));
        let manifest = fs::read_to_string(dir.join(MANIFEST)).unwrap();
        assert_eq!(manifest.lines().count(), 3, "{manifest}");

        if Command::new("sha256sum").arg("--version").output().is_ok() {
            let out = Command::new("sha256sum")
                .args(["-c", MANIFEST])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "sha256sum -c: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        } else {
            eprintln!(
                "SKIPPED: sha256sum not installed; the manifest was checked by verify() only"
            );
        }

        fs::write(dir.join("summary.md"), "# edited\n").unwrap();
        fs::write(dir.join("extra.txt"), "sneaked in").unwrap();
        let problems = verify(&dir).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("summary.md: checksum mismatch")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("extra.txt: not in SHA256SUMS")),
            "{problems:?}"
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn wrong_runs_are_kept_marked_and_never_overwrite_each_other() {
        let root = scratch("wrong");
        let status = RunStatus {
            wrong: vec!["shape 7 gave dst != src".into()],
            fallback: true,
        };
        let mut finished = Vec::new();
        for _ in 0..2 {
            let d = EvidenceDir::create(&root, "b", UNIX_EPOCH).unwrap();
            d.write("samples.json", "[]").unwrap();
            finished.push(d.finish(&status).unwrap());
        }
        assert_eq!(finished[0], root.join("b-19700101T000000Z-WRONG-FALLBACK"));
        assert_ne!(finished[0], finished[1]);
        for dir in &finished {
            let text = fs::read_to_string(dir.join("STATUS")).unwrap();
            assert!(
                text.contains("WRONG: shape 7 gave dst != src") && text.contains("FALLBACK"),
                "{text}"
            );
            assert_eq!(verify(dir), Ok(()));
        }
        fs::remove_dir_all(&root).unwrap();
    }
}
