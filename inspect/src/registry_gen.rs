//! Writes the registry module (`OUT_DIR/registry.rs`) that the `cubins` crate includes:
//! artifact bytes by `include_bytes!`, identities, entry points and resource facts.

use crate::model::CubinReport;
use crate::pipeline::BuildOutput;
use std::fmt::Write;

/// One kernel file's inspection: one report per cubin, in the order of `KernelFileBuild::cubins`.
pub type FileReports = Vec<CubinReport>;

fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// The registry for a build without kernels (`DOCS_RS`, `CUBINS_NO_BUILD=1`).
pub fn empty(reason: &str) -> String {
    format!(
        "pub(super) static BUILD_INFO: BuildInfo = BuildInfo {{ without_kernels: Some({}), toolkit: \"\", archs: &[] }};\n\
         pub(super) static KERNEL_FILES: &[KernelFile] = &[];\n",
        lit(reason)
    )
}

/// The registry for a build. `ptx_copies[i]` is the path of file i's NUL-terminated PTX copy.
pub fn generate(
    build: &BuildOutput,
    reports: &[FileReports],
    toolkit: &str,
    flags: &[String],
    archs: &[String],
    ptx_copies: &[Option<std::path::PathBuf>],
) -> String {
    let mut o = String::new();
    let archs_lit: Vec<String> = archs.iter().map(|a| lit(a)).collect();
    let _ = writeln!(
        o,
        "pub(super) static BUILD_INFO: BuildInfo = BuildInfo {{ without_kernels: None, toolkit: {}, archs: &[{}] }};",
        lit(toolkit),
        archs_lit.join(", ")
    );
    let flags_lit: Vec<String> = flags.iter().map(|f| lit(f)).collect();
    let _ = writeln!(o, "static FLAGS: &[&str] = &[{}];", flags_lit.join(", "));
    o.push_str("pub(super) static KERNEL_FILES: &[KernelFile] = &[\n");
    for (fi, file) in build.files.iter().enumerate() {
        let _ = writeln!(
            o,
            "  KernelFile {{ name: {}, source_digest: {}, toolkit: {}, flags: FLAGS,",
            lit(&file.name),
            lit(&file.source_digest),
            lit(toolkit)
        );
        o.push_str("    cubins: &[\n");
        for (ci, cubin) in file.cubins.iter().enumerate() {
            let _ = writeln!(
                o,
                "      Cubin {{ arch: {}, cc: {}, arch_specific: {}, bytes: include_bytes!({}), sha256: {}, resources: &[",
                lit(&cubin.arch.sm_name()),
                cubin.arch.cc,
                cubin.arch.arch_specific,
                lit(&cubin.path.display().to_string()),
                lit(&cubin.sha256)
            );
            if let Some(rep) = reports.get(fi).and_then(|r| r.get(ci)) {
                for k in &rep.kernels {
                    let occ: Vec<String> = k
                        .occupancy
                        .iter()
                        .map(|x| {
                            format!(
                                "({}, {}, {})",
                                x.block_size, x.dynamic_smem_bytes, x.blocks_per_sm
                            )
                        })
                        .collect();
                    let _ = writeln!(
                        o,
                        "        Resources {{ mangled: {}, registers: {}, static_smem_bytes: {}, stack_bytes: {}, spill_stores: {}, spill_loads: {}, max_threads_per_block: {:?}, occupancy: &[{}] }},",
                        lit(&k.mangled),
                        k.registers.value,
                        k.smem_bytes.value,
                        k.stack_bytes.value,
                        k.spill_stores,
                        k.spill_loads,
                        k.max_threads_per_block,
                        occ.join(", ")
                    );
                }
            }
            o.push_str("      ] },\n");
        }
        o.push_str("    ],\n");
        match (&file.ptx, ptx_copies.get(fi).and_then(|p| p.as_ref())) {
            (Some(ptx), Some(copy)) => {
                let _ = writeln!(
                    o,
                    "    ptx: Some(Ptx {{ arch: {}, cc: {}, bytes_with_nul: include_bytes!({}), sha256: {} }}),",
                    lit(&ptx.arch.compute_name()),
                    ptx.arch.cc,
                    lit(&copy.display().to_string()),
                    lit(&ptx.sha256)
                );
            }
            _ => o.push_str("    ptx: None,\n"),
        }
        // Entry points and parameter tables from the first cubin (every arch has the same ones).
        o.push_str("    entry_points: &[\n");
        if let Some(rep) = reports.get(fi).and_then(|r| r.first()) {
            for k in &rep.kernels {
                let params: Vec<String> = k
                    .params
                    .iter()
                    .map(|p| format!("({}, {})", p.offset, p.size))
                    .collect();
                let _ = writeln!(
                    o,
                    "      EntryPoint {{ mangled: {}, demangled: {}, params: &[{}] }},",
                    lit(&k.mangled),
                    lit(&k.demangled),
                    params.join(", ")
                );
            }
        }
        o.push_str("    ],\n  },\n");
    }
    o.push_str("];\n");
    o
}
