//! Rust source of the typed launchers: a kernel table the runtime indexes, and per kernel a
//! marker type whose `KernelSpec::Args` tuple mirrors the kernel's parameters, for
//! `Kernel::launch`. The entries of a [`Group`] share one generic marker (`SwigluFwd<T>`),
//! each still nameable by its entry name (`type SwigluFwdBf16 = SwigluFwd<Bf16>`). The source
//! names the runtime by `::cubins::` paths, so it compiles in any crate that depends on
//! cubins (cubins itself included).

use super::generic::{GenericType, Group, DTYPES};
use super::params::{Param, ParamType};
use crate::manifest::Provenance;
use std::fmt::Write;

/// The runtime's storage-type trait and its kinds, as the generated source names them.
const DTYPE_TRAIT: &str = "::cubins::runtime::launchers::Dtype";
const DTYPE_KIND: &str = "::cubins::runtime::launchers::DtypeKind";

/// One launcher to emit.
pub struct Launcher {
    /// Entry-point name as in kernels.toml.
    pub name: String,
    /// Symbol to look up in the module (mangled for C++ kernels).
    pub symbol: String,
    /// Kernel file stem (`copy`).
    pub file: String,
    pub params: Vec<Param>,
    /// The family that made the entry, if one did.
    pub family: Option<Provenance>,
}

/// A generic group's marker type: its pattern without `{dtype}` (`rope_neox_{dtype}` -> `RopeNeox`).
pub fn generic_type_name(pattern: &str) -> String {
    type_name(&pattern.replace("{dtype}", ""))
}

/// `copy_vec16` -> `CopyVec16`; C++ names lose their punctuation (`ns::k<float>` -> `NsKFloat`).
pub fn type_name(kernel: &str) -> String {
    let mut out = String::new();
    for part in kernel
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if out.chars().next().map_or(true, |c| c.is_ascii_digit()) {
        out.insert(0, 'K');
    }
    out
}

fn rust_type(ty: &ParamType) -> String {
    match ty {
        ParamType::Ptr { elem, .. } => pointer(elem.rust()),
        ParamType::Scalar(s) => s.rust().to_string(),
        ParamType::TensorMap => "::cubins::runtime::TensorMap".to_string(),
    }
}

fn pointer(elem: &str) -> String {
    format!("::cubins::runtime::DevicePtr<{elem}>")
}

/// A tuple type of `args` (a one-element tuple needs its trailing comma).
fn tuple(args: &[String]) -> String {
    match args.len() {
        1 => format!("({},)", args[0]),
        _ => format!("({})", args.join(", ")),
    }
}

