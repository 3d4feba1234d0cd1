//! Finding and reading finished runs under a results root, for `run_bench`'s tables.

use super::evidence;
use super::reading::Reading;
use std::fs;
use std::path::{Path, PathBuf};

/// A finished run read back from its folder.
pub struct Run {
    pub dir: PathBuf,
    pub readings: Vec<Reading>,
    /// The STATUS file's first line (`OK`, `WRONG: ...`, `FALLBACK: ...`).
    pub status: String,
    /// `Ok` when SHA256SUMS verifies.
    pub manifest: Result<(), Vec<String>>,
}

/// Run folders of `bench` (`<bench>-<utc stamp>[-N][-WRONG...]`), oldest first. UTC stamps
/// sort as text, so the last one is the newest.
pub fn runs_of(root: &Path, bench: &str) -> Result<Vec<PathBuf>, String> {
    let entries = fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let prefix = format!("{bench}-");
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // The character after the prefix is the first digit of a year, so `copy` does not
            // match `copy_ceiling-...`.
            name.strip_prefix(&prefix)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Bench names with at least one run under `root`, sorted.
pub fn benches_under(root: &Path) -> Result<Vec<String>, String> {
    let entries = fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("readings.json").is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // `<bench>-YYYYMMDDTHHMMSSZ...`: the bench is everything before the stamp.
            let at = name
                .match_indices('-')
                .map(|(i, _)| i)
                .find(|&i| name[i + 1..].starts_with(|c: char| c.is_ascii_digit()))?;
            Some(name[..at].to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

pub fn load(dir: &Path) -> Result<Run, String> {
    let path = dir.join("readings.json");
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let readings = serde_json::from_value(
        json.get("readings")
            .cloned()
            .unwrap_or(serde_json::Value::Array(Vec::new())),
    )
    .map_err(|e| format!("{}: readings: {e}", path.display()))?;
    let status = fs::read_to_string(dir.join("STATUS"))
        .map(|s| s.lines().next().unwrap_or("").to_string())
        .unwrap_or_else(|_| "no STATUS file".into());
    Ok(Run {
        dir: dir.to_path_buf(),
        readings,
        status,
        manifest: evidence::verify(dir),
    })
}

#[cfg(test)]
mod tests {
    use super::super::evidence::{EvidenceDir, RunStatus};
    use super::super::fixtures::reading;
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cubins-runs-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn write_run(root: &Path, bench: &str, secs: u64, labels: &[&str]) -> PathBuf {
        let d = EvidenceDir::create(root, bench, UNIX_EPOCH + Duration::from_secs(secs)).unwrap();
        let readings: Vec<_> = labels
            .iter()
            .map(|l| reading(l, &[1.0, 2.0], Some(&[2.0, 2.0])))
            .collect();
        d.write(
            "readings.json",
            serde_json::to_string(&serde_json::json!({ "readings": readings })).unwrap(),
        )
        .unwrap();
        d.finish(&RunStatus::default()).unwrap()
    }

    #[test]
    fn newest_run_of_a_bench_is_last_and_prefixes_do_not_collide() {
        let root = scratch("latest");
        write_run(&root, "copy", 100, &["a"]);
        let newer = write_run(&root, "copy", 200, &["b"]);
        write_run(&root, "copy_ceiling", 300, &["c"]);
        let runs = runs_of(&root, "copy").unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs.last(), Some(&newer));
        assert_eq!(benches_under(&root).unwrap(), vec!["copy", "copy_ceiling"]);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_run_reads_back_with_its_readings_status_and_manifest() {
        let root = scratch("load");
        let dir = write_run(&root, "gemm", 100, &["4096^3", "8192^3"]);
        let run = load(&dir).unwrap();
        let labels: Vec<&str> = run.readings.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["4096^3", "8192^3"]);
        assert_eq!(
            run.readings[0]
                .comparator
                .as_ref()
                .unwrap()
                .comparison
                .speed_ratio,
            2.0 / 1.5
        );
        assert_eq!(run.status, "OK");
        assert_eq!(run.manifest, Ok(()));
        fs::write(dir.join("readings.json"), "{}").unwrap();
        assert!(load(&dir).unwrap().manifest.is_err());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_missing_root_is_a_clear_error() {
        let e = runs_of(Path::new("/nonexistent/cubins-results"), "copy").unwrap_err();
        assert!(e.starts_with("/nonexistent/cubins-results: "), "{e}");
    }
}
