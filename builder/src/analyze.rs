//! Turns the captured tool outputs of one cubin into a [`CubinReport`]: every entry point
//! with its resources (ptxas and cuobjdump side by side), the device functions it calls and
//! their spills, its parameter table and launch bounds, its opcode classes, normalized SASS,
//! occupancy at the launch shapes it is given ([`LaunchShapes`]), and flags a reviewer must
//! see.

use crate::arch::Arch;
use crate::manifest::{KernelEntry, Manifest};
use crate::model::{
    CalleeSpill, CubinOutputs, CubinReport, KernelReport, Occupancy, Source, Sourced,
};
use crate::occupancy::{self, Carveout, KernelResources};
use crate::parse::elf::ElfDump;
use crate::parse::ptxas::PtxasLog;
use crate::parse::res_usage::ResUsage;
use crate::parse::sass::{SassFunction, SassListing};
use crate::parse::{self, ParseError};
use crate::sass;
use crate::shapes::LaunchShapes;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug)]
pub struct AnalyzeError(pub String);

impl std::fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AnalyzeError {}

impl From<ParseError> for AnalyzeError {
    fn from(e: ParseError) -> Self {
        AnalyzeError(e.to_string())
    }
}

/// The names an entry point goes by; a manifest key may use any of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelNames {
    /// As in the cubin: `_ZN8fixtures5scaleIfLi4EEEvPKT_PS1_S1_` or `copy_vec16`.
    pub mangled: String,
    /// `void fixtures::scale<float, 4>(float const*, float*, float)` (the symbol for `extern "C"`).
    pub demangled: String,
    /// Without return type and parameters: `fixtures::scale<float, 4>`.
    pub short: String,
}

impl KernelNames {
    pub fn of(mangled: &str) -> KernelNames {
        let opts = cpp_demangle::DemangleOptions::new();
        KernelNames {
            mangled: mangled.to_string(),
            demangled: demangle_with(mangled, &opts).unwrap_or_else(|| mangled.to_string()),
            short: demangle_with(mangled, &opts.no_params().no_return_type())
                .unwrap_or_else(|| mangled.to_string()),
        }
    }

    pub fn matches(&self, key: &str) -> bool {
        key == self.mangled || key == self.demangled || key == self.short
    }
}

fn demangle_with(symbol: &str, opts: &cpp_demangle::DemangleOptions) -> Option<String> {
    if !symbol.starts_with("_Z") {
        return None;
    }
    cpp_demangle::Symbol::new(symbol).ok()?.demangle(opts).ok()
}

/// The demangled form of a symbol (the symbol itself when it is not a C++ name).
pub fn demangle(symbol: &str) -> String {
    KernelNames::of(symbol).demangled
}

/// The manifest entry (key and entry) for the kernel with symbol `mangled`, by any of its names.
pub fn manifest_entry<'m>(
    manifest: &'m Manifest,
    mangled: &str,
) -> Option<(&'m str, &'m KernelEntry)> {
    let names = KernelNames::of(mangled);
    manifest
        .kernels
        .iter()
        .find(|(k, _)| names.matches(k))
        .map(|(k, e)| (k.as_str(), e))
}

/// The parsed tool outputs of one cubin (a tool whose output is empty is `None`).
struct Parsed {
    ptxas: Option<PtxasLog>,
    res: Option<ResUsage>,
    sass: Option<SassListing>,
    elf: Option<ElfDump>,
}

fn parse_if_present<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ParseError>,
) -> Result<Option<T>, ParseError> {
    if text.trim().is_empty() {
        Ok(None)
    } else {
        parse(text).map(Some)
    }
}

impl Parsed {
    fn new(o: &CubinOutputs) -> Result<Parsed, ParseError> {
        Ok(Parsed {
            ptxas: parse_if_present(&o.ptxas_log, parse::ptxas::parse)?,
            res: parse_if_present(&o.res_usage, parse::res_usage::parse)?,
            sass: parse_if_present(&o.sass, parse::sass::parse)?,
            elf: parse_if_present(&o.elf, parse::elf::parse)?,
        })
    }

