//! Element types: each launcher parameter's type in `kernels.toml` against the kernel's own
//! declaration ([`super::signature`]). The size check ([`super::abi`]) passes a `*const f32`
//! for a `const uint4*`; this one does not.
//!
//! Compared: pointer or value; for pointers the pointee (`*const f32` is `const float*`) and
//! its constness (`*const T` is `const T*`, `*mut T` is `T*`); for scalars the type with its
//! signedness (`u32` is `unsigned int` / `uint32_t`, `i32` is `int`).
//! A `void*` takes any pointee of the right constness (the declaration says nothing more).
//! Not compared: a C type without a fixed meaning here (`long`, whose width is the
//! platform's; a typedef or template parameter the declaration leaves unresolved; pointers to
//! structs or to pointers). Those parameters are reported as not checked.

use super::params::{Elem, Param, ParamType, Scalar};
use super::signature::CType;

/// C spellings of the pointees `kernels.toml` knows.
const ELEMS: &[(&str, Elem)] = &[
    ("unsigned char", Elem::U8),
    ("uint8_t", Elem::U8),
    ("unsigned short", Elem::U16),
    ("unsigned short int", Elem::U16),
    ("uint16_t", Elem::U16),
    ("unsigned", Elem::U32),
    ("unsigned int", Elem::U32),
    ("uint32_t", Elem::U32),
    ("unsigned long long", Elem::U64),
    ("unsigned long long int", Elem::U64),
    ("uint64_t", Elem::U64),
    ("size_t", Elem::U64),
    ("int", Elem::I32),
    ("signed", Elem::I32),
    ("signed int", Elem::I32),
    ("int32_t", Elem::I32),
    ("float", Elem::F32),
    ("double", Elem::F64),
    ("__nv_bfloat16", Elem::Bf16),
    ("nv_bfloat16", Elem::Bf16),
    ("__half", Elem::F16),
    ("half", Elem::F16),
    ("uint4", Elem::U8x16),
];

/// C spellings of the by-value scalars `kernels.toml` knows.
const SCALARS: &[(&str, Scalar)] = &[
    ("unsigned", Scalar::U32),
    ("unsigned int", Scalar::U32),
    ("uint32_t", Scalar::U32),
    ("int", Scalar::I32),
    ("signed", Scalar::I32),
    ("signed int", Scalar::I32),
    ("int32_t", Scalar::I32),
    ("unsigned long long", Scalar::U64),
    ("unsigned long long int", Scalar::U64),
    ("uint64_t", Scalar::U64),
    ("size_t", Scalar::U64),
    ("long long", Scalar::I64),
    ("long long int", Scalar::I64),
    ("signed long long", Scalar::I64),
    ("int64_t", Scalar::I64),
    ("ptrdiff_t", Scalar::I64),
    ("float", Scalar::F32),
    ("double", Scalar::F64),
];

/// Builtin type names that are none of the above (`long` is left out: its width is the
/// platform's, so it stays unchecked).
const OTHER_KNOWN: &[&str] = &[
    "CUtensorMap",
    "CUtensorMap_st",
    "void",
    "bool",
    "char",
    "signed char",
    "short",
    "int8_t",
    "int16_t",
    "long double",
];

fn elem_of(c: &str) -> Option<Elem> {
    ELEMS.iter().find(|(n, _)| *n == c).map(|(_, e)| *e)
}

fn scalar_of(c: &str) -> Option<Scalar> {
    SCALARS.iter().find(|(n, _)| *n == c).map(|(_, s)| *s)
}

/// The TMA descriptor type, as a declaration or the demangled signature spells it.
fn is_tensor_map(c: &str) -> bool {
    matches!(c, "CUtensorMap" | "CUtensorMap_st")
}

/// Whether `c` names a type this module knows (so that a different declared type is a
/// mismatch, not an unknown).
fn is_known(c: &str) -> bool {
    elem_of(c).is_some() || scalar_of(c).is_some() || OTHER_KNOWN.contains(&c)
}

/// The outcome of comparing one parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Same,
    Differs,
    /// Not compared, and why.
    Unknown(String),
}

/// `ty` (kernels.toml) against `c` (the kernel's declaration).
pub fn compare(ty: &ParamType, c: &CType) -> Verdict {
    match (ty, c) {
        (
            ParamType::Ptr { mutable, elem },
            CType::Pointer {
                pointee,
                pointee_const,
            },
        ) => {
            if *mutable == *pointee_const {
                Verdict::Differs
            } else if pointee == "void" {
                Verdict::Same
            } else if let Some(e) = elem_of(pointee) {
                if e == *elem {
                    Verdict::Same
                } else {
                    Verdict::Differs
                }
            } else if is_known(pointee) {
                Verdict::Differs
            } else {
                Verdict::Unknown(format!(
                    "the pointee `{pointee}` is not a type the check maps"
                ))
            }
        }
        (ParamType::Scalar(s), CType::Value(v)) => match scalar_of(v) {
            Some(d) if d == *s => Verdict::Same,
            Some(_) => Verdict::Differs,
            None if is_known(v) => Verdict::Differs,
            None => Verdict::Unknown(format!("`{v}` is not a type the check maps")),
        },
        (ParamType::TensorMap, CType::Value(v)) if is_tensor_map(v) => Verdict::Same,
        (ParamType::TensorMap, CType::Value(v)) if !is_known(v) => {
            Verdict::Unknown(format!("`{v}` is not a type the check maps"))
        }
        (ParamType::Ptr { .. }, CType::Value(v)) if !is_known(v) => {
            Verdict::Unknown(format!("`{v}` is not a type the check maps"))
        }
        (_, CType::Other(t)) => Verdict::Unknown(format!("`{t}` is not a type the check maps")),
        _ => Verdict::Differs,
    }
}

