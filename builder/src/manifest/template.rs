//! Filling a family's values for one combination of its axes (docs/manifest.md):
//! `{axis}` and `{axis.field}` take the axis value (a table value's `name`) or its field;
//! `"@set"` is a named list, and inside a list it splices that list in. A string that is
//! exactly one placeholder takes the value as it is (an integer stays an integer); values
//! taken from axes and sets are filled in turn. `{{` and `}}` are literal braces.

use std::collections::BTreeMap;
use toml::Value;

/// How deep values taken from axes and sets may bring in further ones (a value naming
/// itself would never end).
const MAX_DEPTH: usize = 8;

/// What one combination fills in: the value of each axis, and the named sets.
pub(super) struct Scope<'a> {
    pub axes: &'a BTreeMap<String, Value>,
    pub sets: &'a BTreeMap<String, Vec<Value>>,
}

impl Scope<'_> {
    /// `value` filled in; `at` is its key path (`contract.require[1]`) for errors.
    pub fn fill(&self, value: &Value, at: &str) -> Result<Value, String> {
        self.fill_at(value, at, 0)
    }

    /// An axis's values: a list whose `"@set"` items splice in (sets within sets too), or one
    /// `"@set"`. The values stay templates, filled where a combination takes them.
    pub fn axis_values(&self, value: &Value, at: &str) -> Result<Vec<Value>, String> {
        let not_a_list = || format!("{at}: an axis is a list of values or `\"@SET\"`, not {value}");
        match value {
            Value::String(s) => {
                let name = set_name(s).ok_or_else(not_a_list)?;
                self.spliced(self.set(name, at)?, at, 1)
            }
            Value::Array(items) => self.spliced(items, at, 0),
            _ => Err(not_a_list()),
        }
    }

    fn spliced(&self, items: &[Value], at: &str, depth: usize) -> Result<Vec<Value>, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "{at}: sets nest more than {MAX_DEPTH} deep (does one name itself?)"
            ));
        }
        let mut out = Vec::new();
        for item in items {
            match item.as_str().and_then(set_name) {
                Some(name) => out.extend(self.spliced(self.set(name, at)?, at, depth + 1)?),
                None => out.push(item.clone()),
            }
        }
        Ok(out)
    }

    fn fill_at(&self, value: &Value, at: &str, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "{at}: values taken from axes and sets nest more than {MAX_DEPTH} deep (does one name itself?)"
            ));
        }
        match value {
            Value::String(s) => self.fill_string(s, at, depth),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{at}[{i}]");
                    match item.as_str().and_then(set_name) {
                        Some(name) => {
                            for v in self.spliced(self.set(name, &at)?, &at, depth + 1)? {
                                out.push(self.fill_at(&v, &at, depth + 1)?);
                            }
                        }
                        None => out.push(self.fill_at(item, &at, depth)?),
                    }
                }
                Ok(Value::Array(out))
            }
            Value::Table(t) => {
                let mut out = toml::Table::new();
                for (k, v) in t {
                    let at = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    out.insert(k.clone(), self.fill_at(v, &at, depth)?);
                }
                Ok(Value::Table(out))
            }
            other => Ok(other.clone()),
        }
    }

    fn fill_string(&self, s: &str, at: &str, depth: usize) -> Result<Value, String> {
        if let Some(name) = set_name(s) {
            let list = Value::Array(self.set(name, at)?.clone());
            return self.fill_at(&list, at, depth + 1);
        }
        let pieces = pieces(s).map_err(|e| format!("{at}: {e} in {s:?}"))?;
        if let [Piece::Placeholder(p)] = pieces.as_slice() {
            return self.fill_at(&self.lookup(p, at)?, at, depth + 1);
        }
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.push_str(&t),
                Piece::Placeholder(p) => match self.fill_at(&self.lookup(&p, at)?, at, depth + 1)? {
                    Value::String(v) => out.push_str(&v),
                    Value::Integer(v) => out.push_str(&v.to_string()),
                    other => {
                        return Err(format!(
                            "{at}: `{{{p}}}` is {} ({other}); only a string that is exactly `{{{p}}}` takes it",
                            kind(&other)
                        ))
                    }
                },
            }
        }
        Ok(Value::String(out))
    }

    /// The value `path` (`tile` or `tile.threads`) names in this combination.
    fn lookup(&self, path: &str, at: &str) -> Result<Value, String> {
        let (axis, fields) = match path.split_once('.') {
            Some((axis, fields)) => (axis, Some(fields)),
            None => (path, None),
        };
        let Some(value) = self.axes.get(axis) else {
            let axes: Vec<&str> = self.axes.keys().map(String::as_str).collect();
            let known = if axes.is_empty() {
                "this family has no axes".to_string()
            } else {
                format!("axes: {}", axes.join(", "))
            };
            return Err(format!("{at}: unknown placeholder `{{{path}}}` ({known})"));
        };
        let Some(fields) = fields else {
            return Ok(match value {
                Value::Table(_) => Value::String(key_text(value)),
                scalar => scalar.clone(),
            });
        };
        let mut found = value;
        for field in fields.split('.') {
            found = match found.as_table().and_then(|t| t.get(field)) {
                Some(v) => v,
                None => {
                    return Err(format!(
                        "{at}: `{{{path}}}`: axis `{axis}` value `{}` has no field `{fields}`",
                        key_text(value)
                    ))
                }
            };
        }
        Ok(found.clone())
    }

    fn set(&self, name: &str, at: &str) -> Result<&Vec<Value>, String> {
        self.sets.get(name).ok_or_else(|| {
            let names: Vec<String> = self.sets.keys().map(|k| format!("@{k}")).collect();
            let known = if names.is_empty() {
                "no [sets] are defined".to_string()
            } else {
                format!("sets: {}", names.join(", "))
            };
            format!("{at}: unknown set `@{name}` ({known})")
        })
    }
}

