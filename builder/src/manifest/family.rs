//! A family (`[families.KEY]`, docs/manifest.md): one template expanded into an entry per
//! combination of its axes. `name` (default: the key), every field and every `when` override
//! are filled for the combination; `exclude` drops combinations; each `when` whose `match`
//! holds adds its fields over the family's, in order.

use super::condition::{excludes, whens};
use super::format::Layer;
use super::template::{key_text, Scope};
use super::DTYPE_AXIS;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// A family's own keys; every other key is an entry field.
const OWN_KEYS: [&str; 4] = ["name", "axes", "when", "exclude"];

/// More entries than any manifest means: a mistake, stopped before it takes the machine.
const MAX_ENTRIES: usize = 100_000;

/// One entry a family makes.
#[derive(Debug)]
pub(super) struct Instance {
    pub name: String,
    /// Its axis values, `dtype=bf16, tile=128x256`, for messages.
    pub combination: String,
    /// Each axis's value by name (a table value by its `name`).
    pub axes: BTreeMap<String, String>,
    /// The name with the `dtype` axis's value written `{dtype}`, where the name uses it.
    pub dtype_pattern: Option<String>,
    /// The family's fields, then each matching `when`'s, in order.
    pub layers: Vec<Layer>,
}

/// The entries family `key` makes; errors name the key path within the family.
pub(super) fn expand(
    key: &str,
    family: &Table,
    sets: &BTreeMap<String, Vec<Value>>,
) -> Result<Vec<Instance>, String> {
    let no_axes = BTreeMap::new();
    let lists = Scope {
        axes: &no_axes,
        sets,
    };
    let axes = axes(family.get("axes"), &lists)?;
    let whens = whens(family.get("when"), &axes)?;
    let excludes = excludes(family.get("exclude"), &axes)?;
    let name_template = family
        .get("name")
        .cloned()
        .unwrap_or_else(|| Value::String(key.to_string()));
    let body: Table = family
        .iter()
        .filter(|(k, _)| !OWN_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();

    let mut when_used = vec![false; whens.len()];
    let mut exclude_used = vec![false; excludes.len()];
    let mut made: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::new();
    for combo in combinations(&axes)? {
        let mut dropped = false;
        for (i, m) in excludes.iter().enumerate() {
            if m.holds(&combo) {
                exclude_used[i] = true;
                dropped = true;
            }
        }
        if dropped {
            continue;
        }
        let combination = describe(&combo);
        let scope = Scope { axes: &combo, sets };
        let name = match scope.fill(&name_template, "name")? {
            Value::String(s) if !s.is_empty() => s,
            other => {
                return Err(format!(
                    "name: gives {other} for {combination}; a name is a non-empty string"
                ))
            }
        };
        let context = |e: String| format!("entry `{name}` ({combination}): {e}");
        let dtype_pattern = dtype_pattern(&combo, sets, &name_template).map_err(context)?;
        let mut layers = vec![layer(&scope, &body, "").map_err(context)?];
        for (i, w) in whens.iter().enumerate() {
            if w.condition.holds(&combo) {
                when_used[i] = true;
                layers.push(layer(&scope, &w.fields, &w.at).map_err(context)?);
            }
        }
        if let Some(first) = made.insert(name.clone(), combination.clone()) {
            return Err(format!(
                "makes `{name}` twice ({first}; {combination}): `name` must use every axis that varies"
            ));
        }
        out.push(Instance {
            name,
            combination,
            axes: combo
                .iter()
                .map(|(a, v)| (a.clone(), key_text(v)))
                .collect(),
            dtype_pattern,
            layers,
        });
    }
    let conditions = whens.iter().map(|w| &w.condition).chain(&excludes);
    let used = when_used.iter().chain(&exclude_used);
    // One no combination meets is a mistake: a misspelt value, a tile since removed.
    if let Some((c, _)) = conditions.zip(used).find(|(_, u)| !**u) {
        return Err(format!("{}: holds for no entry of this family", c.at));
    }
    Ok(out)
}

/// The entry name `template` fills to with the `dtype` axis's value written `{dtype}`
/// (`rope_{style}_{dtype}` -> `rope_neox_{dtype}`); `None` without a `dtype` axis or where
/// the name does not use it.
fn dtype_pattern(
    combo: &BTreeMap<String, Value>,
    sets: &BTreeMap<String, Vec<Value>>,
    template: &Value,
) -> Result<Option<String>, String> {
    let Some(dtype) = combo.get(DTYPE_AXIS) else {
        return Ok(None);
    };
    // `{{dtype}}` fills to the literal `{dtype}`; a table value keeps its other fields.
    let marker = Value::String("{{dtype}}".into());
    let placeholder = match dtype {
        Value::Table(t) => {
            let mut t = t.clone();
            t.insert("name".into(), marker);
            Value::Table(t)
        }
        _ => marker,
    };
    let mut axes = combo.clone();
    axes.insert(DTYPE_AXIS.into(), placeholder);
    let scope = Scope { axes: &axes, sets };
    Ok(match scope.fill(template, "name")? {
        Value::String(s) if s.contains("{dtype}") => Some(s),
        _ => None,
    })
}

/// An axis: its name and values, in the order written.
pub(super) type Axis = (String, Vec<Value>);

fn axes(value: Option<&Value>, lists: &Scope) -> Result<Vec<Axis>, String> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let Some(table) = value.as_table() else {
        return Err(format!("axes: a table of axis name = values, not {value}"));
    };
    let mut out = Vec::new();
    for (name, list) in table {
        let at = format!("axes.{name}");
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!(
                "{at}: an axis name is letters, digits and `_` (it is written `{{{name}}}`)"
            ));
        }
        let values = lists.axis_values(list, &at)?;
        if values.is_empty() {
            return Err(format!("{at}: an axis needs at least one value"));
        }
        let mut seen = BTreeMap::new();
        for (i, v) in values.iter().enumerate() {
            let named = match v {
                Value::Table(t) => t.get("name").is_some_and(|n| n.is_str() || n.is_integer()),
                Value::String(_) | Value::Integer(_) => true,
                _ => false,
            };
            if !named {
                return Err(format!(
                    "{at}[{i}]: an axis value is a string, an integer or a table with a `name`, not {v}"
                ));
            }
            if seen.insert(key_text(v), i).is_some() {
                return Err(format!("{at}: `{}` is listed twice", key_text(v)));
            }
        }
        out.push((name.clone(), values));
    }
    Ok(out)
}

