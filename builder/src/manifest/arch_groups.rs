//! `[arch_groups]`: a name for several arches (`blackwell = ["sm_100", "sm_120"]`), usable
//! wherever an arch table key is. A group key stands for a table per member; an arch key in
//! the same table overrides the group's fields for that arch, and two groups of one table may
//! not share an arch (which one would win is not written anywhere).

use super::include::Defined;
use super::{Contract, ManifestError};
use crate::arch::Arch;
use std::collections::BTreeMap;

pub(super) struct ArchGroups<'a> {
    groups: BTreeMap<&'a str, &'a [String]>,
}

/// Whether an arch table key means an arch rather than a group: a number after an optional
/// `sm_` / `compute_` (`sm_99` too: the manifest check reports arches it does not know).
fn names_an_arch(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let number = ["compute_", "compute", "sm_", "sm"]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .unwrap_or(&lower);
    number.starts_with(|c: char| c.is_ascii_digit())
}

impl<'a> ArchGroups<'a> {
    pub fn new(defined: &'a BTreeMap<String, Defined<Vec<String>>>) -> Result<Self, ManifestError> {
        let mut groups = BTreeMap::new();
        for (name, d) in defined {
            let err = |m: String| {
                Err(ManifestError::new(
                    &d.file,
                    format!("[arch_groups] `{name}`: {m}"),
                ))
            };
            if names_an_arch(name) {
                return err("a group name must not read as an arch".into());
            }
            if d.value.is_empty() {
                return err("a group needs at least one arch".into());
            }
            for (i, member) in d.value.iter().enumerate() {
                match Arch::parse(member) {
                    Ok(a) if a.sm_name() == *member => {}
                    Ok(a) => return err(format!("write `{member}` as `{a}`")),
                    Err(e) => return err(e.to_string()),
                }
                if d.value[..i].contains(member) {
                    return err(format!("`{member}` is listed twice"));
                }
            }
            groups.insert(name.as_str(), d.value.as_slice());
        }
        Ok(ArchGroups { groups })
    }

    /// `tables` (keyed by arch or group) keyed by arch alone.
    pub fn expand(
        &self,
        tables: &BTreeMap<String, Contract>,
    ) -> Result<BTreeMap<String, Contract>, String> {
        let mut out: BTreeMap<String, Contract> = BTreeMap::new();
        let mut covered_by: BTreeMap<&str, &str> = BTreeMap::new();
        for (key, c) in tables {
            let Some(members) = self.groups.get(key.as_str()) else {
                continue;
            };
            for m in members.iter() {
                if let Some(other) = covered_by.insert(m, key) {
                    return Err(format!(
                        "arch.{other} and arch.{key} both cover {m}; name it in one group only \
                         (an arch.{m} table overrides a group's fields)"
                    ));
                }
                out.insert(m.clone(), c.clone());
            }
        }
        for (key, c) in tables {
            if self.groups.contains_key(key.as_str()) {
                continue;
            }
            if !names_an_arch(key) {
                let known: Vec<&str> = self.groups.keys().copied().collect();
                let known = if known.is_empty() {
                    "no [arch_groups] are defined".to_string()
                } else {
                    format!("groups: {}", known.join(", "))
                };
                return Err(format!(
                    "arch.{key}: unknown arch group `{key}` ({known}; arches are written sm_XX)"
                ));
            }
            out.entry(key.clone()).or_default().overlay(c);
        }
        Ok(out)
    }
}
