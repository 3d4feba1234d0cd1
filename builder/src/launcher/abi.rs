//! The ABI check: a launcher's parameters against the cubin's own parameter table
//! (`EIATTR_KPARAM_INFO` in `.nv.info.<kernel>`), per arch. Argument order, count and width
//! mistakes in a hand-written launch are silent memory corruption on the GPU; here they are
//! a build error.

use super::params::Param;
use crate::model::{CubinReport, KernelReport, ParamSlot};

/// The kernel named `name` in a cubin report: by `extern "C"` symbol or demangled C++ name.
pub fn find_kernel<'a>(report: &'a CubinReport, name: &str) -> Option<&'a KernelReport> {
    report
        .kernels
        .iter()
        .find(|k| k.mangled == name || k.demangled == name)
}

/// Compares one launcher with one cubin's table; one message per disagreement.
pub fn check(kernel: &str, file: &str, params: &[Param], report: &CubinReport) -> Vec<String> {
    let arch = report.arch.sm_name();
    if report.kernels.is_empty() {
        // The report names no kernels at all: there is no table to compare with.
        return vec![];
    }
    let Some(k) = find_kernel(report, kernel) else {
        let found: Vec<&str> = report
            .kernels
            .iter()
            .map(|k| k.demangled.as_str())
            .collect();
        return vec![format!(
            "{kernel} on {arch}: kernels.toml declares it in `{file}`, but that cubin has no such entry point; it has: {}",
            found.join(", ")
        )];
    };
    let mut table: Vec<ParamSlot> = k.params.clone();
    table.sort_by_key(|p| p.ordinal);
    let mut errors = Vec::new();
    if table.len() != params.len() {
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        errors.push(format!(
            "{kernel} on {arch}: parameter count: the launcher declares {} ({}), the cubin's parameter table has {}",
            params.len(),
            names.join(", "),
            table.len()
        ));
    }
    // The driver copies each argument to its slot (launches pass one pointer per parameter),
    // so the table may start past 0: where a parameter is aligned beyond 16 bytes (a
    // CUtensorMap's 64), the compiler shifts the whole block to put it on its alignment in the
    // constant bank. The slots must keep the launcher's layout from that base.
    let base = match (params.first(), table.first()) {
        (Some(p), Some(slot)) => slot.offset.saturating_sub(p.offset),
        _ => 0,
    };
    for (i, (p, slot)) in params.iter().zip(&table).enumerate() {
        if (p.offset + base, p.size) != (slot.offset, slot.size) {
            let shifted = if base > 0 {
                format!(" (from the table's base {base})")
            } else {
                String::new()
            };
            errors.push(format!(
                "{kernel} on {arch}: parameter {i} (`{}`): the launcher passes offset {}{shifted}, size {}; \
                 the cubin expects offset {}, size {}",
                p.declaration(),
                p.offset,
                p.size,
                slot.offset,
                slot.size
            ));
        }
    }
    errors
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::params::parse_params;
    use super::*;
    use crate::arch::Arch;
    use crate::model::{Occupancy, Source, Sourced};

    /// A report as the inspection parsers produce it, with only what the check reads filled in.
    pub(crate) fn report(arch: Arch, kernels: &[(&str, &[(u32, u32)])]) -> CubinReport {
        let zero = Sourced {
            value: 0,
            source: Source::Ptxas,
            other: None,
        };
        CubinReport {
            arch,
            warnings: vec![],
            kernels: kernels
                .iter()
                .map(|(name, slots)| KernelReport {
                    mangled: name.to_string(),
                    demangled: name.to_string(),
                    arch,
                    registers: zero,
                    barriers: None,
                    smem_bytes: zero,
                    stack_bytes: zero,
                    spill_stores: 0,
                    spill_loads: 0,
                    cumulative_stack_bytes: None,
                    cmem_bytes: Default::default(),
                    max_registers_override: None,
                    max_threads_per_block: None,
                    callees: vec![],
                    callee_spills: vec![],
                    flags: vec![],
                    opcode_classes: Default::default(),
                    // cuobjdump lists the table last ordinal first.
                    params: slots
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, &(offset, size))| ParamSlot {
                            ordinal: i as u32,
                            offset,
                            size,
                        })
                        .collect(),
                    occupancy: Vec::<Occupancy>::new(),
                    sass: String::new(),
                })
                .collect(),
        }
    }

    fn params(decls: &[&str]) -> Vec<Param> {
        let d: Vec<String> = decls.iter().map(|s| s.to_string()).collect();
        parse_params("k", &d).unwrap()
    }

    const COPY: &[(u32, u32)] = &[(0, 8), (8, 8), (16, 8)];

    #[test]
    fn matching_table_passes_in_any_listing_order() {
        let r = report(Arch::new(90), &[("copy_vec16", COPY)]);
        assert!(check(
            "copy_vec16",
            "copy.cu",
            &params(&["s: *const u8x16", "d: *mut u8x16", "n: u64"]),
            &r
        )
        .is_empty());
    }

    #[test]
    fn width_mismatch_names_kernel_arch_index_and_both_sides() {
        let r = report(Arch::new(90), &[("copy_vec16", COPY)]);
        let e = check(
            "copy_vec16",
            "copy.cu",
            &params(&["s: *const u8x16", "d: *mut u8x16", "n: u32"]),
            &r,
        );
        assert_eq!(
            e,
            vec!["copy_vec16 on sm_90: parameter 2 (`n: u32`): the launcher passes offset 16, size 4; \
                  the cubin expects offset 16, size 8"
                .to_string()]
        );
    }

    #[test]
    fn count_mismatch_and_shifted_offsets() {
        let r = report(Arch::specific(90), &[("k", &[(0, 4), (8, 8), (16, 8)])]);
        let e = check("k", "k.cu", &params(&["n: u32", "p: *const f32"]), &r);
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(
            e[0].starts_with("k on sm_90a: parameter count: the launcher declares 2 (n, p)"),
            "{e:#?}"
        );
        assert!(e[0].ends_with("has 3"));
        let e = check(
            "k",
            "k.cu",
            &params(&["p: *const f32", "n: u32", "q: *mut f32"]),
            &r,
        );
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(e[0].contains("parameter 0 (`p: *const f32`)") && e[0].contains("size 8;"));
        assert!(e[1].contains("parameter 1 (`n: u32`)") && e[1].contains("offset 8, size 4;"));
    }

    #[test]
    fn a_table_shifted_as_a_whole_matches_but_a_gap_inside_it_does_not() {
        // sm_80 places a kernel's parameters at 0x160 of the constant bank: a leading
        // CUtensorMap (64-byte alignment) starts the table at 32.
        let r = report(Arch::new(80), &[("k", &[(32, 128), (160, 8), (168, 4)])]);
        let e = check(
            "k",
            "k.cu",
            &params(&["m: tensor_map", "c: *mut f32", "n: i32"]),
            &r,
        );
        assert!(e.is_empty(), "{e:#?}");
        let r = report(Arch::new(80), &[("k", &[(32, 128), (168, 8), (176, 4)])]);
        let e = check(
            "k",
            "k.cu",
            &params(&["m: tensor_map", "c: *mut f32", "n: i32"]),
            &r,
        );
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(e[0].contains(
            "offset 128 (from the table's base 32), size 8; the cubin expects offset 168"
        ));
    }

    #[test]
    fn missing_entry_point_is_an_error_but_an_empty_report_is_not_checked() {
        let r = report(Arch::new(80), &[("other", COPY)]);
        let e = check("copy_vec16", "copy.cu", &params(&["n: u64"]), &r);
        assert!(
            e[0].contains("no such entry point; it has: other"),
            "{e:#?}"
        );
        assert!(check(
            "copy_vec16",
            "copy.cu",
            &params(&["n: u64"]),
            &report(Arch::new(80), &[])
        )
        .is_empty());
    }
}
