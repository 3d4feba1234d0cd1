//! A content-addressed artifact cache that verifies everything it returns.
//!
//! Two levels, as in ccache's direct mode. A *manifest* key (toolkit, tool versions, arch,
//! output kind, flags, the source's name in its kernel folder) names the dependency list the
//! last compile of that job reported. The *object* key hashes the manifest key with the
//! contents of every file on that list, so an edited header changes the object key of exactly
//! the jobs that include it.
//!
//! Layout under the cache folder:
//! - `manifests/<manifest key>.deps`: `cubins-deps-v2 <SHA-256 of the rest>`, then one
//!   dependency per line;
//! - `objects/<object key>/`: the artifact, everything derived from it, and [`SUMS`], the
//!   SHA-256 of each of those files (`sha256sum` format), written last;
//! - `tmp/`: scratch folders and temporaries, renamed into place when complete.
//!
//! Every read checks every file of an entry against its sums and the dependency list
//! against its checksum; a corrupt entry is evicted and reported ([`Lookup::Corrupt`]) so the
//! caller compiles again, and never returned. Every build of a workspace shares one cache
//! ([`DEFAULT_DIR_NAME`] in cargo's target directory), builds running at once included: an
//! object appears whole by one rename and a complete, intact object is never replaced.
//! [`Cache::clean_temporaries`] deletes what killed compiles leave in `tmp/`, and
//! [`Cache::evict`] keeps the store within its [`Limits`].

use sha2::{Digest, Sha256};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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

/// The file in every object that lists the SHA-256 of each of its other files, in
/// `sha256sum` format (`sha256sum -c SHA256SUMS` checks an entry by hand).
pub const SUMS: &str = "SHA256SUMS";

/// First word of a dependency list; the second is the SHA-256 of the lines after it.
const MANIFEST_HEADER: &str = "cubins-deps-v2";

/// A temporary not modified for this long belongs to a process that died: no compile of one
/// job takes an hour, so a live one is never mistaken for a leftover.
pub const STALE_TEMPORARY_AGE: Duration = Duration::from_secs(60 * 60);

/// Objects used this recently are never evicted: a build running now may still need them.
pub const RECENTLY_USED: Duration = Duration::from_secs(10 * 60);

/// Caps the store's size (`10G`, `500M`, bytes, or `off`).
pub const MAX_SIZE_VAR: &str = "CUBINS_CACHE_MAX_SIZE";

/// Evicts objects unused for longer than this (`30d`, `12h`, `90m`, or `off`).
pub const MAX_AGE_VAR: &str = "CUBINS_CACHE_MAX_AGE";

/// About ten builds of every kernel for every supported arch.
pub const DEFAULT_MAX_SIZE: u64 = 5 << 30;

pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// How large and how old the store may grow; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: Option<u64>,
    pub max_age: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: Some(DEFAULT_MAX_SIZE),
            max_age: Some(DEFAULT_MAX_AGE),
        }
    }
}

impl Limits {
    /// [`MAX_SIZE_VAR`] and [`MAX_AGE_VAR`] where set and not empty, else the defaults.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Limits, LimitError> {
        let set = |var: &'static str| env(var).filter(|v| !v.trim().is_empty());
        let mut limits = Limits::default();
        if let Some(v) = set(MAX_SIZE_VAR) {
            limits.max_bytes = parse_limit(&v, parse_size).ok_or(LimitError {
                var: MAX_SIZE_VAR,
                value: v,
            })?;
        }
        if let Some(v) = set(MAX_AGE_VAR) {
            limits.max_age = parse_limit(&v, parse_age).ok_or(LimitError {
                var: MAX_AGE_VAR,
                value: v,
            })?;
        }
        Ok(limits)
    }
}

/// A limit variable whose value is neither a limit nor `off`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitError {
    pub var: &'static str,
    pub value: String,
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let expected = if self.var == MAX_AGE_VAR {
            "an age such as 30d, 12h or 90m"
        } else {
            "a size such as 5G, 500M or 1048576 (bytes)"
        };
        write!(
            f,
            "{}=`{}`: expected {expected}, or `off`",
            self.var, self.value
        )
    }
}

impl std::error::Error for LimitError {}

/// `Some(None)` for `off`, `Some(Some(limit))` for a limit, `None` for neither.
fn parse_limit<T>(value: &str, parse: fn(&str) -> Option<T>) -> Option<Option<T>> {
    let v = value.trim().to_ascii_lowercase();
    if v == "off" {
        return Some(None);
    }
    parse(&v).map(Some)
}

