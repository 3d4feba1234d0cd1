//! A content-addressed artifact cache.
//!
//! Two levels, as in ccache's direct mode. A *manifest* key (toolkit, tool versions, arch,
//! output kind, flags, source path) names the dependency list the last compile of that job
//! reported. The *object* key hashes the manifest key with the contents of every file on that
//! list, so an edited header changes the object key of exactly the jobs that include it.
//! Objects are folders holding the artifact and everything derived from it.
//!
//! Every build of a workspace shares one cache ([`DEFAULT_DIR_NAME`] in cargo's target
//! directory), builds running at once included: objects and manifests are written under
//! `tmp/` and renamed into place, and a complete object is never replaced.

use sha2::{Digest, Sha256};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn sha256_file(path: &Path) -> io::Result<String> {
    Ok(sha256_hex(&fs::read(path)?))
}

/// Hashes a list of strings unambiguously (length-prefixed).
pub fn key_of(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex(&h.finalize())
}

/// The default cache's folder in cargo's target directory: one cache for every build of the
/// workspace (each profile, feature set, target, and the `cubins-inspect` CLI).
pub const DEFAULT_DIR_NAME: &str = "cubins-cache";

/// Overrides the default cache folder.
pub const DIR_VAR: &str = "CUBINS_CACHE_DIR";

/// `CUBINS_CACHE_DIR` if set and not empty.
pub fn dir_override(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env(DIR_VAR).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The cache of the `cubins-inspect` CLI and xtask: `CUBINS_CACHE_DIR`, else the default
/// folder in `target_dir`.
pub fn dir_for_target_dir(env: &dyn Fn(&str) -> Option<String>, target_dir: &Path) -> PathBuf {
    dir_override(env).unwrap_or_else(|| target_dir.join(DEFAULT_DIR_NAME))
}

/// The cache of a build script: `CUBINS_CACHE_DIR`, else the default folder in the target
/// directory that holds `out_dir`, else (an `OUT_DIR` of unknown shape) `out_dir/cache`.
pub fn dir_for_build_script(env: &dyn Fn(&str) -> Option<String>, out_dir: &Path) -> PathBuf {
    dir_override(env).unwrap_or_else(|| {
        target_dir_of_out_dir(out_dir, env("TARGET").as_deref())
            .map(|t| t.join(DEFAULT_DIR_NAME))
            .unwrap_or_else(|| out_dir.join("cache"))
    })
}

/// The target directory above a build script's `OUT_DIR`, which cargo lays out as
/// `<target dir>/[<target triple>/]<profile>/build/<package>-<hash>/out`. `target` is the
/// build's `TARGET`: a `--target` build nests the profile folder in a folder of that name.
pub fn target_dir_of_out_dir(out_dir: &Path, target: Option<&str>) -> Option<PathBuf> {
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(str::to_string);
    let unit = out_dir
        .parent()
        .filter(|_| name(out_dir).as_deref() == Some("out"))?;
    let build = unit
        .parent()
        .filter(|_| name(unit).is_some_and(|n| n.contains('-')))?;
    let profile = build
        .parent()
        .filter(|_| name(build).as_deref() == Some("build"))?;
    let above = profile.parent()?;
    let target_dir = match (name(above), target) {
        (Some(n), Some(t)) if n == t => above.parent()?,
        _ => above,
    };
    (!target_dir.as_os_str().is_empty()).then(|| target_dir.to_path_buf())
}

#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
}

impl Cache {
    pub fn new(root: PathBuf) -> io::Result<Cache> {
        fs::create_dir_all(root.join("manifests"))?;
        fs::create_dir_all(root.join("objects"))?;
        Ok(Cache { root })
    }

    fn manifest_path(&self, manifest_key: &str) -> PathBuf {
        self.root
            .join("manifests")
            .join(format!("{manifest_key}.deps"))
    }

    pub fn object_dir(&self, object_key: &str) -> PathBuf {
        self.root.join("objects").join(object_key)
    }

    /// The object key for `manifest_key` given its dependency list, or `None` if a
    /// dependency cannot be read (deleted header: recompile).
    pub fn object_key(manifest_key: &str, deps: &[PathBuf]) -> Option<String> {
        let mut h = Sha256::new();
        h.update(manifest_key.as_bytes());
        for d in deps {
            let bytes = fs::read(d).ok()?;
            let p = d.to_string_lossy();
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
            h.update(Sha256::digest(&bytes));
        }
        Some(hex(&h.finalize()))
    }

