//! Typed launchers generated from `cuda/kernels.toml`, and the build-time ABI check of each
//! launcher against every cubin's own parameter table.
//!
//! - [`params`]: the `name: type` declarations and their C layout (natural alignment).
//! - [`abi`]: count, offset and size of each parameter against `.nv.info`, per arch.
//! - [`signature`], [`types`]: element types against the kernel's own declaration (its
//!   demangled signature, or the preprocessed `extern "C"` declaration).
//! - [`generic`]: the entries of a family that differ only in `dtype`, for one generic marker.
//! - [`emit`]: the launchers' Rust source in a crate's generated kernels.

pub mod abi;
pub mod emit;
pub mod generic;
pub mod params;
pub mod signature;
pub mod types;

use crate::manifest::Manifest;
use crate::model::CubinReport;

/// [`generate`], and the element types checked against the kernels' declarations
/// ([`check_types`]): the launchers with the parameters left unchecked, or every error.
pub fn generate_and_check(
    manifest: &Manifest,
    reports: &[(String, &CubinReport)],
    sources: &signature::Sources,
) -> Result<(String, Vec<String>), Vec<String>> {
    let generated = generate(manifest, reports);
    let types = check_types(manifest, reports, sources);
    match generated {
        Ok(src) if types.errors.is_empty() => Ok((src, types.unchecked)),
        Ok(_) => Err(types.errors),
        Err(mut errors) => {
            errors.extend(types.errors);
            Err(errors)
        }
    }
}

/// Rust source for the typed launchers, or every problem that fails the build: malformed
/// declarations and ABI mismatches. `reports`: (kernel file stem, one cubin's report);
/// empty when kernels were not compiled, in which case nothing is checked.
pub fn generate(
    manifest: &Manifest,
    reports: &[(String, &CubinReport)],
) -> Result<String, Vec<String>> {
    let mut errors = Vec::new();
    let mut launchers = Vec::new();
    for (name, entry) in &manifest.kernels {
        let file = entry
            .file
            .strip_suffix(".cu")
            .unwrap_or(&entry.file)
            .to_string();
        let of_file: Vec<&CubinReport> = reports
            .iter()
            .filter(|(f, _)| *f == file)
            .map(|(_, r)| *r)
            .collect();
        if !reports.is_empty() && of_file.is_empty() {
            errors.push(format!(
                "kernels.toml: `{name}`: `{}` is not a kernel file under cuda/",
                entry.file
            ));
            continue;
        }
        let params = match params::parse_params(name, &entry.params) {
            Ok(p) => p,
            Err(e) => {
                errors.extend(e);
                continue;
            }
        };
        for report in &of_file {
            errors.extend(abi::check(name, &entry.file, &params, report));
        }
        let symbol = of_file
            .iter()
            .find_map(|r| abi::find_kernel(r, name))
            .map(|k| k.mangled.clone())
            .unwrap_or_else(|| name.clone());
        launchers.push(emit::Launcher {
            name: name.clone(),
            symbol,
            file,
            params,
            family: entry.family.clone(),
        });
    }
    let groups = generic::groups(&launchers).unwrap_or_else(|e| {
        errors.extend(e);
        Vec::new()
    });
    errors.extend(type_name_collisions(&launchers, &groups));
    if errors.is_empty() {
        Ok(emit::emit(&launchers, &groups))
    } else {
        Err(errors)
    }
}

/// Two launchers, or a launcher and a generic marker, that would be one Rust type.
fn type_name_collisions(launchers: &[emit::Launcher], groups: &[generic::Group]) -> Vec<String> {
    let entries = launchers
        .iter()
        .map(|l| (emit::type_name(&l.name), format!("`{}`", l.name)));
    let generics = groups.iter().map(|g| {
        (
            emit::generic_type_name(&g.pattern),
            format!("`{}` (family `{}`)", g.pattern, g.family),
        )
    });
    let mut seen = std::collections::BTreeMap::new();
    let mut errors = Vec::new();
    for (ty, what) in entries.chain(generics) {
        if let Some(other) = seen.insert(ty.clone(), what.clone()) {
            errors.push(format!(
                "kernels.toml: {other} and {what} map to the same launcher type `{ty}`; rename one"
            ));
        }
    }
    errors
}