/// Every combination of one value per axis.
fn combinations(axes: &[Axis]) -> Result<Vec<BTreeMap<String, Value>>, String> {
    let count = axes
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()));
    if count.map_or(true, |n| n > MAX_ENTRIES) {
        return Err(format!("its axes make more than {MAX_ENTRIES} entries"));
    }
    let mut out = vec![BTreeMap::new()];
    for (name, values) in axes {
        out = out
            .into_iter()
            .flat_map(|combo| {
                values.iter().map(move |v| {
                    let mut c = combo.clone();
                    c.insert(name.clone(), v.clone());
                    c
                })
            })
            .collect();
    }
    Ok(out)
}

fn describe(combo: &BTreeMap<String, Value>) -> String {
    if combo.is_empty() {
        return "no axes".into();
    }
    let parts: Vec<String> = combo
        .iter()
        .map(|(a, v)| format!("{a}={}", key_text(v)))
        .collect();
    parts.join(", ")
}

/// The fields `table` (at key path `at`) sets, filled for the combination, as a layer.
fn layer(scope: &Scope, table: &Table, at: &str) -> Result<Layer, String> {
    let Value::Table(filled) = scope.fill(&Value::Table(table.clone()), at)? else {
        unreachable!("a filled table is a table")
    };
    Layer::read(&filled).map_err(|e| {
        if at.is_empty() {
            e
        } else {
            format!("{at}.{e}")
        }
    })
}