/// How `kernels.toml` would spell the declared type, when it can.
pub fn manifest_spelling(c: &CType) -> Option<String> {
    let name_of = |e: Elem| Elem::ALL.iter().find(|(_, x)| *x == e).map(|(n, _)| *n);
    match c {
        CType::Pointer {
            pointee,
            pointee_const,
        } => {
            let elem = if pointee == "void" {
                Some("u8")
            } else {
                elem_of(pointee).and_then(name_of)
            }?;
            Some(format!(
                "*{} {elem}",
                if *pointee_const { "const" } else { "mut" }
            ))
        }
        CType::Value(v) if is_tensor_map(v) => Some(super::params::TENSOR_MAP.to_string()),
        CType::Value(v) => scalar_of(v).map(|s| s.rust().to_string()),
        CType::Other(_) => None,
    }
}

/// Findings for one kernel: errors (mismatches) and parameters left unchecked.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Findings {
    pub errors: Vec<String>,
    pub unchecked: Vec<String>,
}

/// Compares a launcher's parameters with the declaration `declared`, which `source` names
/// (`the declaration in rmsnorm.cu`, `its mangled signature`).
pub fn check(kernel: &str, source: &str, params: &[Param], declared: &[CType]) -> Findings {
    let mut f = Findings::default();
    if params.len() != declared.len() {
        // The parameter table check reports the count; element types cannot be paired up.
        f.unchecked.push(format!(
            "{kernel}: kernels.toml declares {} parameters, {source} has {}: types not compared",
            params.len(),
            declared.len()
        ));
        return f;
    }
    for (i, (p, c)) in params.iter().zip(declared).enumerate() {
        match compare(&p.ty, c) {
            Verdict::Same => {}
            Verdict::Differs => {
                let hint = manifest_spelling(c)
                    .map(|t| format!("; in kernels.toml that is `{}: {t}`", p.name))
                    .unwrap_or_default();
                f.errors.push(format!(
                    "{kernel}: parameter {i} (`{}`): kernels.toml says `{}`, {source} says `{c}`{hint}",
                    p.declaration(),
                    p.ty
                ));
            }
            Verdict::Unknown(why) => f.unchecked.push(format!(
                "{kernel}: parameter {i} (`{}`) not checked: {why} ({source} says `{c}`)",
                p.declaration()
            )),
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::super::params::parse_params;
    use super::super::signature::parse_param_list;
    use super::*;

    fn run(decls: &[&str], c: &str) -> Findings {
        let d: Vec<String> = decls.iter().map(|s| s.to_string()).collect();
        let params = parse_params("k", &d).unwrap();
        check(
            "k",
            "the declaration in k.cu",
            &params,
            &parse_param_list(c, true).unwrap(),
        )
    }

    #[test]
    fn matching_types_pass() {
        let f = run(
            &[
                "src: *const u8x16",
                "dst: *mut u8x16",
                "n: u64",
                "c: *mut u8",
                "m: i32",
                "flags: u32",
                "x: *const bf16",
            ],
            "const uint4* __restrict__ src, uint4* dst, uint64_t n, void* c, int m, unsigned flags, \
             const __nv_bfloat16* x",
        );
        assert_eq!(f, Findings::default());
    }

    #[test]
    fn a_retyped_pointer_names_the_parameter_and_both_types() {
        let f = run(
            &["src: *const f32", "dst: *mut u8x16", "n: u64"],
            "const uint4* __restrict__ src, uint4* __restrict__ dst, uint64_t n_vec",
        );
        assert_eq!(
            f.errors,
            vec!["k: parameter 0 (`src: *const f32`): kernels.toml says `*const f32`, the declaration in k.cu \
                  says `const uint4*`; in kernels.toml that is `src: *const u8x16`"
                .to_string()]
        );
        assert!(f.unchecked.is_empty());
    }

    #[test]
    fn constness_signedness_and_kind_differences_are_errors() {
        let f = run(
            &["x: *mut f32", "n: i32", "p: *const f32", "q: u64", "r: f32"],
            "const float* x, unsigned n, float p, float* q, int r",
        );
        assert_eq!(f.errors.len(), 5, "{f:#?}");
        assert!(
            f.errors[0].contains("says `const float*`; in kernels.toml that is `x: *const f32`")
        );
        assert!(f.errors[1].contains("says `unsigned`; in kernels.toml that is `n: u32`"));
    }

    #[test]
    fn a_tensor_map_matches_a_grid_constant_cutensormap_and_nothing_else() {
        let f = run(
            &["a: tensor_map", "b: tensor_map", "m: i32"],
            "const __grid_constant__ CUtensorMap a, const CUtensorMap_st b, int m",
        );
        assert_eq!(f, Findings::default());
        let f = run(
            &["a: tensor_map", "b: u64"],
            "const float* a, const __grid_constant__ CUtensorMap b",
        );
        assert_eq!(f.errors.len(), 2, "{f:#?}");
        assert!(
            f.errors[1].contains("in kernels.toml that is `b: tensor_map`"),
            "{f:#?}"
        );
    }

    #[test]
    fn types_without_a_fixed_meaning_are_reported_unchecked() {
        let f = run(
            &["x: *const f32", "n: u64", "y: *mut f32"],
            "const T* x, long n, MyAlias y",
        );
        assert!(f.errors.is_empty(), "{f:#?}");
        assert_eq!(f.unchecked.len(), 3, "{f:#?}");
        assert!(f.unchecked[0].contains("pointee `T` is not a type the check maps"));
        let f = run(&["x: *const f32"], "const float* x, int n");
        assert!(f.errors.is_empty() && f.unchecked[0].contains("types not compared"));
    }
}
