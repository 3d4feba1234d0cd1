//! Parameter types as the kernel itself declares them, for the element-type half of the
//! launcher check (the cubin's parameter table in [`super::abi`] has sizes only).
//!
//! Sources, best first:
//! - a C++ entry point's mangled symbol: its demangled signature lists every parameter type
//!   (`void ns::scale<float, 4>(float const*, float*, float)`);
//! - an `extern "C"` entry point (no signature in the symbol): its declaration in the kernel
//!   file after nvcc's own preprocessor has run (`nvcc -E`, with the build's flags), so that
//!   declarations written inside macros and `#if` branches read as the compiler sees them.
//!
//! Neither the cubin nor the PTX carries more: `.nv.info` gives offset and size, and this
//! toolkit's PTX declares every pointer parameter as `.param .u64` (no `.ptr .align`).
//! A type these declarations spell with a name this module cannot map (a typedef of its own,
//! a template parameter, a pointer to a struct) leaves that parameter unchecked, and says so.

use crate::arch::Arch;
use crate::pipeline::BuildOutput;
use crate::toolchain::Toolchain;
use std::collections::BTreeMap;
use std::path::Path;

/// One parameter's type as C spells it, reduced to what the check compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CType {
    /// `const float* __restrict__` is `Pointer { pointee: "float", pointee_const: true }`.
    Pointer {
        pointee: String,
        pointee_const: bool,
    },
    /// A value: a scalar (`unsigned int`, `uint32_t`) or a struct (`cubins::RowParams`).
    Value(String),
    /// Something this module does not reduce (a pointer to pointer, a reference, an array).
    Other(String),
}

impl std::fmt::Display for CType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CType::Pointer {
                pointee,
                pointee_const: true,
            } => write!(f, "const {pointee}*"),
            CType::Pointer { pointee, .. } => write!(f, "{pointee}*"),
            CType::Value(t) | CType::Other(t) => f.write_str(t),
        }
    }
}

/// A kernel's declared parameter list, or why there is none to compare with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    Params(Vec<CType>),
    /// The name is declared more than once with different parameters.
    Ambiguous,
}

/// Words that qualify a type without changing what the check compares.
const IGNORED: &[&str] = &[
    "volatile",
    "__restrict__",
    "__restrict",
    "restrict",
    "struct",
    "class",
    "register",
    "__grid_constant__",
];

/// Words that are part of a builtin type name, never a parameter name.
const TYPE_WORDS: &[&str] = &[
    "void", "bool", "char", "short", "int", "long", "signed", "unsigned", "float", "double",
];