    /// Looks a job up: `Some(object_dir)` when its last dependency list still hashes to a
    /// complete object.
    pub fn lookup(&self, manifest_key: &str) -> Option<(PathBuf, Vec<PathBuf>)> {
        let text = fs::read_to_string(self.manifest_path(manifest_key)).ok()?;
        let deps: Vec<PathBuf> = text
            .lines()
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect();
        let key = Cache::object_key(manifest_key, &deps)?;
        let dir = self.object_dir(&key);
        is_complete(&dir).then_some((dir, deps))
    }

    /// A fresh scratch folder for a job to write into before [`Cache::commit`].
    pub fn scratch(&self, manifest_key: &str) -> io::Result<PathBuf> {
        let dir = self
            .root
            .join("tmp")
            .join(format!("{manifest_key}-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Moves a finished scratch folder into the object store and records its dependencies.
    /// Another process may be reading the same object, so a complete one is never replaced:
    /// if it is already there (committed by a concurrent build), ours is dropped.
    pub fn commit(
        &self,
        manifest_key: &str,
        scratch: &Path,
        deps: &[PathBuf],
    ) -> io::Result<PathBuf> {
        let key = Cache::object_key(manifest_key, deps).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "a dependency vanished during the compile",
            )
        })?;
        fs::write(scratch.join(COMPLETE), b"")?;
        let dir = self.object_dir(&key);
        self.place(scratch, &dir)?;
        let list: String = deps.iter().map(|d| format!("{}\n", d.display())).collect();
        self.write_atomically(&self.manifest_path(manifest_key), list.as_bytes())?;
        Ok(dir)
    }

    /// Renames `scratch` to `dir` unless a complete `dir` exists (then `scratch` goes).
    fn place(&self, scratch: &Path, dir: &Path) -> io::Result<()> {
        if !is_complete(dir) && fs::rename(scratch, dir).is_ok() {
            return Ok(());
        }
        if !is_complete(dir) {
            // Objects only appear complete (by rename), so this one was left by hand: set it
            // aside and retry once.
            let stale = self.tmp_path("stale");
            fs::rename(dir, &stale)?;
            let _ = fs::remove_dir_all(&stale);
            if fs::rename(scratch, dir).is_ok() {
                return Ok(());
            }
        }
        if !is_complete(dir) {
            return Err(io::Error::other(format!(
                "could not store {}",
                dir.display()
            )));
        }
        // Another build committed the same object first: keep theirs, readers may hold it.
        let _ = fs::remove_dir_all(scratch);
        Ok(())
    }

    /// A fresh name in the cache's `tmp/` (on the same file system, so renames are atomic).
    fn tmp_path(&self, what: &str) -> PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.root
            .join("tmp")
            .join(format!("{what}-{}-{n}", std::process::id()))
    }

    /// Writes `path` through a temporary file and a rename, so readers see the old contents
    /// or the new ones, never a partial file.
    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let tmp = self.tmp_path("manifest");
        fs::create_dir_all(self.root.join("tmp"))?;
        fs::write(&tmp, bytes)?;
        fs::rename(&tmp, path).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }
}

/// Marks an object folder whose every file is written.
const COMPLETE: &str = "COMPLETE";

