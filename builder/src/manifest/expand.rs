//! A manifest's merged definitions as the expanded [`Manifest`]: each plain entry and each
//! entry a family makes, over `[defaults]`, with arch groups replaced by their arches. An
//! entry name made twice is an error naming both sources.

use super::arch_groups::ArchGroups;
use super::format::Layer;
use super::include::Merged;
use super::{family, KernelEntry, Manifest, ManifestError, Provenance};
use crate::contract::toml_key;
use std::collections::BTreeMap;

pub(super) fn manifest(merged: Merged) -> Result<Manifest, ManifestError> {
    let groups = ArchGroups::new(&merged.arch_groups)?;
    let sets: BTreeMap<String, Vec<toml::Value>> = merged
        .sets
        .iter()
        .map(|(name, d)| (name.clone(), d.value.clone()))
        .collect();
    let defaults = merged.defaults.as_ref().map(|d| &d.value);
    let mut out = Entries::default();

    for (name, d) in &merged.kernels {
        let table = format!("[kernels.{}]", toml_key(name));
        let entry = build(defaults.into_iter().chain([&d.value]), &groups)
            .map_err(|e| ManifestError::new(&d.file, format!("{table}: {e}")))?;
        out.add(name, entry, format!("{table} in {}", d.file), &d.file)?;
    }
    for (key, d) in &merged.families {
        let table = format!("[families.{}]", toml_key(key));
        let err = |e: String| ManifestError::new(&d.file, format!("{table}: {e}"));
        for instance in family::expand(key, &d.value, &sets).map_err(err)? {
            let mut entry =
                build(defaults.into_iter().chain(&instance.layers), &groups).map_err(|e| {
                    err(format!(
                        "entry `{}` ({}): {e}",
                        instance.name, instance.combination
                    ))
                })?;
            entry.family = Some(Provenance {
                family: key.clone(),
                axes: instance.axes,
                dtype_pattern: instance.dtype_pattern,
            });
            let source = format!("{table} ({}) in {}", instance.combination, d.file);
            out.add(&instance.name, entry, source, &d.file)?;
        }
    }
    Ok(Manifest {
        arch_specific: merged.arch_specific.map(|d| d.value),
        kernels: out.kernels,
    })
}

/// The entries so far, and where each came from.
#[derive(Default)]
struct Entries {
    kernels: BTreeMap<String, KernelEntry>,
    sources: BTreeMap<String, String>,
}

impl Entries {
    fn add(
        &mut self,
        name: &str,
        entry: KernelEntry,
        source: String,
        file: &str,
    ) -> Result<(), ManifestError> {
        if let Some(first) = self.sources.get(name) {
            return Err(ManifestError::new(
                file,
                format!("entry `{name}` is made twice: by {first} and by {source}"),
            ));
        }
        self.sources.insert(name.to_string(), source);
        self.kernels.insert(name.to_string(), entry);
        Ok(())
    }
}

/// One entry from its layers, first to last: a later layer's set fields win, field by field
/// in `contract` and in each arch table.
fn build<'a>(
    layers: impl IntoIterator<Item = &'a Layer>,
    groups: &ArchGroups,
) -> Result<KernelEntry, String> {
    let mut entry = KernelEntry::default();
    let mut file = None;
    for layer in layers {
        if let Some(f) = &layer.file {
            file = Some(f.clone());
        }
        if let Some(p) = &layer.params {
            entry.params = p.clone();
        }
        if let Some(b) = &layer.block_sizes {
            entry.block_sizes = b.clone();
        }
        if let Some(s) = layer.dynamic_smem_bytes {
            entry.dynamic_smem_bytes = s;
        }
        entry.contract.overlay(&layer.contract);
        for (arch, c) in groups.expand(&layer.arch)? {
            entry.arch.entry(arch).or_default().overlay(&c);
        }
    }
    entry.file = file.ok_or("missing field `file` (the kernel file under cuda/)")?;
    Ok(entry)
}
