//! `cuobjdump -res-usage`: per function `REG STACK SHARED LOCAL CONSTANT[n] TEXTURE SURFACE
//! SAMPLER`, read from the cubin itself (so it can disagree with ptxas: on sm_90 `SHARED`
//! includes the 1 KB the compiler reserves in the shared window).

use super::{number_u32, static_regex, ParseError, Tool};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResUsageFunction {
    pub name: String,
    pub registers: Option<u32>,
    pub stack_bytes: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub local_bytes: Option<u32>,
    /// `CONSTANT[n]` by bank.
    pub constant_bytes: BTreeMap<u32, u32>,
    pub textures: Option<u32>,
    pub surfaces: Option<u32>,
    pub samplers: Option<u32>,
    /// Keys this parser has no field for, kept rather than dropped.
    pub other: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResUsage {
    /// `Common: GLOBAL:n` (module-scope device memory).
    pub global_bytes: Option<u32>,
    pub functions: Vec<ResUsageFunction>,
}

impl ResUsage {
    pub fn function(&self, name: &str) -> Option<&ResUsageFunction> {
        self.functions.iter().find(|f| f.name == name)
    }
}

static_regex!(re_function, r"^\s*Function (?P<name>\S+):$");
static_regex!(
    re_pair,
    r"^(?P<key>[A-Z_]+)(?:\[(?P<idx>\d+)\])?:(?P<val>\d+)$"
);
// Headers cuobjdump prints around the resource table (for fatbins: one block per embedded cubin).
static_regex!(
    re_header,
    r"^(?:Resource usage:|Common:|Fatbin (?:elf|ptx) code:|=+|arch = \S+|code version = \[\d+,\d+\]|host = \S+|compile_size = \S+|identifier = .*)$"
);

enum Scope {
    None,
    Common,
    Function(usize),
}

pub fn parse(text: &str) -> Result<ResUsage, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty {
            tool: Tool::ResUsage,
        });
    }
    let mut out = ResUsage::default();
    let mut scope = Scope::None;
    let mut pending_function: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(c) = re_function().captures(raw) {
            if let Some((at, name)) = pending_function.take() {
                return Err(truncated(&name, at));
            }
            out.functions.push(ResUsageFunction {
                name: c["name"].to_string(),
                ..Default::default()
            });
            scope = Scope::Function(out.functions.len() - 1);
            pending_function = Some((lineno, c["name"].to_string()));
            continue;
        }
        if re_header().is_match(line) {
            if line == "Common:" {
                scope = Scope::Common;
            }
            continue;
        }
        let unrecognized = |expected: &'static str| ParseError::Unrecognized {
            tool: Tool::ResUsage,
            line: lineno,
            text: raw.to_string(),
            expected,
        };
        for token in line.split_whitespace() {
            let c = re_pair()
                .captures(token)
                .ok_or_else(|| unrecognized("`KEY:N` pairs such as `REG:22 STACK:0`"))?;
            let val =
                number_u32(&c["val"]).ok_or_else(|| unrecognized("values that fit 32 bits"))?;
            let idx = c.name("idx").and_then(|m| number_u32(m.as_str()));
            match &scope {
                Scope::None => {
                    return Err(unrecognized(
                        "`Function NAME:` or `Common:` before resource figures",
                    ))
                }
                Scope::Common => {
                    if &c["key"] == "GLOBAL" {
                        out.global_bytes = Some(val);
                    }
                }
                Scope::Function(fi) => {
                    let f = &mut out.functions[*fi];
                    match (&c["key"], idx) {
                        ("REG", None) => f.registers = Some(val),
                        ("STACK", None) => f.stack_bytes = Some(val),
                        ("SHARED", None) => f.shared_bytes = Some(val),
                        ("LOCAL", None) => f.local_bytes = Some(val),
                        ("CONSTANT", Some(bank)) => {
                            f.constant_bytes.insert(bank, val);
                        }
                        ("TEXTURE", None) => f.textures = Some(val),
                        ("SURFACE", None) => f.surfaces = Some(val),
                        ("SAMPLER", None) => f.samplers = Some(val),
                        (key, None) => {
                            f.other.insert(key.to_string(), val);
                        }
                        (key, Some(n)) => {
                            f.other.insert(format!("{key}[{n}]"), val);
                        }
                    }
                    pending_function = None;
                }
            }
        }
    }
    if let Some((at, name)) = pending_function {
        return Err(truncated(&name, at));
    }
    Ok(out)
}

fn truncated(name: &str, line: usize) -> ParseError {
    ParseError::Truncated {
        tool: Tool::ResUsage,
        detail: format!("`Function {name}:` (line {line}) has no resource figures"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\nResource usage:\n Common:\n  GLOBAL:0\n Function copy_cp_async:\n  REG:22 STACK:0 SHARED:9216 LOCAL:0 CONSTANT[0]:552 TEXTURE:0 SURFACE:0 SAMPLER:0\n";

    #[test]
    fn parses_every_key() {
        let r = parse(TEXT).unwrap();
        assert_eq!(r.global_bytes, Some(0));
        let f = r.function("copy_cp_async").unwrap();
        assert_eq!(
            (f.registers, f.stack_bytes, f.shared_bytes, f.local_bytes),
            (Some(22), Some(0), Some(9216), Some(0))
        );
        assert_eq!(f.constant_bytes.get(&0), Some(&552));
        assert_eq!(
            (f.textures, f.surfaces, f.samplers),
            (Some(0), Some(0), Some(0))
        );
        assert!(f.other.is_empty());
    }

    #[test]
    fn unknown_keys_are_kept() {
        let r = parse(&TEXT.replace("SAMPLER:0", "SAMPLER:0 WIDGET:3")).unwrap();
        assert_eq!(r.functions[0].other.get("WIDGET"), Some(&3));
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse(""),
            Err(ParseError::Empty {
                tool: Tool::ResUsage
            })
        );
        assert!(matches!(
            parse(&TEXT.replace("REG:22", "REG=22")),
            Err(ParseError::Unrecognized { line: 6, .. })
        ));
        let cut = &TEXT[..TEXT.find("  REG").unwrap()];
        assert!(matches!(parse(cut), Err(ParseError::Truncated { .. })));
        assert!(matches!(
            parse("REG:1\n"),
            Err(ParseError::Unrecognized { line: 1, .. })
        ));
    }
}