    /// Entry points: the cubin's symbol table says which functions are entries; ptxas, when
    /// its log is there, must agree.
    fn entries(&self) -> Result<Vec<String>, AnalyzeError> {
        let from_elf: Option<BTreeSet<String>> = self
            .elf
            .as_ref()
            .map(|e| e.entries().map(|s| s.name.clone()).collect());
        let from_ptxas: Option<BTreeSet<String>> = self
            .ptxas
            .as_ref()
            .map(|p| p.entries().map(|f| f.name.clone()).collect());
        let entries = match (from_elf, from_ptxas) {
            (Some(e), Some(p)) if e != p => {
                return Err(AnalyzeError(format!(
                    "the ptxas log and the cubin disagree on entry points: ptxas compiled [{}], the cubin holds [{}] \
                     (stale tool outputs? remove the build cache)",
                    p.into_iter().collect::<Vec<_>>().join(", "),
                    e.into_iter().collect::<Vec<_>>().join(", ")
                )))
            }
            (Some(e), _) => e,
            (None, Some(p)) => p,
            (None, None) => {
                return Err(AnalyzeError("neither a ptxas log nor `cuobjdump -elf` output: cannot tell the entry points".into()))
            }
        };
        Ok(entries.into_iter().collect())
    }
}

/// Call edges caller -> callee (symbols), from `$kernel$helper` clone symbols and from the
/// `CALL.REL` / `CALL.ABS` targets in the disassembly.
fn call_graph(elf: Option<&ElfDump>, sass: &SassListing) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let symbols = elf.map(|e| e.symbols.as_slice()).unwrap_or(&[]);
    for s in symbols {
        if let Some((kernel, helper)) = s.clone_of() {
            edges
                .entry(kernel.to_string())
                .or_default()
                .insert(helper.to_string());
        }
    }
    for f in &sass.functions {
        let (addrs, names) = sass::call_targets(f);
        let section = elf.and_then(|e| e.text_section(&f.name));
        for a in addrs {
            let target = symbols
                .iter()
                .filter(|s| {
                    Some(s.section) == section
                        && s.value == u64::from(a)
                        && s.is_function()
                        && s.name != f.name
                })
                .map(|s| s.clone_of().map_or(s.name.as_str(), |(_, helper)| helper))
                .next();
            if let Some(t) = target {
                edges
                    .entry(f.name.clone())
                    .or_default()
                    .insert(t.to_string());
            }
        }
        for n in names {
            edges.entry(f.name.clone()).or_default().insert(n);
        }
    }
    edges
}

/// Every function reachable from `root` (not including it), sorted.
fn reachable(edges: &BTreeMap<String, BTreeSet<String>>, root: &str) -> Vec<String> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut stack = vec![root.to_string()];
    while let Some(f) = stack.pop() {
        for c in edges.get(&f).into_iter().flatten() {
            if c != root && seen.insert(c.clone()) {
                stack.push(c.clone());
            }
        }
    }
    seen.into_iter().collect()
}

fn sourced(ptxas: Option<u32>, res: Option<u32>) -> Option<Sourced> {
    match (ptxas, res) {
        (Some(p), r) => Some(Sourced {
            value: p,
            source: Source::Ptxas,
            other: r.filter(|r| *r != p).map(|r| (Source::ResUsage, r)),
        }),
        (None, Some(r)) => Some(Sourced {
            value: r,
            source: Source::ResUsage,
            other: None,
        }),
        (None, None) => None,
    }
}

/// The report of one cubin from its tool outputs, occupancy at `shapes`.
pub fn analyze_cubin(
    arch: Arch,
    outputs: &CubinOutputs,
    shapes: &LaunchShapes,
) -> Result<CubinReport, AnalyzeError> {
    let p = Parsed::new(outputs)?;
    if let Some(log) = &p.ptxas {
        if let Some(f) = log
            .entries()
            .find(|f| f.arch.as_deref().is_some_and(|a| a != arch.sm_name()))
        {
            return Err(AnalyzeError(format!(
                "the ptxas log compiled `{}` for {} but the cubin is for {arch}",
                f.name,
                f.arch.as_deref().unwrap_or("?")
            )));
        }
    }
    let entries = p.entries()?;
    let mut kernels = Vec::new();
    if !entries.is_empty() {
        let listing = p
            .sass
            .as_ref()
            .ok_or_else(|| AnalyzeError("`cuobjdump -sass` output is empty".into()))?;
        let edges = call_graph(p.elf.as_ref(), listing);
        for name in &entries {
            kernels.push(analyze_kernel(arch, name, &p, listing, &edges, shapes)?);
        }
    }
    kernels.sort_by(|a, b| (&a.demangled, &a.mangled).cmp(&(&b.demangled, &b.mangled)));
    Ok(CubinReport {
        arch,
        warnings: p
            .ptxas
            .as_ref()
            .map(|l| l.warnings.clone())
            .unwrap_or_default(),
        kernels,
    })
}

