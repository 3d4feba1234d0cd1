//! A manifest's files: the one given and the fragments it includes (relative to the including
//! file, each read once), merged into one set of definitions. A name defined in two files, a
//! missing fragment and an include cycle are errors naming the files.

use super::format::{Document, Layer};
use super::{ArchSpecific, ManifestError};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// Where fragments are read from.
pub(super) trait Files {
    fn read(&self, path: &Path) -> Result<String, String>;
    /// What makes two paths one file, so that a cycle through other spellings is still seen.
    fn identity(&self, path: &Path) -> PathBuf {
        normalized(path)
    }
}

/// The file system.
pub(super) struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Result<String, String> {
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    }

    fn identity(&self, path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| normalized(path))
    }
}

/// For a manifest given as text: it has no folder, so nothing can be included.
pub(super) struct NoFiles;

impl Files for NoFiles {
    fn read(&self, _: &Path) -> Result<String, String> {
        Err(
            "a manifest given as text has no folder to include from; load it from its file \
             (Manifest::load)"
                .into(),
        )
    }
}

/// A definition and the file it is in (as errors name it).
#[derive(Debug)]
pub(super) struct Defined<T> {
    pub file: String,
    pub value: T,
}

/// Every definition of a manifest's files.
#[derive(Debug, Default)]
pub(super) struct Merged {
    pub arch_specific: Option<Defined<ArchSpecific>>,
    pub defaults: Option<Defined<Layer>>,
    pub arch_groups: BTreeMap<String, Defined<Vec<String>>>,
    pub sets: BTreeMap<String, Defined<Vec<toml::Value>>>,
    pub kernels: BTreeMap<String, Defined<Layer>>,
    pub families: BTreeMap<String, Defined<toml::Table>>,
}

/// The manifest at `path` and everything it includes.
pub(super) fn from_file(path: &Path, files: &dyn Files) -> Result<Merged, ManifestError> {
    let text = files
        .read(path)
        .map_err(|e| ManifestError::new(path.display().to_string(), e))?;
    from_text(&text, &path.display().to_string(), files)
}

/// The manifest `text`, read from `path`, and everything it includes.
pub(super) fn from_text(
    text: &str,
    path: &str,
    files: &dyn Files,
) -> Result<Merged, ManifestError> {
    let root = PathBuf::from(path);
    let mut walk = Walk {
        files,
        seen: BTreeSet::from([files.identity(&root)]),
        chain: vec![(files.identity(&root), path.to_string())],
        merged: Merged::default(),
    };
    walk.visit(&root, path, text)?;
    Ok(walk.merged)
}

struct Walk<'a> {
    files: &'a dyn Files,
    /// Every file read so far: one included twice is read once.
    seen: BTreeSet<PathBuf>,
    /// The files including the one being read, outermost first (identity, name).
    chain: Vec<(PathBuf, String)>,
    merged: Merged,
}

impl Walk<'_> {
    fn visit(&mut self, path: &Path, name: &str, text: &str) -> Result<(), ManifestError> {
        let doc: Document =
            toml::from_str(text).map_err(|e| ManifestError::new(name, e.to_string()))?;
        let includes = doc.include.clone();
        self.merge(name, doc)?;
        let dir = path.parent().unwrap_or(Path::new(""));
        for include in includes {
            let child = normalized(&dir.join(&include));
            let child_name = child.display().to_string();
            let id = self.files.identity(&child);
            if let Some(at) = self.chain.iter().position(|(i, _)| *i == id) {
                let cycle: Vec<&str> = self.chain[at..].iter().map(|(_, n)| n.as_str()).collect();
                return Err(ManifestError::new(
                    name,
                    format!(
                        "include `{include}` makes a cycle: {} -> {child_name}",
                        cycle.join(" -> ")
                    ),
                ));
            }
            if !self.seen.insert(id.clone()) {
                continue;
            }
            let text = self.files.read(&child).map_err(|e| {
                ManifestError::new(name, format!("include `{include}` ({child_name}): {e}"))
            })?;
            self.chain.push((id, child_name.clone()));
            self.visit(&child, &child_name, &text)?;
            self.chain.pop();
        }
        Ok(())
    }

    fn merge(&mut self, file: &str, doc: Document) -> Result<(), ManifestError> {
        let m = &mut self.merged;
        define_once(
            &mut m.arch_specific,
            "[arch_specific]",
            file,
            doc.arch_specific,
        )?;
        define_once(&mut m.defaults, "[defaults]", file, doc.defaults)?;
        define_each(&mut m.arch_groups, "arch_groups", file, doc.arch_groups)?;
        define_each(&mut m.sets, "sets", file, doc.sets)?;
        define_each(&mut m.kernels, "kernels", file, doc.kernels)?;
        define_each(&mut m.families, "families", file, doc.families)
    }
}

/// A table only one file may hold.
fn define_once<T>(
    slot: &mut Option<Defined<T>>,
    table: &str,
    file: &str,
    value: Option<T>,
) -> Result<(), ManifestError> {
    let Some(value) = value else { return Ok(()) };
    if let Some(first) = slot {
        return Err(ManifestError::new(
            file,
            format!(
                "{table} is defined in {} and again here; keep one",
                first.file
            ),
        ));
    }
    *slot = Some(Defined {
        file: file.to_string(),
        value,
    });
    Ok(())
}

/// Named definitions (`[sets.NAME]`, `[kernels.NAME]`...): each name in one file only.
fn define_each<T>(
    map: &mut BTreeMap<String, Defined<T>>,
    table: &str,
    file: &str,
    values: BTreeMap<String, T>,
) -> Result<(), ManifestError> {
    for (name, value) in values {
        if let Some(first) = map.get(&name) {
            return Err(ManifestError::new(
                file,
                format!(
                    "[{table}.{}] is defined in {} and again here; a name is defined once",
                    crate::contract::toml_key(&name),
                    first.file
                ),
            ));
        }
        map.insert(
            name,
            Defined {
                file: file.to_string(),
                value,
            },
        );
    }
    Ok(())
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