/// The text that names an axis value: a table's `name`, else the value itself.
pub(super) fn key_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Table(t) => t.get("name").map_or_else(String::new, key_text),
        other => other.to_string(),
    }
}

/// `NAME` of a string that is exactly `@NAME`.
fn set_name(s: &str) -> Option<&str> {
    let name = s.strip_prefix('@')?;
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then_some(name)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Table(_) => "a table",
        Value::Array(_) => "a list",
        Value::Boolean(_) => "a boolean",
        Value::Float(_) => "a float",
        _ => "a date",
    }
}

#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    Placeholder(String),
}

/// `a_{dtype}_{{x}}` as text `a_`, placeholder `dtype`, text `_{x}`.
fn pieces(s: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => return Err("`}` without `{` (write `}}` for a literal brace)".into()),
            '{' => {
                let mut path = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => path.push(c),
                        None => return Err("unclosed `{` (write `{{` for a literal brace)".into()),
                    }
                }
                let word = |w: &str| {
                    !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                };
                if !path.split('.').all(word) {
                    return Err(format!(
                        "`{{{path}}}` is not a placeholder (`{{axis}}` or `{{axis.field}}`; `{{{{` for a literal brace)"
                    ));
                }
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Placeholder(path));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() || out.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        toml::from_str::<toml::Table>(&format!("v = {s}")).unwrap()["v"].clone()
    }

    fn scope_fill(axes: &str, sets: &str, value: &str) -> Result<Value, String> {
        let axes: BTreeMap<String, Value> = toml::from_str::<toml::Table>(axes)
            .unwrap()
            .into_iter()
            .collect();
        let sets: BTreeMap<String, Vec<Value>> = toml::from_str(sets).unwrap();
        Scope {
            axes: &axes,
            sets: &sets,
        }
        .fill(&v(value), "k")
    }

    const AXES: &str = r#"
        dtype = { name = "fp16", ty = "f16" }
        layout = "nn"
        threads = 256
        tile = { name = "128x128", threads = 128, arch = { sm_86 = 1 } }
    "#;

    #[test]
    fn placeholders_fill_names_fields_and_whole_values() {
        let fill = |s| scope_fill(AXES, "", s).unwrap();
        assert_eq!(
            fill(r#""gemm_{dtype}_{layout}_{tile}""#),
            v(r#""gemm_fp16_nn_128x128""#)
        );
        assert_eq!(fill(r#""*const {dtype.ty}""#), v(r#""*const f16""#));
        // Exactly one placeholder: the value as it is.
        assert_eq!(fill(r#""{tile.threads}""#), v("128"));
        assert_eq!(fill(r#""{threads}""#), v("256"));
        assert_eq!(fill(r#""{tile.arch}""#), v("{ sm_86 = 1 }"));
        assert_eq!(fill(r#"["{tile.threads}", 64]"#), v("[128, 64]"));
        // Inside a longer string an integer is its digits.
        assert_eq!(fill(r#""n{tile.threads}""#), v(r#""n128""#));
        assert_eq!(fill(r#""{{literal}} {layout}}}""#), v(r#""{literal} nn}""#));
        assert_eq!(fill(r#"{ a = ["{layout}"] }"#), v(r#"{ a = ["nn"] }"#));
    }

    #[test]
    fn sets_are_whole_values_or_spliced_and_filled() {
        let sets = r#"
            params = ["x: *const {dtype.ty}", "n: u32"]
            more = ["@params"]
        "#;
        let fill = |s| scope_fill(AXES, sets, s);
        assert_eq!(
            fill(r#""@params""#).unwrap(),
            v(r#"["x: *const f16", "n: u32"]"#)
        );
        assert_eq!(
            fill(r#"["@params", "eps: f32"]"#).unwrap(),
            v(r#"["x: *const f16", "n: u32", "eps: f32"]"#)
        );
        assert_eq!(
            fill(r#""@more""#).unwrap(),
            v(r#"["x: *const f16", "n: u32"]"#)
        );
        // Not a reference: other text starting with `@`.
        assert_eq!(fill(r#""@ home""#).unwrap(), v(r#""@ home""#));
        let e = fill(r#""@parms""#).unwrap_err();
        assert!(
            e.contains("k: unknown set `@parms` (sets: @more, @params)"),
            "{e}"
        );
    }

    #[test]
    fn bad_placeholders_say_which_and_where() {
        let err = |s| scope_fill(AXES, "", s).unwrap_err();
        let e = err(r#""{dtyp}""#);
        assert!(
            e.contains("k: unknown placeholder `{dtyp}` (axes: dtype, layout, threads, tile)"),
            "{e}"
        );
        let e = err(r#"["a", "{tile.regs}"]"#);
        assert!(
            e.contains("k[1]: `{tile.regs}`: axis `tile` value `128x128` has no field `regs`"),
            "{e}"
        );
        let e = err(r#""{layout.ty}""#);
        assert!(
            e.contains("axis `layout` value `nn` has no field `ty`"),
            "{e}"
        );
        let e = err(r#""x{tile.arch}""#);
        assert!(e.contains("`{tile.arch}` is a table"), "{e}");
        assert!(err(r#""{dtype""#).contains("unclosed `{`"));
        assert!(err(r#""a}b""#).contains("`}` without `{`"));
        assert!(err(r#""{a b}""#).contains("`{a b}` is not a placeholder"));
        assert!(err(r#""{}""#).contains("`{}` is not a placeholder"));
        let e = scope_fill("", "", r#"{ c = "{dtype}" }"#).unwrap_err();
        assert!(
            e.contains("k.c: unknown placeholder `{dtype}` (this family has no axes)"),
            "{e}"
        );
    }

    #[test]
    fn a_value_naming_itself_is_an_error_not_a_hang() {
        let e = scope_fill(r#"a = { name = "x", f = "{a.f}" }"#, "", r#""{a.f}""#).unwrap_err();
        assert!(e.contains("nest more than 8 deep"), "{e}");
        let e = scope_fill("", "s = [\"@s\"]", r#""@s""#).unwrap_err();
        assert!(e.contains("nest more than 8 deep"), "{e}");
    }

    #[test]
    fn axis_values_splice_sets_and_stay_templates() {
        let axes = BTreeMap::new();
        let sets: BTreeMap<String, Vec<Value>> = toml::from_str(r#"d = ["bf16", "f16"]"#).unwrap();
        let s = Scope {
            axes: &axes,
            sets: &sets,
        };
        assert_eq!(
            s.axis_values(&v(r#""@d""#), "a").unwrap(),
            vec![v(r#""bf16""#), v(r#""f16""#)]
        );
        assert_eq!(
            s.axis_values(&v(r#"["@d", "{x}"]"#), "a").unwrap(),
            vec![v(r#""bf16""#), v(r#""f16""#), v(r#""{x}""#)]
        );
        assert!(s
            .axis_values(&v(r#""bf16""#), "a")
            .unwrap_err()
            .contains("a list of values"));
        assert!(s
            .axis_values(&v("3"), "a")
            .unwrap_err()
            .contains("a list of values"));
    }
}