fn is_complete(dir: &Path) -> bool {
    dir.join(COMPLETE).is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("cubins-cache-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn object_key_follows_dependency_contents() {
        let d = tmpdir("okey");
        let h = d.join("a.h");
        fs::write(&h, "int a;").unwrap();
        let k1 = Cache::object_key("m", std::slice::from_ref(&h)).unwrap();
        fs::write(&h, "int b;").unwrap();
        let k2 = Cache::object_key("m", std::slice::from_ref(&h)).unwrap();
        assert_ne!(k1, k2);
        assert_ne!(
            k2,
            Cache::object_key("m2", std::slice::from_ref(&h)).unwrap()
        );
        fs::remove_file(&h).unwrap();
        assert!(Cache::object_key("m", &[h]).is_none());
    }

    #[test]
    fn lookup_after_commit_then_miss_after_edit() {
        let d = tmpdir("commit");
        let cache = Cache::new(d.join("cache")).unwrap();
        let dep = d.join("x.cu");
        fs::write(&dep, "1").unwrap();
        assert!(cache.lookup("k").is_none());
        let s = cache.scratch("k").unwrap();
        fs::write(s.join("artifact"), "bytes").unwrap();
        let obj = cache.commit("k", &s, std::slice::from_ref(&dep)).unwrap();
        let (found, deps) = cache.lookup("k").unwrap();
        assert_eq!(found, obj);
        assert_eq!(deps, vec![dep.clone()]);
        fs::write(&dep, "2").unwrap();
        assert!(cache.lookup("k").is_none());
    }

    #[test]
    fn target_dir_of_every_out_dir_layout() {
        let t = |out: &str, target: Option<&str>| {
            target_dir_of_out_dir(Path::new(out), target).map(|p| p.display().to_string())
        };
        let host = Some("x86_64-unknown-linux-gnu");
        let want = Some("/w/target".to_string());
        assert_eq!(t("/w/target/debug/build/cubins-0123abcd/out", host), want);
        assert_eq!(t("/w/target/release/build/cubins-0123abcd/out", host), want);
        assert_eq!(
            t("/w/target/my-profile/build/cubins-0123abcd/out", host),
            want
        );
        assert_eq!(
            t(
                "/w/target/x86_64-unknown-linux-gnu/debug/build/cubins-0123abcd/out",
                host
            ),
            want
        );
        assert_eq!(
            t(
                "/w/target/aarch64-unknown-linux-gnu/release/build/cubins-9/out",
                Some("aarch64-unknown-linux-gnu")
            ),
            want
        );
        assert_eq!(t("/w/target/debug/build/cubins-0123abcd/out", None), want);
        // Shapes cargo does not make: no guess.
        assert_eq!(
            t("/w/target/debug/build/cubins-0123abcd/elsewhere", host),
            None
        );
        assert_eq!(t("/w/target/debug/nobuild/cubins-0123abcd/out", host), None);
        assert_eq!(t("/w/target/debug/build/cubins/out", host), None);
        assert_eq!(t("build/cubins-1/out", None), None);
    }

    #[test]
    fn cache_dir_defaults_to_the_target_dir_and_the_variable_wins() {
        let out = Path::new("/w/target/x86_64-unknown-linux-gnu/release/build/cubins-1/out");
        let env_of = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let triple = env_of(&[("TARGET", "x86_64-unknown-linux-gnu")]);
        assert_eq!(
            dir_for_build_script(&triple, out),
            PathBuf::from("/w/target/cubins-cache")
        );
        let both = env_of(&[("TARGET", "x86_64-unknown-linux-gnu"), (DIR_VAR, "/c")]);
        assert_eq!(dir_for_build_script(&both, out), PathBuf::from("/c"));
        let empty = env_of(&[(DIR_VAR, "")]);
        assert_eq!(
            dir_for_target_dir(&empty, Path::new("/w/target")),
            PathBuf::from("/w/target/cubins-cache")
        );
        let odd = Path::new("/somewhere/out-dir");
        assert_eq!(dir_for_build_script(&empty, odd), odd.join("cache"));
    }

    #[test]
    fn a_second_commit_of_an_object_keeps_the_first() {
        let d = tmpdir("twice");
        let cache = Cache::new(d.join("cache")).unwrap();
        let dep = d.join("x.cu");
        fs::write(&dep, "1").unwrap();
        let first = cache.scratch("k").unwrap();
        fs::write(first.join("artifact"), "first").unwrap();
        let obj = cache
            .commit("k", &first, std::slice::from_ref(&dep))
            .unwrap();
        // Another build commits the same object while readers may use the first.
        let second = d.join("cache/tmp/k-other-process");
        fs::create_dir_all(&second).unwrap();
        fs::write(second.join("artifact"), "second").unwrap();
        let again = cache
            .commit("k", &second, std::slice::from_ref(&dep))
            .unwrap();
        assert_eq!(again, obj);
        assert_eq!(fs::read_to_string(obj.join("artifact")).unwrap(), "first");
        assert!(!second.exists(), "the losing scratch folder is dropped");
        assert_eq!(cache.lookup("k").unwrap().0, obj);
    }

    #[test]
    fn an_incomplete_object_folder_is_replaced() {
        let d = tmpdir("stale");
        let cache = Cache::new(d.join("cache")).unwrap();
        let dep = d.join("x.cu");
        fs::write(&dep, "1").unwrap();
        let key = Cache::object_key("k", std::slice::from_ref(&dep)).unwrap();
        fs::create_dir_all(cache.object_dir(&key)).unwrap();
        fs::write(cache.object_dir(&key).join("artifact"), "half").unwrap();
        let s = cache.scratch("k").unwrap();
        fs::write(s.join("artifact"), "whole").unwrap();
        let obj = cache.commit("k", &s, std::slice::from_ref(&dep)).unwrap();
        assert_eq!(fs::read_to_string(obj.join("artifact")).unwrap(), "whole");
        assert!(cache.lookup("k").is_some());
    }

    #[test]
    fn key_of_is_unambiguous() {
        assert_ne!(key_of(&["ab", "c"]), key_of(&["a", "bc"]));
    }
}