/// Occupancy of kernel `name` (any of its names) on `arch` at its launch shape in `shapes`,
/// else at the default block-size sweep.
pub fn declared_occupancy(
    arch: Arch,
    name: &str,
    resources: &KernelResources,
    shapes: &LaunchShapes,
) -> Vec<Occupancy> {
    let shape = shapes.get(name);
    let dynamic_smem = shape.map_or(0, |s| s.dynamic_smem_on(&arch.sm_name()));
    let block_sizes = match shape {
        Some(s) if !s.block_sizes.is_empty() => s.block_sizes.clone(),
        _ => occupancy::default_block_sizes(resources.max_threads_per_block),
    };
    occupancy::limits_for(arch)
        .map(|l| {
            block_sizes
                .iter()
                .map(|b| l.occupancy(resources, *b, dynamic_smem, Carveout::Default))
                .collect()
        })
        .unwrap_or_default()
}

fn analyze_kernel(
    arch: Arch,
    name: &str,
    p: &Parsed,
    listing: &SassListing,
    edges: &BTreeMap<String, BTreeSet<String>>,
    shapes: &LaunchShapes,
) -> Result<KernelReport, AnalyzeError> {
    let missing = |what: &str| AnalyzeError(format!("kernel `{name}`: {what}"));
    let pf = p.ptxas.as_ref().and_then(|l| l.function(name));
    let rf = p.res.as_ref().and_then(|r| r.function(name));
    let info = p
        .elf
        .as_ref()
        .and_then(|e| e.kernels.get(name))
        .cloned()
        .unwrap_or_default();
    let code = listing
        .function(name)
        .ok_or_else(|| missing("not in the `cuobjdump -sass` listing"))?;

    let registers = sourced(pf.and_then(|f| f.registers), rf.and_then(|f| f.registers))
        .ok_or_else(|| missing("no register count from ptxas or cuobjdump -res-usage"))?;
    // ptxas leaves out `N bytes smem` when it is zero.
    let smem_bytes = sourced(
        pf.map(|f| f.smem_bytes.unwrap_or(0)),
        rf.and_then(|f| f.shared_bytes),
    )
    .ok_or_else(|| missing("no shared memory figure"))?;
    let stack_bytes = sourced(
        pf.and_then(|f| f.stack_frame_bytes),
        rf.and_then(|f| f.stack_bytes),
    )
    .ok_or_else(|| missing("no stack frame figure"))?;
    let spill_stores = pf.and_then(|f| f.spill_stores).unwrap_or(0);
    let spill_loads = pf.and_then(|f| f.spill_loads).unwrap_or(0);
    let barriers = pf.and_then(|f| f.barriers).or(info.num_barriers);

    let callee_symbols = reachable(edges, name);
    let callee_spills: Vec<CalleeSpill> = callee_symbols
        .iter()
        .filter_map(|c| callee_spill(p.ptxas.as_ref(), c))
        .collect();

    let max_registers_override = p
        .ptxas
        .as_ref()
        .and_then(|l| {
            l.register_overrides
                .iter()
                .rev()
                .find(|o| o.function.as_deref() == Some(name))
                .map(|o| o.to)
        })
        .or(info.max_reg_count.filter(|n| *n < 255));
    let max_threads_per_block = info.max_threads_per_block();

    let mut functions: Vec<&SassFunction> = vec![code];
    functions.extend(callee_symbols.iter().filter_map(|c| listing.function(c)));
    let opcode_classes = sass::histogram(functions.iter().copied());

    let names = KernelNames::of(name);
    let resources = KernelResources {
        registers: registers.value,
        static_smem_bytes: smem_bytes.value,
        barriers: barriers.unwrap_or(0),
        max_threads_per_block,
    };
    let occupancy = declared_occupancy(arch, name, &resources, shapes);

    let callees: Vec<String> = callee_symbols.iter().map(|c| demangle(c)).collect();
    let flags = flags(
        pf.is_some(),
        stack_bytes.value,
        spill_stores,
        spill_loads,
        &callee_spills,
        &callees,
    );
    Ok(KernelReport {
        sass: sass::normalize(code, &names.demangled),
        mangled: names.mangled,
        demangled: names.demangled,
        arch,
        registers,
        barriers,
        smem_bytes,
        stack_bytes,
        spill_stores,
        spill_loads,
        cumulative_stack_bytes: pf.and_then(|f| f.cumulative_stack_bytes),
        cmem_bytes: pf.map(|f| f.cmem_bytes.clone()).unwrap_or_default(),
        max_registers_override,
        max_threads_per_block,
        callees,
        callee_spills,
        flags,
        opcode_classes,
        params: info.params,
        occupancy,
    })
}

