//! Rust source of the typed launchers: a kernel table the runtime indexes, and per kernel a
//! marker type whose `KernelSpec::Args` tuple mirrors the kernel's parameters, for
//! `Kernel::launch`. The source names the runtime by `::cubins::` paths, so it compiles in
//! any crate that depends on cubins (cubins itself included).

use super::params::{Param, ParamType};
use std::fmt::Write;

/// One launcher to emit.
pub struct Launcher {
    /// Entry-point name as in kernels.toml.
    pub name: String,
    /// Symbol to look up in the module (mangled for C++ kernels).
    pub symbol: String,
    /// Kernel file stem (`copy`).
    pub file: String,
    pub params: Vec<Param>,
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
        ParamType::Ptr { elem, .. } => {
            format!("::cubins::cust::memory::DevicePointer<{}>", elem.rust())
        }
        ParamType::Scalar(s) => s.rust().to_string(),
    }
}

/// The launcher part of a crate's generated kernels: the table `KERNELS` and a marker type
/// per kernel implementing `cubins::runtime::KernelSpec` for the crate's `LIBRARY`.
pub fn emit(launchers: &[Launcher]) -> String {
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
        emit_one(&mut o, index, l);
    }
    o
}

fn emit_one(o: &mut String, index: usize, l: &Launcher) {
    let ty = type_name(&l.name);
    let signature: Vec<String> = l.params.iter().map(Param::declaration).collect();
    let args: Vec<String> = l.params.iter().map(|p| rust_type(&p.ty)).collect();
    // A one-element tuple needs its trailing comma.
    let args = match args.len() {
        1 => format!("({},)", args[0]),
        _ => format!("({})", args.join(", ")),
    };
    let _ = write!(
        o,
        "\n/// `{name}` in `{file}.cu`: launched with `({sig})`, in that order.\n\
         #[derive(Debug, Clone, Copy)]\n\
         pub struct {ty};\n\
         impl ::cubins::runtime::KernelSpec for {ty} {{\n    \
             const LIBRARY: &'static ::cubins::Library = &LIBRARY;\n    \
             const INDEX: usize = {index};\n    \
             ::cubins::__with_cust! {{ type Args = {args}; }}\n\
         }}\n",
        name = l.name,
        file = l.file,
        sig = signature.join(", "),
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
