//! Writes the registry module (`OUT_DIR/registry.rs`) that the `cubins` crate includes:
//! artifact bytes by `include_bytes!`, identities, entry points and resource facts.

use crate::arch::Arch;
use crate::model::CubinReport;
use crate::pipeline::BuildOutput;
use std::collections::BTreeSet;
use std::fmt::Write;

/// One kernel file's inspection: one report per cubin, in the order of `KernelFileBuild::cubins`.
pub type FileReports = Vec<CubinReport>;

fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// Where a build's artifacts came from (`cubins::registry::Origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Compiled by nvcc in this build.
    Nvcc,
    /// Verified prebuilt artifacts ([`crate::prebuilt`]).
    Prebuilt,
}

impl Origin {
    fn path(self) -> &'static str {
        match self {
            Origin::Nvcc => "Origin::Nvcc",
            Origin::Prebuilt => "Origin::Prebuilt",
        }
    }
}

/// What every artifact of a build shares.
#[derive(Debug, Clone, Copy)]
pub struct Identity<'a> {
    /// `13.0.88`
    pub toolkit: &'a str,
    /// The flags that identify the build (include folders left out).
    pub flags: &'a [String],
    pub origin: Origin,
}

/// The registry for a build without kernels (`DOCS_RS`, `CUBINS_NO_BUILD=1`).
pub fn empty(reason: &str) -> String {
    format!(
        "pub(super) static BUILD_INFO: BuildInfo = BuildInfo {{ without_kernels: Some({}), toolkit: \"\", archs: &[], origin: None }};\n\
         pub(super) static KERNEL_FILES: &[KernelFile] = &[];\n",
        lit(reason)
    )
}

/// Every arch some kernel file has a cubin for, ascending. Files differ: only those declared
/// arch-specific have `sm_90a` cubins.
pub fn built_archs(build: &BuildOutput) -> Vec<Arch> {
    let set: BTreeSet<Arch> = build
        .files
        .iter()
        .flat_map(|f| f.cubins.iter().map(|c| c.arch))
        .collect();
    set.into_iter().collect()
}

/// The registry for a build. `ptx_copies[i]` is the path of file i's NUL-terminated PTX copy.
pub fn generate(
    build: &BuildOutput,
    reports: &[FileReports],
    identity: &Identity,
    ptx_copies: &[Option<std::path::PathBuf>],
) -> String {
    let Identity {
        toolkit,
        flags,
        origin,
    } = *identity;
    let mut o = String::new();
    let archs_lit: Vec<String> = built_archs(build)
        .iter()
        .map(|a| lit(&a.sm_name()))
        .collect();
    let _ = writeln!(
        o,
        "pub(super) static BUILD_INFO: BuildInfo = BuildInfo {{ without_kernels: None, toolkit: {}, archs: &[{}], origin: Some(ORIGIN) }};",
        lit(toolkit),
        archs_lit.join(", ")
    );
    let _ = writeln!(o, "static ORIGIN: Origin = {};", origin.path());
    let flags_lit: Vec<String> = flags.iter().map(|f| lit(f)).collect();
    let _ = writeln!(o, "static FLAGS: &[&str] = &[{}];", flags_lit.join(", "));
    o.push_str("pub(super) static KERNEL_FILES: &[KernelFile] = &[\n");
    for (fi, file) in build.files.iter().enumerate() {
        let _ = writeln!(
            o,
            "  KernelFile {{ name: {}, source_digest: {}, toolkit: {}, flags: FLAGS, origin: ORIGIN,",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CubinOutputs;
    use crate::pipeline::{Artifact, KernelFileBuild};
    use crate::toolchain::nvcc::OutputKind;

    fn artifact(arch: Arch, kind: OutputKind) -> Artifact {
        Artifact {
            arch,
            kind,
            path: format!("/out/{arch}").into(),
            bytes: vec![],
            sha256: format!("sha-{arch}"),
            deps: vec![],
            outputs: CubinOutputs::default(),
            compiled: false,
        }
    }

    fn file(name: &str, archs: &[Arch]) -> KernelFileBuild {
        KernelFileBuild {
            name: name.into(),
            source: format!("cuda/{name}.cu").into(),
            source_digest: "d".into(),
            cubins: archs
                .iter()
                .map(|&a| artifact(a, OutputKind::Cubin))
                .collect(),
            ptx: Some(artifact(archs[0], OutputKind::Ptx)),
        }
    }

    #[test]
    fn build_info_lists_every_arch_any_file_was_built_for() {
        // CUBINS_ARCHS="80;90a": only the arch-specific file has an sm_90a cubin.
        let build = BuildOutput {
            files: vec![
                file("copy", &[Arch::new(80), Arch::new(90)]),
                file("gemm_wgmma", &[Arch::new(80), Arch::specific(90)]),
            ],
            compiled: vec![],
            cache_notes: vec![],
        };
        assert_eq!(
            built_archs(&build),
            vec![Arch::new(80), Arch::new(90), Arch::specific(90)]
        );
        let identity = |origin| Identity {
            toolkit: "13.0.88",
            flags: &[],
            origin,
        };
        let text = generate(&build, &[], &identity(Origin::Nvcc), &[None, None]);
        assert!(
            text.contains(r#"archs: &["sm_80", "sm_90", "sm_90a"], origin: Some(ORIGIN) }"#)
                && text.contains("static ORIGIN: Origin = Origin::Nvcc;"),
            "{text}"
        );
        let prebuilt = generate(&build, &[], &identity(Origin::Prebuilt), &[None, None]);
        assert!(
            prebuilt.contains("static ORIGIN: Origin = Origin::Prebuilt;")
                && prebuilt.matches("origin: ORIGIN,").count() == 2,
            "every kernel file says where it came from: {prebuilt}"
        );
        let copy =
            &text[text.find("name: \"copy\"").unwrap()..text.find("name: \"gemm_wgmma\"").unwrap()];
        assert!(
            copy.contains("arch: \"sm_90\", cc: 90, arch_specific: false")
                && !copy.contains("sm_90a"),
            "{copy}"
        );
        let wg = &text[text.find("name: \"gemm_wgmma\"").unwrap()..];
        assert!(
            wg.contains("arch: \"sm_90a\", cc: 90, arch_specific: true")
                && !wg.contains("\"sm_90\""),
            "{wg}"
        );
    }
}
