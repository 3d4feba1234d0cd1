//! A content-addressed artifact cache.
//!
//! Two levels, as in ccache's direct mode. A *manifest* key (toolkit, tool versions, arch,
//! output kind, flags, source path) names the dependency list the last compile of that job
//! reported. The *object* key hashes the manifest key with the contents of every file on that
//! list, so an edited header changes the object key of exactly the jobs that include it.
//! Objects are folders holding the artifact and everything derived from it.

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
        dir.join("COMPLETE").is_file().then_some((dir, deps))
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
        fs::write(scratch.join("COMPLETE"), b"")?;
        let dir = self.object_dir(&key);
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        if fs::rename(scratch, &dir).is_err() {
            // Another build may have committed the same object concurrently: keep theirs.
            if !dir.join("COMPLETE").is_file() {
                return Err(io::Error::other(format!(
                    "could not store {}",
                    dir.display()
                )));
            }
            let _ = fs::remove_dir_all(scratch);
        }
        let list: String = deps.iter().map(|d| format!("{}\n", d.display())).collect();
        fs::write(self.manifest_path(manifest_key), list)?;
        Ok(dir)
    }
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
    fn key_of_is_unambiguous() {
        assert_ne!(key_of(&["ab", "c"]), key_of(&["a", "bc"]));
    }
}