/// Splits `text` at top-level commas (outside `()`, `<>`, `[]`, `{}`).
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Drops `__attribute__((...))` groups (the preprocessor's spelling of `__grid_constant__`,
/// alignment and the like).
fn without_attributes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("__attribute__") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "__attribute__".len()..];
        rest = match balanced_group(after.trim_start()) {
            Some((_, tail)) => tail,
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// `text` starts with `(`: the group's inside and what follows its closing `)`.
fn balanced_group(text: &str) -> Option<(&str, &str)> {
    if !text.starts_with('(') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[1..i], &text[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// Tokens of one parameter: identifiers (with `::` paths and template arguments kept
/// together) and the punctuation `*`, `&`, `[`.
fn tokens(param: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut angle = 0usize;
    for c in param.chars() {
        if angle > 0 {
            cur.push(c);
            match c {
                '<' => angle += 1,
                '>' => angle -= 1,
                _ => {}
            }
            continue;
        }
        match c {
            '<' => {
                angle = 1;
                cur.push(c);
            }
            '*' | '&' | '[' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(c.to_string());
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn is_identifier(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One parameter's type. `named`: a declaration in source (its last identifier, when it is
/// not a builtin type word, is the parameter's name); demangled signatures have no names.
pub fn parse_param(text: &str, named: bool) -> Option<CType> {
    let text = without_attributes(text);
    let text = text.split('=').next().unwrap_or_default(); // a default argument
    let mut toks: Vec<String> = tokens(text)
        .into_iter()
        .filter(|t| !IGNORED.contains(&t.as_str()))
        .collect();
    let type_words = toks.iter().filter(|t| is_type_token(t)).count();
    if named && type_words > 1 {
        if let Some(last) = toks.last() {
            if is_identifier(last) && !TYPE_WORDS.contains(&last.as_str()) {
                toks.pop();
            }
        }
    }
    if toks.is_empty() {
        return None;
    }
    let spelled = toks.join(" ").replace(" *", "*");
    let stars: Vec<usize> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| *t == "*")
        .map(|(i, _)| i)
        .collect();
    let odd = toks.iter().any(|t| t == "&" || t == "[");
    // Only `const` may follow the star: `float* const p` is a const pointer to mutable data.
    let (before, after) = match stars.as_slice() {
        [] => (&toks[..], &toks[..0]),
        [p] => (&toks[..*p], &toks[*p + 1..]),
        _ => return Some(CType::Other(spelled)),
    };
    if odd || after.iter().any(|t| t != "const") {
        return Some(CType::Other(spelled));
    }
    let base: Vec<&str> = before
        .iter()
        .map(String::as_str)
        .filter(|t| *t != "const")
        .collect();
    if base.is_empty() {
        return None;
    }
    let base = normalize_base(&base.join(" "));
    Some(if stars.is_empty() {
        CType::Value(base)
    } else {
        CType::Pointer {
            pointee: base,
            pointee_const: before.iter().any(|t| t == "const"),
        }
    })
}

/// A token that belongs to the type (not `*`, not `const`).
fn is_type_token(t: &str) -> bool {
    t != "*" && t != "&" && t != "[" && t != "const"
}

/// `::uint32_t` and `std::uint32_t` are `uint32_t`; `int unsigned` reads as written.
fn normalize_base(base: &str) -> String {
    let b = base.trim().trim_start_matches("::");
    b.strip_prefix("std::").unwrap_or(b).to_string()
}

/// Every parameter of a parameter list (`void` or nothing: none).
pub fn parse_param_list(list: &str, named: bool) -> Option<Vec<CType>> {
    let list = list.trim();
    if list.is_empty() || list == "void" {
        return Some(Vec::new());
    }
    split_top_level(list)
        .into_iter()
        .map(|p| parse_param(p, named))
        .collect()
}

/// The parameters of a C++ entry point from its demangled name (`short` is the name without
/// return type and parameters, as [`crate::analyze::KernelNames`] gives it).
pub fn demangled_params(demangled: &str, short: &str) -> Option<Vec<CType>> {
    let at = demangled.find(short)? + short.len();
    let (inside, _) = balanced_group(&demangled[at..])?;
    parse_param_list(inside, false)
}

/// What follows a `__global__` up to the kernel's name: the return type and attributes.
const SKIPPED_CALLS: &[&str] = &[
    "__attribute__",
    "__launch_bounds__",
    "__cluster_dims__",
    "__maxnreg__",
    "__declspec",
    "alignas",
];

/// Every `__global__` function declared in `source` (preprocessed or not), by name.
pub fn declarations(source: &str) -> BTreeMap<String, Declared> {
    let text: String = source
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out: BTreeMap<String, Declared> = BTreeMap::new();
    for marker in ["__attribute__((global))", "__global__"] {
        for (at, _) in text.match_indices(marker) {
            let Some((name, params)) = declaration_after(&text[at + marker.len()..]) else {
                continue;
            };
            let Some(params) = parse_param_list(params, true) else {
                continue;
            };
            out.entry(name)
                .and_modify(|d| {
                    if *d != Declared::Params(params.clone()) {
                        *d = Declared::Ambiguous;
                    }
                })
                .or_insert(Declared::Params(params));
        }
    }
    out
}

/// From just after `__global__`: the function's name and its parameter list's inside.
fn declaration_after(text: &str) -> Option<(String, &str)> {
    let mut rest = text;
    // A declaration's head is short; bound the walk so that stray text cannot make it long.
    for _ in 0..64 {
        rest = rest.trim_start();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        if len == 0 {
            return None;
        }
        let word = &rest[..len];
        let after = rest[len..].trim_start();
        if after.starts_with('(') {
            let (inside, tail) = balanced_group(after)?;
            if SKIPPED_CALLS.contains(&word) {
                rest = tail;
                continue;
            }
            return is_identifier(word).then(|| (word.to_string(), inside));
        }
        rest = after.trim_start_matches(['*', '&']);
    }
    None
}

/// The `__global__` declarations of each kernel file (by file stem), or why they could not
/// be read.
pub type Sources = BTreeMap<String, Result<BTreeMap<String, Declared>, String>>;

/// Runs nvcc's preprocessor on `source` as the build compiles it for `arch` (`flags`: the
/// plan's, include folders too) and returns its output.
pub fn preprocess(
    tc: &Toolchain,
    source: &Path,
    arch: Arch,
    flags: &[String],
) -> Result<String, String> {
    // Straight to nvcc: a wrapper such as sccache caches compiles, not `-E`.
    let out = std::process::Command::new(&tc.nvcc)
        .args(["-E", "-x", "cu"])
        .arg(format!("-arch={}", arch.compute_name()))
        .args(flags)
        .arg(source)
        .output()
        .map_err(|e| format!("running {} -E: {e}", tc.nvcc.display()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`nvcc -E` failed on {}: {}",
            source.display(),
            stderr.lines().next().unwrap_or("no message")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The declarations of every kernel file of `build`, preprocessed for its lowest arch, on up
/// to `parallelism` threads.
pub fn of_build(
    tc: &Toolchain,
    build: &BuildOutput,
    flags: &[String],
    parallelism: usize,
) -> Sources {
    let work: Vec<(&str, &Path, Arch)> = build
        .files
        .iter()
        .filter_map(|f| {
            let arch = f.cubins.iter().map(|c| c.arch).min()?;
            Some((f.name.as_str(), f.source.as_path(), arch))
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Sources::new());
    std::thread::scope(|s| {
        for _ in 0..parallelism.clamp(1, work.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(name, source, arch)) = work.get(i) else {
                    break;
                };
                let r = preprocess(tc, source, arch, flags).map(|text| declarations(&text));
                if let Ok(mut m) = results.lock() {
                    m.insert(name.to_string(), r);
                }
            });
        }
    });
    results.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr(pointee: &str, pointee_const: bool) -> CType {
        CType::Pointer {
            pointee: pointee.into(),
            pointee_const,
        }
    }

    #[test]
    fn parameters_as_source_spells_them() {
        let p = parse_param_list(
            "const __nv_bfloat16* __restrict__ x, float *__restrict__ y, unsigned int n, \
             unsigned flags, const uint64_t count, __attribute__((grid_constant)) const cubins::RowParams p, \
             float const* z, int** pp",
            true,
        )
        .unwrap();
        assert_eq!(
            p,
            vec![
                ptr("__nv_bfloat16", true),
                ptr("float", false),
                CType::Value("unsigned int".into()),
                CType::Value("unsigned".into()),
                CType::Value("uint64_t".into()),
                CType::Value("cubins::RowParams".into()),
                ptr("float", true),
                CType::Other("int**".into()),
            ]
        );
        assert_eq!(parse_param_list("void", true), Some(vec![]));
        // A pointer whose pointee is const only behind the star is a const pointer to mutable data.
        assert_eq!(
            parse_param("float* const out", true),
            Some(ptr("float", false))
        );
    }

    #[test]
    fn parameters_of_a_demangled_signature() {
        let p = demangled_params(
            "void fixtures::scale<float, 4>(float const*, float*, float, unsigned int)",
            "fixtures::scale<float, 4>",
        )
        .unwrap();
        assert_eq!(
            p,
            vec![
                ptr("float", true),
                ptr("float", false),
                CType::Value("float".into()),
                CType::Value("unsigned int".into())
            ]
        );
    }

    #[test]
    fn declarations_in_preprocessed_and_plain_source() {
        let pre = "# 1 \"k.cu\"\nextern \"C\" __attribute__((global)) void __attribute__((launch_bounds(256, 2))) \
                   copy_vec16(const uint4* __restrict__ src, uint4* __restrict__ dst,\n uint64_t n_vec) { }\n\
                   extern \"C\" __attribute__((global)) void k2(int a);\n\
                   extern \"C\" __attribute__((global)) void k2(float a) {}\n";
        let d = declarations(pre);
        assert_eq!(
            d["copy_vec16"],
            Declared::Params(vec![
                ptr("uint4", true),
                ptr("uint4", false),
                CType::Value("uint64_t".into())
            ])
        );
        assert_eq!(d["k2"], Declared::Ambiguous);
        let plain = "extern \"C\" __global__ void __launch_bounds__(kThreads) k(float* x) {}";
        assert_eq!(
            declarations(plain)["k"],
            Declared::Params(vec![ptr("float", false)])
        );
        // Text that only looks like a declaration gives nothing, not a panic.
        for junk in [
            "__global__",
            "__global__ void (",
            "__global__ void k(((",
            "__global__ ) k(",
        ] {
            assert!(declarations(junk).is_empty(), "{junk}");
        }
    }
}
