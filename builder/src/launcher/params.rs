//! Launcher parameter types as `cuda/kernels.toml` declares them (`name: type`), and their
//! C layout: the size, alignment and offset each argument has in the kernel's parameter
//! buffer under natural C alignment.

use std::fmt;

/// Element type behind a pointer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    U8,
    U16,
    U32,
    U64,
    I32,
    F32,
    F64,
    Bf16,
    F16,
    U8x16,
}

impl Elem {
    pub const ALL: &'static [(&'static str, Elem)] = &[
        ("u8", Elem::U8),
        ("u16", Elem::U16),
        ("u32", Elem::U32),
        ("u64", Elem::U64),
        ("i32", Elem::I32),
        ("f32", Elem::F32),
        ("f64", Elem::F64),
        ("bf16", Elem::Bf16),
        ("f16", Elem::F16),
        ("u8x16", Elem::U8x16),
    ];

    /// The Rust type the generated launcher uses for it.
    pub fn rust(self) -> &'static str {
        match self {
            Elem::U8 => "u8",
            Elem::U16 => "u16",
            Elem::U32 => "u32",
            Elem::U64 => "u64",
            Elem::I32 => "i32",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::Bf16 => "::cubins::runtime::Bf16",
            Elem::F16 => "::cubins::runtime::F16",
            Elem::U8x16 => "::cubins::runtime::U8x16",
        }
    }

    /// Alignment a vectorized access through this pointer needs, in bytes.
    pub fn align(self) -> u32 {
        match self {
            Elem::U8 => 1,
            Elem::U16 | Elem::Bf16 | Elem::F16 => 2,
            Elem::U32 | Elem::I32 | Elem::F32 => 4,
            Elem::U64 | Elem::F64 => 8,
            Elem::U8x16 => 16,
        }
    }
}

/// A by-value scalar parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
}

impl Scalar {
    pub const ALL: &'static [(&'static str, Scalar)] = &[
        ("u32", Scalar::U32),
        ("i32", Scalar::I32),
        ("u64", Scalar::U64),
        ("i64", Scalar::I64),
        ("f32", Scalar::F32),
        ("f64", Scalar::F64),
    ];

    pub fn rust(self) -> &'static str {
        Scalar::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    pub fn size(self) -> u32 {
        match self {
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            Scalar::U64 | Scalar::I64 | Scalar::F64 => 8,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamType {
    /// `*const T` / `*mut T`: a device pointer (8 bytes).
    Ptr {
        mutable: bool,
        elem: Elem,
    },
    Scalar(Scalar),
    /// `tensor_map`: a TMA descriptor (`CUtensorMap`, 128 bytes, 64-byte aligned) passed by
    /// value, which the kernel declares `const __grid_constant__ CUtensorMap`.
    TensorMap,
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Ptr { mutable, elem } => {
                let name = Elem::ALL
                    .iter()
                    .find(|(_, e)| e == elem)
                    .map(|(n, _)| *n)
                    .unwrap_or("?");
                write!(f, "*{} {name}", if *mutable { "mut" } else { "const" })
            }
            ParamType::Scalar(s) => f.write_str(s.rust()),
            ParamType::TensorMap => f.write_str(TENSOR_MAP),
        }
    }
}

/// How `kernels.toml` spells [`ParamType::TensorMap`].
pub const TENSOR_MAP: &str = "tensor_map";

/// Size and alignment of a C type, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub size: u32,
    pub align: u32,
}

/// One declared parameter with its place in the parameter buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
    pub offset: u32,
    pub size: u32,
}

impl Param {
    /// `n_vec: u64`, as kernels.toml spells it.
    pub fn declaration(&self) -> String {
        format!("{}: {}", self.name, self.ty)
    }
}

const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "gen", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Parses one `name: type` declaration.
pub fn parse_type(text: &str) -> Result<ParamType, String> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix('*') {
        let rest = rest.trim_start();
        let (mutable, elem) = if let Some(e) = rest.strip_prefix("const ") {
            (false, e.trim())
        } else if let Some(e) = rest.strip_prefix("mut ") {
            (true, e.trim())
        } else {
            return Err(format!("pointer type `{t}` must be `*const T` or `*mut T`"));
        };
        let names: Vec<&str> = Elem::ALL.iter().map(|(n, _)| *n).collect();
        return Elem::ALL
            .iter()
            .find(|(n, _)| *n == elem)
            .map(|(_, e)| ParamType::Ptr { mutable, elem: *e })
            .ok_or_else(|| {
                format!(
                    "unknown pointee `{elem}` in `{t}`; pointees are: {}",
                    names.join(" ")
                )
            });
    }
    if let Some((_, s)) = Scalar::ALL.iter().find(|(n, _)| *n == t) {
        return Ok(ParamType::Scalar(*s));
    }
    if t == TENSOR_MAP {
        return Ok(ParamType::TensorMap);
    }
    let scalars: Vec<&str> = Scalar::ALL.iter().map(|(n, _)| *n).collect();
    Err(format!(
        "unknown type `{t}`: expected `*const T`, `*mut T`, a scalar ({}) or `{TENSOR_MAP}`",
        scalars.join(" ")
    ))
}