/// What the kernels' declarations say about the launchers' parameter types.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TypeCheck {
    /// A parameter whose type differs from the declaration's: fails the build.
    pub errors: Vec<String>,
    /// Parameters (or kernels) whose types could not be compared, and why.
    pub unchecked: Vec<String>,
}

/// Checks every entry's parameter types against the kernel's declaration: the demangled
/// signature of a C++ entry point, else the `extern "C"` declaration in `sources`. Entries
/// whose `params` do not parse are left to [`generate`], which reports them.
pub fn check_types(
    manifest: &Manifest,
    reports: &[(String, &CubinReport)],
    sources: &signature::Sources,
) -> TypeCheck {
    let mut out = TypeCheck::default();
    for (name, entry) in &manifest.kernels {
        let Ok(params) = params::parse_params(name, &entry.params) else {
            continue;
        };
        let stem = entry.file.strip_suffix(".cu").unwrap_or(&entry.file);
        let Some(kernel) = reports
            .iter()
            .filter(|(f, _)| f == stem)
            .find_map(|(_, r)| abi::find_kernel(r, name))
        else {
            continue; // no cubin has it: the contract check says so
        };
        match declared_params(&kernel.mangled, &entry.file, sources.get(stem)) {
            Ok((source, declared)) => {
                let f = types::check(name, &source, &params, &declared);
                out.errors.extend(f.errors);
                out.unchecked.extend(f.unchecked);
            }
            Err(why) => out
                .unchecked
                .push(format!("{name}: parameter types not checked: {why}")),
        }
    }
    out
}

