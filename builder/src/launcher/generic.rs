//! Launchers that differ only in their element type, grouped for one generic marker each:
//! a family whose `dtype` axis takes storage types (`bf16`, `f16`, `f32`) gets, per
//! combination of its other axes, `SwigluFwd<T>` over its entries `swiglu_fwd_bf16`, ...
//! Each entry keeps its own launcher (and ABI check); the group says which parameters are
//! the element type `T`.

use super::emit::Launcher;
use super::params::{Elem, ParamType};
use crate::manifest::DTYPE_AXIS;
use std::collections::BTreeMap;

/// The storage types a generic marker takes, in the order of [`Group::members`]: the name in
/// kernels.toml, the pointee it declares, the runtime's `DtypeKind` variant.
pub const DTYPES: [(&str, Elem, &str); 3] = [
    ("bf16", Elem::Bf16, "Bf16"),
    ("f16", Elem::F16, "F16"),
    ("f32", Elem::F32, "F32"),
];

/// One generic marker: the entries of one family that differ only in `dtype`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The entry name with `{dtype}` for the element type: `rope_neox_{dtype}`.
    pub pattern: String,
    pub family: String,
    /// Per storage type of [`DTYPES`], the launcher index of its entry, if the family has one.
    pub members: [Option<usize>; 3],
    /// The parameters as the generic marker takes them.
    pub params: Vec<GenericParam>,
}

/// A parameter of a generic marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenericParam {
    pub name: String,
    pub ty: GenericType,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenericType {
    /// A pointer to the element type: `*const T` / `*mut T`.
    Elem { mutable: bool },
    /// The same type in every entry (`partial: *mut f32`, `n: u64`).
    Fixed(ParamType),
}

impl Group {
    /// `q: *mut T`, `n: u64`, as the marker's documentation writes them.
    pub fn declarations(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|p| match &p.ty {
                GenericType::Elem { mutable } => {
                    format!("{}: *{} T", p.name, if *mutable { "mut" } else { "const" })
                }
                GenericType::Fixed(t) => format!("{}: {t}", p.name),
            })
            .collect()
    }

    /// The storage type names the family has entries of: `bf16, f16`.
    pub fn dtype_names(&self) -> Vec<&'static str> {
        DTYPES
            .iter()
            .zip(&self.members)
            .filter(|(_, m)| m.is_some())
            .map(|((name, _, _), _)| *name)
            .collect()
    }
}

/// The generic groups of `launchers` (manifest order): every family whose entries all take a
/// storage type for `dtype` (a family whose `dtype` names anything else, `fp16`, `tf32`,
/// keeps a marker per entry). Entries of one group must agree parameter by parameter, up to
/// the element type; where they do not, the build says so.
pub fn groups(launchers: &[Launcher]) -> Result<Vec<Group>, Vec<String>> {
    let mut by_family: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, l) in launchers.iter().enumerate() {
        if let Some(p) = &l.family {
            by_family.entry(p.family.as_str()).or_default().push(i);
        }
    }
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for (family, members) in by_family {
        let Some(typed) = storage_members(launchers, &members) else {
            continue;
        };
        let mut by_pattern: BTreeMap<&str, [Option<usize>; 3]> = BTreeMap::new();
        for (index, pattern, slot) in typed {
            let slots = by_pattern.entry(pattern).or_default();
            if let Some(first) = slots[slot] {
                errors.push(format!(
                    "kernels.toml: family `{family}`: `{}` and `{}` both make `{pattern}` for {}",
                    launchers[first].name, launchers[index].name, DTYPES[slot].0
                ));
            }
            slots[slot] = Some(index);
        }
        for (pattern, members) in by_pattern {
            match unify(launchers, family, pattern, &members) {
                Ok(params) => out.push(Group {
                    pattern: pattern.to_string(),
                    family: family.to_string(),
                    members,
                    params,
                }),
                Err(e) => errors.push(e),
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// (launcher index, dtype pattern, slot in [`DTYPES`]) of each member, or `None` where one
/// of them has no pattern or a `dtype` that is not a storage type.
fn storage_members<'a>(
    launchers: &'a [Launcher],
    members: &[usize],
) -> Option<Vec<(usize, &'a str, usize)>> {
    members
        .iter()
        .map(|&i| {
            let p = launchers[i].family.as_ref()?;
            let dtype = p.axes.get(DTYPE_AXIS)?;
            let slot = DTYPES.iter().position(|(name, _, _)| name == dtype)?;
            Some((i, p.dtype_pattern.as_deref()?, slot))
        })
        .collect()
}

/// The generic parameters of a group: a position is `T` where every member points to its
/// own storage type there, else every member must declare the same type.
fn unify(
    launchers: &[Launcher],
    family: &str,
    pattern: &str,
    members: &[Option<usize>; 3],
) -> Result<Vec<GenericParam>, String> {
    let present: Vec<(usize, &Launcher)> = members
        .iter()
        .enumerate()
        .filter_map(|(slot, m)| m.map(|i| (slot, &launchers[i])))
        .collect();
    let (_, first) = present[0];
    let mismatch = |other: &Launcher, why: String| {
        format!(
            "kernels.toml: family `{family}`: `{}` and `{}` differ in more than their dtype ({why}): \
             one launcher `{pattern}` cannot take both",
            first.name, other.name
        )
    };
    for (_, l) in &present[1..] {
        let names = |l: &Launcher| l.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        if names(l) != names(first) {
            return Err(mismatch(l, "their parameters".into()));
        }
    }
    let mut out = Vec::new();
    for (i, param) in first.params.iter().enumerate() {
        let elem_of = |slot: usize, l: &Launcher| match l.params[i].ty {
            ParamType::Ptr { mutable, elem } if elem == DTYPES[slot].1 => Some(mutable),
            _ => None,
        };
        let mutability: Vec<Option<bool>> =
            present.iter().map(|&(slot, l)| elem_of(slot, l)).collect();
        let ty = match mutability[0] {
            Some(m) if mutability.iter().all(|x| *x == Some(m)) => GenericType::Elem { mutable: m },
            _ => {
                if let Some((_, l)) = present[1..]
                    .iter()
                    .find(|(_, l)| l.params[i].ty != param.ty)
                {
                    return Err(mismatch(
                        l,
                        format!(
                            "parameter {i}: `{}` and `{}`",
                            param.declaration(),
                            l.params[i].declaration()
                        ),
                    ));
                }
                GenericType::Fixed(param.ty.clone())
            }
        };
        out.push(GenericParam {
            name: param.name.clone(),
            ty,
        });
    }
    Ok(out)
}
