//! One manifest file as written (docs/manifest.md): the tables a file may hold, before
//! includes are merged and families expanded.

use super::{ArchSpecific, Contract};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// A manifest file. Every table is optional; a file of `[kernels.NAME]` entries alone is the
/// original format and reads unchanged.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Document {
    /// Fragment files merged into this one, relative to this file.
    #[serde(default)]
    pub include: Vec<String>,
    pub arch_specific: Option<ArchSpecific>,
    /// Group name → arches (`blackwell = ["sm_100", "sm_120"]`), usable as an arch table key.
    #[serde(default)]
    pub arch_groups: BTreeMap<String, Vec<String>>,
    /// Fields every entry starts from; an entry's own fields override them.
    pub defaults: Option<Layer>,
    /// Named lists (`"@NAME"`): axis values, parameter lists, opcode classes.
    #[serde(default)]
    pub sets: BTreeMap<String, Vec<toml::Value>>,
    /// Plain entries, taken literally (no placeholders).
    #[serde(default)]
    pub kernels: BTreeMap<String, Layer>,
    /// Templates expanded over axes; read by [`super::family`].
    #[serde(default)]
    pub families: BTreeMap<String, toml::Table>,
}

/// The fields of an entry as one layer sets them: `[defaults]`, the entry or family itself,
/// then each matching `when` of a family. A later layer's set fields win; `contract` and
/// each arch table are overridden field by field.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Layer {
    pub file: Option<String>,
    pub params: Option<Vec<String>>,
    pub block_sizes: Option<Vec<u32>>,
    pub dynamic_smem_bytes: Option<u32>,
    #[serde(default)]
    pub contract: Contract,
    /// Keyed by arch (`sm_86`) or arch group (`blackwell`).
    #[serde(default)]
    pub arch: BTreeMap<String, Contract>,
}

impl Layer {
    /// A layer from a table built in memory (a filled family), its error led by the key path
    /// of the field it is about (`contract.max_registers: invalid type ...`), which a
    /// table read from text would show by line instead.
    pub fn read(table: &Table) -> Result<Layer, String> {
        parse(table).map_err(|e| match culprit(table) {
            Some(key) => format!("{key}: {}", e.message().trim()),
            None => e.message().trim().to_string(),
        })
    }
}

fn parse(table: &Table) -> Result<Layer, toml::de::Error> {
    Value::Table(table.clone()).try_into()
}

/// The key path of the field a reading error of `table` is about: the deepest key whose
/// removal changes the error (to other than that key missing). A table none of whose own
/// keys does (one missing a field) is the culprit itself.
fn culprit(table: &Table) -> Option<String> {
    let message = |t: &Table| parse(t).err().map(|e| e.message().to_string());
    let error = message(table);
    let mut path: Vec<String> = Vec::new();
    loop {
        let here = path.iter().try_fold(table, |t, k| t.get(k)?.as_table())?;
        let about = |k: &&String| {
            let after = message(&without(table, &path, k));
            after != error && after != Some(format!("missing field `{k}`"))
        };
        let Some(key) = here.keys().find(about) else {
            break;
        };
        let descend = here[key].is_table();
        path.push(key.clone());
        if !descend {
            break;
        }
    }
    (!path.is_empty()).then(|| path.join("."))
}

/// `table` less the key `key` of its sub-table at `path`.
fn without(table: &Table, path: &[String], key: &str) -> Table {
    let mut out = table.clone();
    let mut here = &mut out;
    for k in path {
        match here.get_mut(k).and_then(Value::as_table_mut) {
            Some(t) => here = t,
            None => return out,
        }
    }
    here.remove(key);
    out
}