/// A number with a unit: `f(number, unit)`; the unit is the letters after the number.
fn number_and_unit(v: &str) -> Option<(f64, &str)> {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let n: f64 = v[..split].parse().ok()?;
    (n.is_finite() && n >= 0.0).then_some((n, v[split..].trim()))
}

/// `1048576`, `512K`, `500M`, `1.5G`, `2T` (binary units; `B`, `iB` accepted after them).
fn parse_size(v: &str) -> Option<u64> {
    let (n, unit) = number_and_unit(v)?;
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    Some((n * (1u64 << shift) as f64) as u64)
}

/// `45s`, `90m`, `12h`, `30d`, `2w`: a unit is required (a bare number could mean anything).
fn parse_age(v: &str) -> Option<Duration> {
    let (n, unit) = number_and_unit(v)?;
    let seconds = match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        "w" => 7.0 * 86400.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(n * seconds))
}

#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
    pub limits: Limits,
    /// What relative dependencies are relative to (a job's kernel folder): recorded so, one
    /// dependency list serves every checkout of the same sources (see the `portable` module).
    pub deps_base: PathBuf,
}

/// An object's files by name, with their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// A verified object: the bytes of its files, each equal to what [`SUMS`] records.
#[derive(Debug, Clone)]
pub struct Entry {
    pub dir: PathBuf,
    /// The job's dependency list.
    pub deps: Vec<PathBuf>,
    files: Files,
}

impl Entry {
    /// Takes the bytes of `name` out of the entry. Every name the lookup or commit required
    /// is there; any other name gives nothing.
    pub fn take(&mut self, name: &str) -> Vec<u8> {
        self.files
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, bytes)| std::mem::take(bytes))
            .unwrap_or_default()
    }
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    /// An intact entry, its files read and verified.
    Hit(Entry),
    /// No entry for the job's current dependencies.
    Miss,
    /// An entry failed verification and was evicted: compile again.
    Corrupt(Corruption),
}

/// A damaged entry or dependency list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    /// The object folder or manifest file.
    pub path: PathBuf,
    pub problem: Problem,
}

impl std::fmt::Display for Corruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

/// How an entry failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A file the entry must hold is gone.
    Missing(String),
    /// A file the job needs is not listed in [`SUMS`].
    Unlisted(String),
    /// A file's contents differ from the SHA-256 [`SUMS`] records.
    Mismatch(String),
    Unreadable {
        file: String,
        error: String,
    },
    /// A line of [`SUMS`] is not `<sha256>  <file>`.
    BadSums {
        line: usize,
    },
    /// The dependency list is not a `cubins-deps-v2` list or does not match its checksum.
    BadManifest,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Missing(file) => write!(f, "{file} is missing"),
            Problem::Unlisted(file) => write!(f, "{SUMS} does not list {file}"),
            Problem::Mismatch(file) => write!(f, "{file} does not match its SHA-256 in {SUMS}"),
            Problem::Unreadable { file, error } => write!(f, "{file} cannot be read: {error}"),
            Problem::BadSums { line } => write!(f, "{SUMS} line {line} is not `<sha256>  <file>`"),
            Problem::BadManifest => write!(
                f,
                "not a {MANIFEST_HEADER} dependency list, or it does not match its checksum"
            ),
        }
    }
}

/// A commit's result: the object now in the store (ours, or an intact one a concurrent build
/// committed first), and the corrupt object it replaced, if any.
#[derive(Debug)]
pub struct Committed {
    pub entry: Entry,
    pub replaced: Option<Corruption>,
}

/// What [`Cache::evict`] deleted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    pub entries: usize,
    pub bytes: u64,
}

