//! `when` and `exclude` in a family: conditions on its axis values. `match = { axis = value }`
//! holds where every named axis has that value: one value (by its text; a table value by its
//! `name`), a list of them (any), or a table of fields the axis's table value must have.

use super::family::Axis;
use super::template::key_text;
use std::collections::BTreeMap;
use toml::{Table, Value};

#[derive(Debug)]
pub(super) struct Condition {
    /// Its key path (`when[2].match`), for messages.
    pub at: String,
    axes: Table,
}

impl Condition {
    fn new(at: String, value: &Value, axes: &[Axis]) -> Result<Condition, String> {
        let Some(table) = value.as_table() else {
            return Err(format!("{at}: a table of axis = value, not {value}"));
        };
        if table.is_empty() {
            return Err(format!(
                "{at}: names no axis, so it would hold for every entry"
            ));
        }
        for name in table.keys() {
            if !axes.iter().any(|(a, _)| a == name) {
                let known: Vec<&str> = axes.iter().map(|(a, _)| a.as_str()).collect();
                return Err(format!(
                    "{at}: `{name}` is not an axis (axes: {})",
                    known.join(", ")
                ));
            }
        }
        Ok(Condition {
            at,
            axes: table.clone(),
        })
    }

    pub fn holds(&self, combo: &BTreeMap<String, Value>) -> bool {
        self.axes
            .iter()
            .all(|(axis, want)| combo.get(axis).is_some_and(|v| matches(want, v)))
    }
}

fn matches(want: &Value, value: &Value) -> bool {
    match want {
        Value::Array(any) => any.iter().any(|w| matches(w, value)),
        Value::Table(fields) => fields
            .iter()
            .all(|(f, w)| value.get(f).is_some_and(|v| matches(w, v))),
        scalar => key_text(scalar) == key_text(value),
    }
}

/// A `when`: where it holds, and the entry fields it sets there.
pub(super) struct When {
    pub condition: Condition,
    /// Its key path (`when[2]`), for messages.
    pub at: String,
    pub fields: Table,
}

pub(super) fn whens(value: Option<&Value>, axes: &[Axis]) -> Result<Vec<When>, String> {
    let mut out = Vec::new();
    for (i, item) in tables("when", value)?.into_iter().enumerate() {
        let at = format!("when[{i}]");
        let Some(condition) = item.get("match") else {
            return Err(format!("{at}: needs `match = {{ AXIS = VALUE, ... }}`"));
        };
        let condition = Condition::new(format!("{at}.match"), condition, axes)?;
        let mut fields = item.clone();
        fields.remove("match");
        out.push(When {
            condition,
            at,
            fields,
        });
    }
    Ok(out)
}

/// `exclude = [{ axis = value, ... }, ...]`: each a condition, as `match` is.
pub(super) fn excludes(value: Option<&Value>, axes: &[Axis]) -> Result<Vec<Condition>, String> {
    let mut out = Vec::new();
    for (i, item) in tables("exclude", value)?.into_iter().enumerate() {
        out.push(Condition::new(
            format!("exclude[{i}]"),
            &Value::Table(item.clone()),
            axes,
        )?);
    }
    Ok(out)
}

/// `key`'s list of tables (absent: none).
fn tables<'a>(key: &str, value: Option<&'a Value>) -> Result<Vec<&'a Table>, String> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let items = value
        .as_array()
        .ok_or_else(|| format!("{key}: a list of tables, not {value}"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.as_table()
                .ok_or_else(|| format!("{key}[{i}]: a table, not {t}"))
        })
        .collect()
}