/// Spills ptxas reported for device function `symbol`, when there are any.
fn callee_spill(log: Option<&PtxasLog>, symbol: &str) -> Option<CalleeSpill> {
    let log = log?;
    let (stores, loads, stack) = match log.function(symbol) {
        Some(f) => (
            f.spill_stores.unwrap_or(0),
            f.spill_loads.unwrap_or(0),
            f.stack_frame_bytes.unwrap_or(0),
        ),
        None => {
            let w = log.spill_warnings.iter().find(|w| w.function == symbol)?;
            (w.spill_stores, w.spill_loads, 0)
        }
    };
    (stores > 0 || loads > 0).then(|| CalleeSpill {
        callee: demangle(symbol),
        spill_stores: stores,
        spill_loads: loads,
        stack_bytes: stack,
    })
}

/// Prefix of the flag for a stack frame without spills; reports and tests look for it.
pub const FLAG_LOCAL_ARRAY: &str = "stack frame with no spills";
pub const FLAG_SPILLS: &str = "spills";
pub const FLAG_CALLEE_SPILLS: &str = "callee spills";
pub const FLAG_NO_PTXAS: &str = "no ptxas log";

fn flags(
    have_ptxas: bool,
    stack: u32,
    stores: u32,
    loads: u32,
    callee_spills: &[CalleeSpill],
    callees: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    if !have_ptxas {
        out.push(format!(
            "{FLAG_NO_PTXAS}: spill counts unknown (inspected from the cubin alone)"
        ));
    }
    let spills = stores > 0 || loads > 0;
    if spills {
        out.push(format!(
            "{FLAG_SPILLS}: {stores} bytes stored and {loads} bytes loaded to local memory"
        ));
    }
    for c in callee_spills {
        out.push(format!(
            "{FLAG_CALLEE_SPILLS}: `{}` spills {} bytes stored and {} bytes loaded (runs as part of this kernel)",
            c.callee, c.spill_stores, c.spill_loads
        ));
    }
    if have_ptxas && stack > 0 && !spills && callee_spills.is_empty() {
        let cause = if callees.is_empty() {
            "a run-time indexed local array?".to_string()
        } else {
            format!(
                "a run-time indexed local array, or the frame of a called function ({})?",
                callees.join(", ")
            )
        };
        out.push(format!(
            "{FLAG_LOCAL_ARRAY}: {stack} bytes of local memory, {cause}"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_cpp_and_extern_c_symbols() {
        let n = KernelNames::of("_ZN8fixtures5scaleIfLi4EEEvPKT_PS1_S1_");
        assert_eq!(
            n.demangled,
            "void fixtures::scale<float, 4>(float const*, float*, float)"
        );
        assert_eq!(n.short, "fixtures::scale<float, 4>");
        assert!(
            n.matches("fixtures::scale<float, 4>")
                && n.matches("_ZN8fixtures5scaleIfLi4EEEvPKT_PS1_S1_")
        );
        assert!(!n.matches("fixtures::scale<int, 2>"));
        let c = KernelNames::of("copy_vec16");
        assert_eq!(
            (c.demangled.as_str(), c.short.as_str()),
            ("copy_vec16", "copy_vec16")
        );
        // Not a valid mangling: kept as is.
        assert_eq!(demangle("_Zgarbage"), "_Zgarbage");
    }

    #[test]
    fn flag_rules() {
        let local = flags(true, 256, 0, 0, &[], &[]);
        assert!(
            local.len() == 1 && local[0].starts_with(FLAG_LOCAL_ARRAY),
            "{local:?}"
        );
        let spill = flags(true, 928, 1596, 1716, &[], &[]);
        assert!(
            spill.len() == 1 && spill[0].starts_with(FLAG_SPILLS),
            "{spill:?}"
        );
        let cs = [CalleeSpill {
            callee: "h".into(),
            spill_stores: 4,
            spill_loads: 4,
            stack_bytes: 0,
        }];
        let callee = flags(true, 440, 0, 0, &cs, &["h".to_string()]);
        assert!(
            callee.len() == 1 && callee[0].starts_with(FLAG_CALLEE_SPILLS),
            "{callee:?}"
        );
        assert!(flags(true, 0, 0, 0, &[], &[]).is_empty());
        assert!(flags(false, 0, 0, 0, &[], &[])[0].starts_with(FLAG_NO_PTXAS));
    }
}