/// A job's folder under `tmp/`, deleted when dropped unless it was committed.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
    committed: bool,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl Cache {
    /// Opens the cache at `root` (creating it) with the limits the environment sets; an
    /// unparsable limit is an `InvalidInput` error that names the variable.
    pub fn new(root: PathBuf) -> io::Result<Cache> {
        let limits = Limits::from_env(&|k| std::env::var(k).ok())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Cache::with_limits(root, limits)
    }

    pub fn with_limits(root: PathBuf, limits: Limits) -> io::Result<Cache> {
        for dir in ["manifests", "objects", "tmp"] {
            fs::create_dir_all(root.join(dir))?;
        }
        Ok(Cache {
            root,
            limits,
            deps_base: PathBuf::new(),
        })
    }

    fn manifest_path(&self, manifest_key: &str) -> PathBuf {
        self.root
            .join("manifests")
            .join(format!("{manifest_key}.deps"))
    }

    pub fn object_dir(&self, object_key: &str) -> PathBuf {
        self.root.join("objects").join(object_key)
    }

    /// This cache with relative dependencies read from `base`.
    pub fn with_deps_base(mut self, base: &Path) -> Cache {
        self.deps_base = base.to_path_buf();
        self
    }

    /// The object key for `manifest_key` given its dependency list, or `None` if a
    /// dependency cannot be read (deleted header: recompile).
    pub fn object_key(manifest_key: &str, deps: &[PathBuf]) -> Option<String> {
        Cache::object_key_in(Path::new(""), manifest_key, deps)
    }

    /// [`Cache::object_key`] with relative dependencies read from `base`; the key hashes
    /// their names as recorded.
    pub fn object_key_in(base: &Path, manifest_key: &str, deps: &[PathBuf]) -> Option<String> {
        let mut h = Sha256::new();
        h.update(manifest_key.as_bytes());
        for d in deps {
            let bytes = fs::read(base.join(d)).ok()?;
            let p = d.to_string_lossy();
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
            h.update(Sha256::digest(&bytes));
        }
        Some(hex(&h.finalize()))
    }

    /// Looks a job up: its dependency list, then the object those dependencies hash to,
    /// every file of it read and checked, `files` among them. A corrupt list or object is
    /// evicted before it is reported.
    pub fn lookup(&self, manifest_key: &str, files: &[&str]) -> Lookup {
        let manifest = self.manifest_path(manifest_key);
        let deps = match read_manifest(&manifest) {
            Ok(Some(deps)) => deps,
            Ok(None) => return Lookup::Miss,
            Err(problem) => {
                let _ = fs::remove_file(&manifest);
                return Lookup::Corrupt(Corruption {
                    path: manifest,
                    problem,
                });
            }
        };
        let Some(key) = Cache::object_key_in(&self.deps_base, manifest_key, &deps) else {
            return Lookup::Miss;
        };
        let dir = self.object_dir(&key);
        match read_entry(&dir, files) {
            Ok(Some(files)) => {
                // Eviction goes by last use.
                touch(&dir.join(SUMS));
                touch(&manifest);
                Lookup::Hit(Entry { dir, deps, files })
            }
            Ok(None) => Lookup::Miss,
            Err(problem) => {
                self.evict_dir(&dir);
                Lookup::Corrupt(Corruption { path: dir, problem })
            }
        }
    }

    /// A fresh scratch folder for a job to write into before [`Cache::commit`].
    pub fn scratch(&self) -> io::Result<Scratch> {
        loop {
            let dir = self.tmp_path("job");
            match fs::create_dir(&dir) {
                Ok(()) => {
                    return Ok(Scratch {
                        dir,
                        committed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                // Someone deleted `tmp/`.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    fs::create_dir_all(self.root.join("tmp"))?
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Seals `scratch` (keeps exactly `files`, writes their [`SUMS`]), moves it into the
    /// object store and records the job's dependencies. Another process may be reading the
    /// same object, so an intact one is never replaced: if one is there (a concurrent build
    /// committed it), ours is dropped and theirs returned; a corrupt one is evicted first.
    pub fn commit(
        &self,
        manifest_key: &str,
        mut scratch: Scratch,
        deps: &[PathBuf],
        files: &[&str],
    ) -> io::Result<Committed> {
        let key = Cache::object_key_in(&self.deps_base, manifest_key, deps).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "a dependency vanished during the compile",
            )
        })?;
        let ours = seal(scratch.path(), files)?;
        let dir = self.object_dir(&key);
        let (files, replaced) = self.place(&mut scratch, &dir, files, ours)?;
        self.write_atomically(
            &self.manifest_path(manifest_key),
            manifest_text(deps).as_bytes(),
        )?;
        Ok(Committed {
            entry: Entry {
                dir,
                deps: deps.to_vec(),
                files,
            },
            replaced,
        })
    }

    /// Renames `scratch` to `dir`, unless an intact `dir` is there: then its files are
    /// returned instead of ours.
    fn place(
        &self,
        scratch: &mut Scratch,
        dir: &Path,
        names: &[&str],
        ours: Files,
    ) -> io::Result<(Files, Option<Corruption>)> {
        let mut replaced = None;
        let mut last_error = None;
        for _ in 0..3 {
            match fs::rename(scratch.path(), dir) {
                Ok(()) => {
                    scratch.committed = true;
                    return Ok((ours, replaced));
                }
                Err(e) => last_error = Some(e),
            }
            match read_entry(dir, names) {
                Ok(Some(theirs)) => return Ok((theirs, replaced)),
                // Evicted meanwhile: try again.
                Ok(None) => {}
                Err(problem) => {
                    self.evict_dir(dir);
                    replaced = Some(Corruption {
                        path: dir.to_path_buf(),
                        problem,
                    });
                }
            }
        }
        let why = last_error.map_or_else(String::new, |e| format!(": {e}"));
        Err(io::Error::other(format!(
            "could not store {}{why}",
            dir.display()
        )))
    }

    /// Moves `dir` out of the store in one rename, then deletes it. A reader that finds its
    /// files gone midway takes it for a miss. False if it was not there.
    fn evict_dir(&self, dir: &Path) -> bool {
        let aside = self.tmp_path("evicted");
        if fs::rename(dir, &aside).is_err() {
            return false;
        }
        let _ = fs::remove_dir_all(&aside);
        true
    }

    /// A fresh name in the cache's `tmp/` (on the same file system, so renames are atomic).
    /// The clock part keeps names apart across processes that share a pid (containers).
    fn tmp_path(&self, what: &str) -> PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        self.root
            .join("tmp")
            .join(format!("{what}-{}-{n}-{nanos}", std::process::id()))
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

    /// Deletes what failed or killed processes left in `tmp/`: everything not modified for
    /// [`STALE_TEMPORARY_AGE`]. Returns how many it deleted.
    pub fn clean_temporaries(&self, now: SystemTime) -> usize {
        let Ok(list) = fs::read_dir(self.root.join("tmp")) else {
            return 0;
        };
        list.filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| age(p, now).is_some_and(|a| a > STALE_TEMPORARY_AGE))
            .filter(|p| remove_any(p))
            .count()
    }

    /// Applies the limits: deletes objects unused for longer than the maximum age, then the
    /// least recently used ones until the store fits in the maximum size, and dependency
    /// lists unused for the maximum age. Objects used since `keep_used_since` (the start of
    /// the build that calls it) or within [`RECENTLY_USED`] stay.
    pub fn evict(&self, now: SystemTime, keep_used_since: SystemTime) -> Evicted {
        let keep = now
            .checked_sub(RECENTLY_USED)
            .map_or(keep_used_since, |recent| recent.min(keep_used_since));
        let mut objects = self.objects();
        objects.sort_by_key(|o| o.last_use);
        let mut total: u64 = objects.iter().map(|o| o.bytes).sum();
        let mut evicted = Evicted::default();
        for o in objects.iter().filter(|o| o.last_use < keep) {
            let expired = self.limits.max_age.is_some_and(|max| {
                now.duration_since(o.last_use)
                    .is_ok_and(|unused| unused > max)
            });
            let over = self.limits.max_bytes.is_some_and(|max| total > max);
            if (expired || over) && self.evict_dir(&o.dir) {
                total -= o.bytes;
                evicted.entries += 1;
                evicted.bytes += o.bytes;
            }
        }
        if let Some(max) = self.limits.max_age {
            self.evict_manifests(now, max);
        }
        evicted
    }

    fn evict_manifests(&self, now: SystemTime, max_age: Duration) {
        let Ok(list) = fs::read_dir(self.root.join("manifests")) else {
            return;
        };
        for p in list.filter_map(|e| Some(e.ok()?.path())) {
            if age(&p, now).is_some_and(|a| a > max_age) {
                let _ = fs::remove_file(&p);
            }
        }
    }

    /// Every object folder with its size and last use (its [`SUMS`]'s modification time,
    /// which lookups refresh; the folder's own for one without sums).
    fn objects(&self) -> Vec<ObjectInfo> {
        let Ok(list) = fs::read_dir(self.root.join("objects")) else {
            return Vec::new();
        };
        list.filter_map(|e| ObjectInfo::of(e.ok()?.path()))
            .collect()
    }
}

struct ObjectInfo {
    dir: PathBuf,
    last_use: SystemTime,
    bytes: u64,
}

impl ObjectInfo {
    fn of(dir: PathBuf) -> Option<ObjectInfo> {
        let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        let last_use = modified(&dir.join(SUMS)).or_else(|| modified(&dir))?;
        let bytes = fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .sum();
        Some(ObjectInfo {
            dir,
            last_use,
            bytes,
        })
    }
}

fn age(path: &Path, now: SystemTime) -> Option<Duration> {
    let modified = fs::symlink_metadata(path).ok()?.modified().ok()?;
    now.duration_since(modified).ok()
}

fn remove_any(path: &Path) -> bool {
    if path.is_dir() {
        fs::remove_dir_all(path).is_ok()
    } else {
        fs::remove_file(path).is_ok()
    }
}

/// Marks `path` used now (best effort: a read-only cache still serves hits).
fn touch(path: &Path) {
    let _ = fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
}

fn manifest_text(deps: &[PathBuf]) -> String {
    let body: String = deps.iter().map(|d| format!("{}\n", d.display())).collect();
    format!("{MANIFEST_HEADER} {}\n{body}", sha256_hex(body.as_bytes()))
}

fn parse_manifest(bytes: &[u8]) -> Option<Vec<PathBuf>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (head, body) = text.split_once('\n')?;
    let sum = head.strip_prefix(MANIFEST_HEADER)?.strip_prefix(' ')?;
    (sha256_hex(body.as_bytes()) == sum).then(|| body.lines().map(PathBuf::from).collect())
}

/// The dependency list at `path`; `Ok(None)` when there is none.
fn read_manifest(path: &Path) -> Result<Option<Vec<PathBuf>>, Problem> {
    match fs::read(path) {
        Ok(bytes) => parse_manifest(&bytes).map(Some).ok_or(Problem::BadManifest),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(path, e)),
    }
}