/// The launcher part of a crate's generated kernels: the table `KERNELS`, a marker type per
/// kernel implementing `cubins::runtime::KernelSpec` for the crate's `LIBRARY`, and for each
/// of `groups` one generic marker with an alias per member in the members' place.
pub fn emit(launchers: &[Launcher], groups: &[Group]) -> String {
    let mut o = String::from(
        "/// Every kernel with a typed launcher, in manifest order (sorted by name).\n\
         pub static KERNELS: &[::cubins::runtime::KernelInfo] = &[\n",
    );
    for l in launchers {
        let params: Vec<String> = l
            .params
            .iter()
            .map(|p| {
                format!(
                    "::cubins::runtime::ParamInfo {{ name: {:?}, ty: {:?}, offset: {}, size: {} }}",
                    p.name,
                    p.ty.to_string(),
                    p.offset,
                    p.size
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "    ::cubins::runtime::KernelInfo {{ name: {:?}, symbol: {:?}, file: {:?}, params: &[{}] }},",
            l.name,
            l.symbol,
            l.file,
            params.join(", ")
        );
    }
    o.push_str("];\n");
    for (index, l) in launchers.iter().enumerate() {
        let member = groups.iter().find_map(|g| {
            let slot = g.members.iter().position(|m| *m == Some(index))?;
            Some((g, slot))
        });
        match member {
            Some((group, slot)) => {
                if group.members.iter().flatten().next() == Some(&index) {
                    emit_generic(&mut o, group, l);
                }
                emit_alias(&mut o, group, slot, l);
            }
            None => emit_one(&mut o, index, l),
        }
    }
    o
}

fn emit_one(o: &mut String, index: usize, l: &Launcher) {
    let ty = type_name(&l.name);
    let signature: Vec<String> = l.params.iter().map(Param::declaration).collect();
    let args: Vec<String> = l.params.iter().map(|p| rust_type(&p.ty)).collect();
    let args = tuple(&args);
    let _ = write!(
        o,
        "\n/// `{name}` in `{file}.cu`: launched with `({sig})`, in that order.\n\
         #[derive(Debug, Clone, Copy)]\n\
         pub struct {ty};\n\
         impl ::cubins::runtime::KernelSpec for {ty} {{\n    \
             const LIBRARY: &'static ::cubins::Library = &LIBRARY;\n    \
             const INDEX: usize = {index};\n    \
             type Args = {args};\n\
         }}\n",
        name = l.name,
        file = l.file,
        sig = signature.join(", "),
    );
}

/// The generic marker of `group` (`l`: its first member): its entry follows from `T`'s kind,
/// and a kind the family has no entry of stops the build that names it.
fn emit_generic(o: &mut String, group: &Group, l: &Launcher) {
    let ty = generic_type_name(&group.pattern);
    let args: Vec<String> = group
        .params
        .iter()
        .map(|p| match &p.ty {
            GenericType::Elem { .. } => pointer("T"),
            GenericType::Fixed(t) => rust_type(t),
        })
        .collect();
    let mut arms = String::new();
    for ((name, _, kind), member) in DTYPES.iter().zip(&group.members) {
        let value = match member {
            Some(index) => index.to_string(),
            None => {
                let why = format!(
                    "no `{ty}<{name}>`: kernels.toml makes `{}` for {} only (family `{}`)",
                    group.pattern,
                    group.dtype_names().join(", "),
                    group.family
                );
                // A literal panic message is a format string: its braces are doubled.
                format!("panic!({:?})", why.replace('{', "{{").replace('}', "}}"))
            }
        };
        let _ = write!(arms, "\n        {DTYPE_KIND}::{kind} => {value},");
    }
    let _ = write!(
        o,
        "\n/// `{pattern}` in `{file}.cu`, for `T` in {dtypes} (family `{family}`): launched with \
         `({sig})`, in that order. Another `T` fails to compile.\n\
         #[derive(Debug, Clone, Copy)]\n\
         pub struct {ty}<T>(::core::marker::PhantomData<T>);\n\
         impl<T: {DTYPE_TRAIT}> ::cubins::runtime::KernelSpec for {ty}<T> {{\n    \
             const LIBRARY: &'static ::cubins::Library = &LIBRARY;\n    \
             const INDEX: usize = match <T as {DTYPE_TRAIT}>::KIND {{{arms}\n    }};\n    \
             type Args = {args};\n\
         }}\n",
        pattern = group.pattern,
        file = l.file,
        dtypes = group.dtype_names().join(", "),
        family = group.family,
        sig = group.declarations().join(", "),
        args = tuple(&args),
    );
}

/// The entry's own name for its group's marker: `pub type SwigluFwdBf16 = SwigluFwd<Bf16>;`.
fn emit_alias(o: &mut String, group: &Group, slot: usize, l: &Launcher) {
    let (dtype, elem, _) = DTYPES[slot];
    let generic = generic_type_name(&group.pattern);
    let _ = writeln!(
        o,
        "/// `{name}` in `{file}.cu`: [`{generic}`] for {dtype}.\n\
         pub type {alias} = {generic}<{rust}>;",
        name = l.name,
        file = l.file,
        alias = type_name(&l.name),
        rust = elem.rust(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names() {
        assert_eq!(type_name("copy_vec16"), "CopyVec16");
        assert_eq!(type_name("cubins::rms_norm<float>"), "CubinsRmsNormFloat");
        assert_eq!(type_name("2d"), "K2d");
    }
}