pub fn layout_of(ty: &ParamType) -> Layout {
    match ty {
        ParamType::Ptr { .. } => Layout { size: 8, align: 8 },
        ParamType::Scalar(s) => Layout {
            size: s.size(),
            align: s.size(),
        },
        ParamType::TensorMap => Layout {
            size: 128,
            align: 64,
        },
    }
}

/// Parses a kernel's `params` list and lays it out; every problem is reported, not just the first.
pub fn parse_params(kernel: &str, decls: &[String]) -> Result<Vec<Param>, Vec<String>> {
    let mut params = Vec::new();
    let mut errors = Vec::new();
    let mut offset = 0u32;
    for (i, decl) in decls.iter().enumerate() {
        let Some((name, ty)) = decl.split_once(':') else {
            errors.push(format!(
                "kernels.toml: `{kernel}` parameter {i} `{decl}`: expected `name: type`"
            ));
            continue;
        };
        let name = name.trim();
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !RUST_KEYWORDS.contains(&name);
        if !valid {
            errors.push(format!(
                "kernels.toml: `{kernel}` parameter {i} `{decl}`: `{name}` is not usable as a Rust parameter name"
            ));
            continue;
        }
        if params.iter().any(|p: &Param| p.name == name) {
            errors.push(format!(
                "kernels.toml: `{kernel}` parameter {i}: `{name}` is declared twice"
            ));
            continue;
        }
        match parse_type(ty) {
            Ok(ty) => {
                let l = layout_of(&ty);
                offset = offset.div_ceil(l.align.max(1)) * l.align.max(1);
                params.push(Param {
                    name: name.to_string(),
                    ty,
                    offset,
                    size: l.size,
                });
                offset += l.size;
            }
            Err(e) => errors.push(format!(
                "kernels.toml: `{kernel}` parameter {i} `{decl}`: {e}"
            )),
        }
    }
    if errors.is_empty() {
        Ok(params)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decls(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn natural_alignment_offsets() {
        let p = parse_params(
            "k",
            &decls(&["a: u32", "b: *mut bf16", "s: i32", "n: u64", "x: f32"]),
        )
        .unwrap();
        let got: Vec<(u32, u32)> = p.iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(got, vec![(0, 4), (8, 8), (16, 4), (24, 8), (32, 4)]);
        assert_eq!(
            p[1].ty,
            ParamType::Ptr {
                mutable: true,
                elem: Elem::Bf16
            }
        );
        assert_eq!(p[1].declaration(), "b: *mut bf16");
    }

    #[test]
    fn a_tensor_map_is_128_bytes_on_a_64_byte_boundary() {
        let p = parse_params("k", &decls(&["m: i32", "map: tensor_map", "n: u32"])).unwrap();
        let got: Vec<(u32, u32)> = p.iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(got, vec![(0, 4), (64, 128), (192, 4)]);
        assert_eq!(p[1].ty, ParamType::TensorMap);
        assert_eq!(p[1].declaration(), "map: tensor_map");
    }

    #[test]
    fn reports_every_bad_declaration() {
        let errs = parse_params(
            "k",
            &decls(&[
                "src *const u8",
                "type: u32",
                "p: *u8",
                "q: *const u9",
                "r: Missing",
                "a: u32",
                "a: u64",
            ]),
        )
        .unwrap_err();
        assert_eq!(errs.len(), 6, "{errs:#?}");
        assert!(errs[0].contains("expected `name: type`"));
        assert!(errs[1].contains("`type` is not usable"));
        assert!(errs[2].contains("`*const T` or `*mut T`"));
        assert!(errs[3].contains("unknown pointee `u9`") && errs[3].contains("u8x16"));
        assert!(
            errs[4].contains("unknown type `Missing`")
                && errs[4].contains("i64")
                && errs[4].contains("tensor_map")
        );
        assert!(errs[5].contains("`a` is declared twice"));
    }
}