fn unreadable(path: &Path, error: io::Error) -> Problem {
    Problem::Unreadable {
        file: path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        error: error.to_string(),
    }
}

fn sums_text(files: &[(String, Vec<u8>)]) -> String {
    files
        .iter()
        .map(|(name, bytes)| format!("{}  {name}\n", sha256_hex(bytes)))
        .collect()
}

/// `(sha256, file)` per line of a [`SUMS`] file.
fn parse_sums(text: &str) -> Result<Vec<(String, String)>, Problem> {
    let mut listed: Vec<(String, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let well_formed = line.split_once("  ").filter(|(sum, name)| {
            sum.len() == 64
                && sum.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                && !name.is_empty()
                && !name.contains(['/', '\\'])
                && *name != SUMS
                && !listed.iter().any(|(_, n)| n == name)
        });
        let (sum, name) = well_formed.ok_or(Problem::BadSums { line: i + 1 })?;
        listed.push((sum.to_string(), name.to_string()));
    }
    Ok(listed)
}

/// Reads and verifies the object at `dir`: every file [`SUMS`] lists, `required` among them.
/// `Ok(None)` when the object is not there, or vanished while being read (evicted).
fn read_entry(dir: &Path, required: &[&str]) -> Result<Option<Files>, Problem> {
    // A file not found is a miss while `dir` is absent. Found absent and then present,
    // `dir` was renamed in whole between the two looks (a concurrent commit): read again.
    // Missing only when `dir` is there both before and after the read.
    let read = |name: &str| {
        let path = dir.join(name);
        let mut present_before = false;
        loop {
            match fs::read(&path) {
                Ok(bytes) => return Ok(Some(bytes)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => match dir.exists() {
                    false => return Ok(None),
                    true if present_before => return Err(Problem::Missing(name.to_string())),
                    true => present_before = true,
                },
                Err(e) => return Err(unreadable(&path, e)),
            }
        }
    };
    let Some(sums) = read(SUMS)? else {
        return Ok(None);
    };
    let listed = parse_sums(&String::from_utf8_lossy(&sums))?;
    if let Some(f) = required
        .iter()
        .find(|f| !listed.iter().any(|(_, n)| n == *f))
    {
        return Err(Problem::Unlisted(f.to_string()));
    }
    let mut files = Vec::with_capacity(listed.len());
    for (sum, name) in listed {
        let checked = read(&name).and_then(|bytes| match bytes {
            Some(b) if sha256_hex(&b) != sum => Err(Problem::Mismatch(name.clone())),
            other => Ok(other),
        });
        match checked {
            Ok(Some(bytes)) => files.push((name, bytes)),
            Ok(None) => return Ok(None),
            // Evicted and committed again while we read: a miss, not damage.
            Err(_) if fs::read(dir.join(SUMS)).ok().as_ref() != Some(&sums) => return Ok(None),
            Err(problem) => return Err(problem),
        }
    }
    Ok(Some(files))
}

/// Keeps exactly `files` in `dir`, writes their [`SUMS`] last, and returns their bytes.
fn seal(dir: &Path, files: &[&str]) -> io::Result<Files> {
    let with_path = |path: &Path| {
        let path = path.display().to_string();
        move |e: io::Error| io::Error::new(e.kind(), format!("{path}: {e}"))
    };
    let mut kept = Vec::with_capacity(files.len());
    for f in files {
        let path = dir.join(f);
        kept.push((f.to_string(), fs::read(&path).map_err(with_path(&path))?));
    }
    for e in fs::read_dir(dir)? {
        let path = e?.path();
        if !files.iter().any(|f| path.file_name() == Some(f.as_ref())) {
            remove_any(&path);
        }
    }
    fs::write(dir.join(SUMS), sums_text(&kept))?;
    Ok(kept)
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
    fn key_of_is_unambiguous() {
        assert_ne!(key_of(&["ab", "c"]), key_of(&["a", "bc"]));
    }

    const FILES: &[&str] = &["artifact", "sass.txt"];

    /// A cache in a fresh folder with one source file `x.cu` as the job's dependency.
    fn fresh(name: &str) -> (Cache, PathBuf) {
        let d = tmpdir(name);
        let dep = d.join("x.cu");
        fs::write(&dep, "1").unwrap();
        (
            Cache::with_limits(d.join("cache"), Limits::default()).unwrap(),
            dep,
        )
    }

    fn commit(cache: &Cache, dep: &Path, artifact: &str) -> Committed {
        let s = cache.scratch().unwrap();
        fs::write(s.path().join("artifact"), artifact).unwrap();
        fs::write(s.path().join("sass.txt"), format!("sass of {artifact}")).unwrap();
        fs::write(s.path().join("deps.d"), "x.cu: x.cu").unwrap();
        cache.commit("k", s, &[dep.to_path_buf()], FILES).unwrap()
    }

    fn hit(cache: &Cache) -> Entry {
        match cache.lookup("k", FILES) {
            Lookup::Hit(e) => e,
            other => panic!("expected a hit, got {other:?}"),
        }
    }

    fn corrupt(cache: &Cache) -> Corruption {
        match cache.lookup("k", FILES) {
            Lookup::Corrupt(c) => c,
            other => panic!("expected a corrupt entry, got {other:?}"),
        }
    }

    fn set_age(path: &Path, age: Duration) {
        fs::File::open(path)
            .unwrap()
            .set_modified(SystemTime::now() - age)
            .unwrap();
    }

    #[test]
    fn an_entry_holds_its_files_and_their_sums_and_reads_back_verified() {
        let (cache, dep) = fresh("roundtrip");
        assert!(matches!(cache.lookup("k", FILES), Lookup::Miss));
        let c = commit(&cache, &dep, "bytes");
        assert!(c.replaced.is_none());
        let mut names: Vec<String> = fs::read_dir(&c.entry.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["SHA256SUMS", "artifact", "sass.txt"],
            "deps.d is dropped"
        );
        let sums = fs::read_to_string(c.entry.dir.join(SUMS)).unwrap();
        assert_eq!(
            sums,
            format!(
                "{}  artifact\n{}  sass.txt\n",
                sha256_hex(b"bytes"),
                sha256_hex(b"sass of bytes")
            )
        );
        let mut e = hit(&cache);
        assert_eq!(e.dir, c.entry.dir);
        assert_eq!(e.deps, vec![dep.clone()]);
        assert_eq!(e.take("artifact"), b"bytes");
        assert!(fs::read_dir(cache.root.join("tmp"))
            .unwrap()
            .next()
            .is_none());
        fs::write(&dep, "2").unwrap();
        assert!(matches!(cache.lookup("k", FILES), Lookup::Miss));
    }

    #[test]
    fn every_damage_to_an_entry_is_reported_and_evicts_it() {
        type Damage = fn(&Path);
        let cases: &[(&str, Damage, Problem)] = &[
            (
                "truncated artifact",
                |d| fs::write(d.join("artifact"), "byt").unwrap(),
                Problem::Mismatch("artifact".into()),
            ),
            (
                "bit flip",
                |d| fs::write(d.join("sass.txt"), "sass of bytds").unwrap(),
                Problem::Mismatch("sass.txt".into()),
            ),
            (
                "missing file",
                |d| fs::remove_file(d.join("sass.txt")).unwrap(),
                Problem::Missing("sass.txt".into()),
            ),
            (
                "missing sums",
                |d| fs::remove_file(d.join(SUMS)).unwrap(),
                Problem::Missing(SUMS.into()),
            ),
            (
                "truncated sums",
                |d| {
                    let s = fs::read_to_string(d.join(SUMS)).unwrap();
                    fs::write(d.join(SUMS), &s[..s.find('\n').unwrap() + 1]).unwrap()
                },
                Problem::Unlisted("sass.txt".into()),
            ),
            (
                "garbage sums",
                |d| fs::write(d.join(SUMS), "\u{1}\u{2} garbage").unwrap(),
                Problem::BadSums { line: 1 },
            ),
        ];
        for (what, damage, problem) in cases {
            let (cache, dep) = fresh("damage");
            let dir = commit(&cache, &dep, "bytes").entry.dir;
            damage(&dir);
            let c = corrupt(&cache);
            assert_eq!((&c.path, &c.problem), (&dir, problem), "{what}");
            assert!(!dir.exists(), "{what}: the corrupt object is evicted");
            assert!(
                matches!(cache.lookup("k", FILES), Lookup::Miss),
                "{what}: reported once, then a plain miss"
            );
            assert!(commit(&cache, &dep, "bytes").replaced.is_none(), "{what}");
            assert_eq!(hit(&cache).take("artifact"), b"bytes", "{what}");
        }
    }

    #[test]
    fn a_garbage_or_tampered_dependency_list_is_reported_and_removed() {
        for garbage in [&b"\xff\xfe not text"[..], b"", b"x.cu\n"] {
            let (cache, dep) = fresh("manifest");
            commit(&cache, &dep, "bytes");
            let manifest = cache.manifest_path("k");
            fs::write(&manifest, garbage).unwrap();
            let c = corrupt(&cache);
            assert_eq!(
                (c.path, c.problem),
                (manifest.clone(), Problem::BadManifest)
            );
            assert!(!manifest.exists());
        }
        let (cache, dep) = fresh("manifest-edit");
        commit(&cache, &dep, "bytes");
        let manifest = cache.manifest_path("k");
        let text = fs::read_to_string(&manifest).unwrap();
        fs::write(&manifest, text.replace("x.cu", "y.cu")).unwrap();
        assert_eq!(corrupt(&cache).problem, Problem::BadManifest);
    }

    #[test]
    fn a_second_commit_of_an_object_keeps_the_first() {
        let (cache, dep) = fresh("twice");
        let first = commit(&cache, &dep, "first").entry;
        // Another build commits the same object while readers may use the first.
        let mut again = commit(&cache, &dep, "second");
        assert_eq!(again.entry.dir, first.dir);
        assert!(again.replaced.is_none());
        assert_eq!(again.entry.take("artifact"), b"first", "theirs is returned");
        assert_eq!(fs::read(first.dir.join("artifact")).unwrap(), b"first");
        assert!(
            fs::read_dir(cache.root.join("tmp"))
                .unwrap()
                .next()
                .is_none(),
            "the losing scratch folder is dropped"
        );
    }

    #[test]
    fn a_commit_replaces_a_corrupt_or_incomplete_object() {
        let (cache, dep) = fresh("replace");
        let dir = commit(&cache, &dep, "bytes").entry.dir;
        fs::write(dir.join("artifact"), "byte").unwrap();
        // The dependency list is lost too, so no lookup sees the damage first.
        fs::remove_file(cache.manifest_path("k")).unwrap();
        let mut c = commit(&cache, &dep, "bytes");
        assert_eq!(
            c.replaced.map(|r| r.problem),
            Some(Problem::Mismatch("artifact".into()))
        );
        assert_eq!(c.entry.take("artifact"), b"bytes");
        assert_eq!(hit(&cache).take("artifact"), b"bytes");

        // A folder left by hand without sums.
        fs::remove_dir_all(&dir).unwrap();
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("artifact"), "half").unwrap();
        let c = commit(&cache, &dep, "bytes");
        assert_eq!(
            c.replaced.map(|r| r.problem),
            Some(Problem::Missing(SUMS.into()))
        );
        assert_eq!(hit(&cache).take("artifact"), b"bytes");
    }

    #[test]
    fn an_uncommitted_scratch_folder_is_removed_when_dropped() {
        let (cache, _) = fresh("drop");
        let s = cache.scratch().unwrap();
        fs::write(s.path().join("artifact"), "partial").unwrap();
        let path = s.path().to_path_buf();
        drop(s);
        assert!(!path.exists());
    }

    #[test]
    fn stale_temporaries_are_cleaned_and_live_ones_kept() {
        let (cache, _) = fresh("temps");
        let tmp = cache.root.join("tmp");
        let killed = tmp.join("job-123-0-0");
        fs::create_dir_all(&killed).unwrap();
        fs::write(killed.join("artifact"), "partial").unwrap();
        let old_manifest = tmp.join("manifest-123-1-0");
        fs::write(&old_manifest, "half").unwrap();
        let live = cache.scratch().unwrap();
        set_age(&killed, STALE_TEMPORARY_AGE + Duration::from_secs(60));
        set_age(&old_manifest, STALE_TEMPORARY_AGE + Duration::from_secs(60));
        assert_eq!(cache.clean_temporaries(SystemTime::now()), 2);
        assert!(!killed.exists() && !old_manifest.exists());
        assert!(
            live.path().exists(),
            "a compile in progress keeps its folder"
        );
    }

    /// An object per name, its last use `age` ago, `bytes` large.
    fn object(cache: &Cache, name: &str, bytes: usize, age: Duration) -> PathBuf {
        let dir = cache.object_dir(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("artifact"), vec![0u8; bytes]).unwrap();
        fs::write(dir.join(SUMS), "").unwrap();
        set_age(&dir.join(SUMS), age);
        dir
    }

    #[test]
    fn eviction_drops_old_objects_then_the_least_recently_used_beyond_the_size() {
        let (mut cache, _) = fresh("evict");
        let hour = Duration::from_secs(3600);
        let day = 24 * hour;
        cache.limits = Limits {
            max_bytes: Some(2500),
            max_age: Some(7 * day),
        };
        let expired = object(&cache, "expired", 10, 8 * day);
        let oldest = object(&cache, "oldest", 1000, 3 * day);
        let older = object(&cache, "older", 1000, 2 * day);
        let newer = object(&cache, "newer", 1000, day);
        let recent = object(&cache, "recent", 1000, Duration::from_secs(60));
        let now = SystemTime::now();
        let ev = cache.evict(now, now);
        assert_eq!(
            ev,
            Evicted {
                entries: 3,
                bytes: 2010
            }
        );
        for (dir, kept) in [
            (expired, false),
            (oldest, false),
            (older, false),
            (newer, true),
            (recent, true),
        ] {
            assert_eq!(dir.exists(), kept, "{}", dir.display());
        }

        // Over the size, but all used recently (a build bigger than the limit): kept.
        cache.limits.max_bytes = Some(0);
        assert_eq!(cache.evict(now, now - 2 * day).entries, 0);
        assert_eq!(cache.evict(now, now).entries, 1, "newer is a day old");
        cache.limits = Limits {
            max_bytes: None,
            max_age: None,
        };
        let ancient = object(&cache, "ancient", 10, 1000 * day);
        assert_eq!(cache.evict(now, now).entries, 0, "`off` evicts nothing");
        assert!(ancient.exists());
    }

    #[test]
    fn old_dependency_lists_are_evicted_by_age() {
        let (cache, dep) = fresh("evict-manifest");
        commit(&cache, &dep, "bytes");
        let manifest = cache.manifest_path("k");
        set_age(&manifest, DEFAULT_MAX_AGE + Duration::from_secs(3600));
        cache.evict(SystemTime::now(), SystemTime::now());
        assert!(!manifest.exists());
    }

    #[test]
    fn limits_from_the_environment() {
        let env = |size: &'static str, age: &'static str| {
            move |k: &str| match k {
                MAX_SIZE_VAR => Some(size.to_string()),
                MAX_AGE_VAR => Some(age.to_string()),
                _ => None,
            }
        };
        assert_eq!(Limits::from_env(&env("", " ")), Ok(Limits::default()));
        let l = Limits::from_env(&env("1.5G", "12h")).unwrap();
        assert_eq!(l.max_bytes, Some(3 << 29));
        assert_eq!(l.max_age, Some(Duration::from_secs(12 * 3600)));
        let l = Limits::from_env(&env("off", "OFF")).unwrap();
        assert_eq!((l.max_bytes, l.max_age), (None, None));
        for (size, want) in [
            ("1048576", 1 << 20),
            ("512K", 512 << 10),
            ("500MiB", 500 << 20),
            ("2tb", 2 << 40),
        ] {
            assert_eq!(parse_size(&size.to_ascii_lowercase()), Some(want), "{size}");
        }
        let e = Limits::from_env(&env("ten gigs", "30d")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "CUBINS_CACHE_MAX_SIZE=`ten gigs`: expected a size such as 5G, 500M or 1048576 (bytes), or `off`"
        );
        let e = Limits::from_env(&env("5G", "30")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "CUBINS_CACHE_MAX_AGE=`30`: expected an age such as 30d, 12h or 90m, or `off`"
        );
    }

    #[test]
    fn concurrent_writers_and_readers_of_one_object_all_succeed_with_identical_bytes() {
        let (cache, dep) = fresh("threads");
        for round in 0..20 {
            // A new object each round: every writer races to commit it while others read.
            fs::write(&dep, format!("round {round}")).unwrap();
            let got: Vec<Vec<u8>> = std::thread::scope(|s| {
                let writers: Vec<_> = (0..8)
                    .map(|_| {
                        s.spawn(|| {
                            let mut e = match cache.lookup("k", FILES) {
                                Lookup::Hit(e) => e,
                                Lookup::Miss => commit(&cache, &dep, "same").entry,
                                Lookup::Corrupt(c) => panic!("round {round}: {c}"),
                            };
                            e.take("artifact")
                        })
                    })
                    .collect();
                writers.into_iter().map(|w| w.join().unwrap()).collect()
            });
            assert!(got.iter().all(|b| b == b"same"), "round {round}");
            assert_eq!(hit(&cache).take("sass.txt"), b"sass of same");
        }
        assert!(fs::read_dir(cache.root.join("tmp"))
            .unwrap()
            .next()
            .is_none());
    }
}