/// The declared parameters of the kernel with symbol `mangled`, and where they come from.
fn declared_params(
    mangled: &str,
    file: &str,
    source: Option<&Result<std::collections::BTreeMap<String, signature::Declared>, String>>,
) -> Result<(String, Vec<signature::CType>), String> {
    if mangled.starts_with("_Z") {
        let names = crate::analyze::KernelNames::of(mangled);
        return signature::demangled_params(&names.demangled, &names.short)
            .map(|p| ("its mangled signature".to_string(), p))
            .ok_or_else(|| {
                format!(
                    "its demangled signature `{}` did not parse",
                    names.demangled
                )
            });
    }
    let declarations = match source {
        Some(Ok(d)) => d,
        Some(Err(why)) => return Err(why.clone()),
        None => return Err(format!("`{file}` was not preprocessed")),
    };
    match declarations.get(mangled) {
        Some(signature::Declared::Params(p)) => {
            Ok((format!("the declaration in {file}"), p.clone()))
        }
        Some(signature::Declared::Ambiguous) => Err(format!(
            "`{file}` declares `{mangled}` more than once with different parameters"
        )),
        None => Err(format!(
            "no `__global__` declaration of `{mangled}` in `{file}` after preprocessing"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::abi::tests::report;
    use super::*;
    use crate::arch::Arch;

    const MANIFEST: &str = r#"
[kernels.copy_vec16]
file = "copy.cu"
params = ["src: *const u8x16", "dst: *mut u8x16", "n_vec: u64"]

[kernels.scale]
file = "scale.cu"
params = ["x: *mut f32", "p: f32"]
"#;

    #[test]
    fn emits_table_and_launchers() {
        let m = Manifest::parse(MANIFEST, "kernels.toml").unwrap();
        let copy = report(Arch::new(90), &[("copy_vec16", &[(0, 8), (8, 8), (16, 8)])]);
        let scale = report(Arch::new(90), &[("scale", &[(0, 8), (8, 4)])]);
        let src = generate(&m, &[("copy".into(), &copy), ("scale".into(), &scale)]).unwrap();
        assert!(src.contains(
            "::cubins::runtime::KernelInfo { name: \"copy_vec16\", symbol: \"copy_vec16\", file: \"copy\", params: &[\
             ::cubins::runtime::ParamInfo { name: \"src\", ty: \"*const u8x16\", offset: 0, size: 8 }"
        ));
        assert!(src.contains("pub struct CopyVec16;"));
        assert!(src.contains("const INDEX: usize = 0;") && src.contains("const INDEX: usize = 1;"));
        assert!(src.contains("const LIBRARY: &'static ::cubins::Library = &LIBRARY;"));
        assert!(src.contains(
            "type Args = (::cubins::runtime::DevicePtr<::cubins::runtime::U8x16>, \
             ::cubins::runtime::DevicePtr<::cubins::runtime::U8x16>, u64);"
        ));
        assert!(src.contains("type Args = (::cubins::runtime::DevicePtr<f32>, f32);"));
    }

    #[test]
    fn every_arch_is_checked_and_all_errors_are_reported() {
        let m = Manifest::parse(MANIFEST, "kernels.toml").unwrap();
        let sm80 = report(Arch::new(80), &[("copy_vec16", &[(0, 8), (8, 8), (16, 8)])]);
        let sm90 = report(Arch::new(90), &[("copy_vec16", &[(0, 8), (8, 8), (16, 4)])]);
        let scale = report(Arch::new(90), &[("scale", &[(0, 8), (8, 8)])]);
        let errs = generate(
            &m,
            &[
                ("copy".into(), &sm80),
                ("copy".into(), &sm90),
                ("scale".into(), &scale),
            ],
        )
        .unwrap_err();
        assert_eq!(errs.len(), 2, "{errs:#?}");
        assert!(
            errs[0].starts_with("copy_vec16 on sm_90: parameter 2 (`n_vec: u64`)"),
            "{errs:#?}"
        );
        assert!(
            errs[1].starts_with("scale on sm_90: parameter 1 (`p: f32`)"),
            "{errs:#?}"
        );
        assert!(errs[1].contains("offset 8, size 4; the cubin expects offset 8, size 8"));
    }

    #[test]
    fn unknown_file_and_unchecked_build() {
        let m = Manifest::parse(MANIFEST, "kernels.toml").unwrap();
        let copy = report(Arch::new(90), &[("copy_vec16", &[(0, 8), (8, 8), (16, 8)])]);
        let errs = generate(&m, &[("copy".into(), &copy)]).unwrap_err();
        assert_eq!(
            errs,
            vec!["kernels.toml: `scale`: `scale.cu` is not a kernel file under cuda/".to_string()]
        );
        // Without reports (kernels not compiled) the launchers are still generated.
        assert!(generate(&m, &[]).unwrap().contains("pub struct Scale;"));
    }

    #[test]
    fn mangled_symbol_is_used_for_cpp_entry_points() {
        let m = Manifest::parse(
            "[kernels.\"ns::k<float>\"]\nfile = \"k.cu\"\nparams = [\"n: u32\"]\n",
            "kernels.toml",
        )
        .unwrap();
        let mut r = report(Arch::new(90), &[("_ZN2ns1kIfEEvj", &[(0, 4)])]);
        r.kernels[0].demangled = "ns::k<float>".into();
        let src = generate(&m, &[("k".into(), &r)]).unwrap();
        assert!(src.contains("symbol: \"_ZN2ns1kIfEEvj\""), "{src}");
        assert!(src.contains("pub struct NsKFloat;"));
    }

    const FAMILIES: &str = r#"
[families.swiglu]
name = "swiglu_{dtype}"
axes.dtype = ["bf16", "f16"]
file = "swiglu.cu"
params = ["gate: *const {dtype}", "out: *mut {dtype}", "partial: *mut f32", "n: u64"]

[families.rope]
name = "rope_{style}_{dtype}"
axes = { style = ["neox", "gptj"], dtype = ["bf16", "f16", "f32"] }
file = "rope.cu"
params = ["q: *mut {dtype}", "n: u32"]

[families.gemm]
name = "gemm_{dtype}"
axes.dtype = [{ name = "fp16", ty = "f16" }]
file = "gemm.cu"
params = ["a: *const {dtype.ty}"]
"#;

    #[test]
    fn a_dtype_family_gets_one_generic_marker_per_combination_of_its_other_axes() {
        let m = Manifest::parse(FAMILIES, "kernels.toml").unwrap();
        let src = generate(&m, &[]).unwrap();
        // Table order is the manifest's (sorted): gemm_fp16 0, rope_gptj_* 1-3,
        // rope_neox_* 4-6, swiglu_* 7-8.
        let ptr = |t: &str| format!("::cubins::runtime::DevicePtr<{t}>");
        assert!(
            src.contains("pub struct Swiglu<T>(::core::marker::PhantomData<T>);"),
            "{src}"
        );
        assert!(src.contains(
            "impl<T: ::cubins::runtime::launchers::Dtype> ::cubins::runtime::KernelSpec for Swiglu<T> {"
        ));
        assert!(src.contains(&format!(
            "type Args = ({}, {}, {}, u64);",
            ptr("T"),
            ptr("T"),
            ptr("f32")
        )));
        assert!(src.contains(
            "const INDEX: usize = match <T as ::cubins::runtime::launchers::Dtype>::KIND {\n        \
             ::cubins::runtime::launchers::DtypeKind::Bf16 => 7,\n        \
             ::cubins::runtime::launchers::DtypeKind::F16 => 8,\n        \
             ::cubins::runtime::launchers::DtypeKind::F32 => panic!(\"no `Swiglu<f32>`: kernels.toml \
             makes `swiglu_{{dtype}}` for bf16, f16 only (family `swiglu`)\"),\n    };"
        ), "{src}");
        assert!(src.contains("(gate: *const T, out: *mut T, partial: *mut f32, n: u64)"));
        // Each entry stays nameable, as the same type.
        assert!(src.contains("pub type SwigluBf16 = Swiglu<::cubins::runtime::Bf16>;"));
        assert!(src.contains("pub type SwigluF16 = Swiglu<::cubins::runtime::F16>;"));
        assert!(!src.contains("pub struct SwigluBf16"));
        // Another axis: one marker per style, every dtype present.
        for (style, first) in [("Neox", 4), ("Gptj", 1)] {
            assert!(src.contains(&format!("pub struct Rope{style}<T>(")));
            assert!(src.contains(&format!("DtypeKind::Bf16 => {first},")));
            assert!(src.contains(&format!("DtypeKind::F32 => {},", first + 2)));
            assert!(src.contains(&format!("pub type Rope{style}F32 = Rope{style}<f32>;")));
        }
        assert_eq!(
            src.matches("=> panic!").count(),
            1,
            "only swiglu lacks a dtype"
        );
        assert!(src.contains(&format!("type Args = ({}, u32);", ptr("T"))));
        // A `dtype` that names no storage type (`fp16`) keeps a marker per entry.
        assert!(src.contains("pub struct GemmFp16;"));
        assert!(src.contains(&format!(
            "type Args = ({},);",
            ptr("::cubins::runtime::F16")
        )));
        // The table is unchanged by the grouping.
        assert_eq!(src.matches("::cubins::runtime::KernelInfo {").count(), 9);
    }

    #[test]
    fn family_entries_that_differ_beyond_their_dtype_are_errors() {
        let text = r#"
[families.k]
name = "k_{dtype}"
axes.dtype = ["bf16", "f32"]
file = "k.cu"
params = ["x: *const {dtype}", "n: u32"]
when = [{ match = { dtype = "f32" }, params = ["x: *const f32", "n: u64"] }]
"#;
        let m = Manifest::parse(text, "kernels.toml").unwrap();
        let errs = generate(&m, &[]).unwrap_err();
        assert_eq!(
            errs,
            vec![
                "kernels.toml: family `k`: `k_bf16` and `k_f32` differ in more than their dtype \
                 (parameter 1: `n: u32` and `n: u64`): one launcher `k_{dtype}` cannot take both"
                    .to_string()
            ]
        );
        let renamed = text.replace("\"n: u64\"", "\"m: u32\"");
        let m = Manifest::parse(&renamed, "kernels.toml").unwrap();
        assert!(generate(&m, &[]).unwrap_err()[0].contains("(their parameters)"));
    }

    #[test]
    fn a_generic_marker_colliding_with_an_entry_is_an_error() {
        let m = Manifest::parse(
            "[kernels.k_]\nfile = \"k.cu\"\n[families.k]\nname = \"k_{dtype}\"\n\
             axes.dtype = [\"f32\"]\nfile = \"k.cu\"\n",
            "kernels.toml",
        )
        .unwrap();
        let errs = generate(&m, &[]).unwrap_err();
        assert_eq!(
            errs,
            vec![
                "kernels.toml: `k_` and `k_{dtype}` (family `k`) map to the same launcher type `K`; rename one"
                    .to_string()
            ]
        );
    }

    #[test]
    fn launcher_type_collisions_are_errors() {
        let m = Manifest::parse(
            "[kernels.a_b]\nfile = \"k.cu\"\n[kernels.\"a::b\"]\nfile = \"k.cu\"\n",
            "kernels.toml",
        )
        .unwrap();
        let errs = generate(&m, &[]).unwrap_err();
        assert!(errs[0].contains("same launcher type `AB`"), "{errs:#?}");
    }
}
