//! Parser and analysis tests over real tool output captured from the test-only kernels in
//! `fixtures/kernels/` (regenerate with
//! `cargo test -p cubins-build --test fixtures -- --ignored regenerate_tool_output_fixtures`).

mod common;

use common::*;
use cubins_build::analyze::{analyze_cubin, FLAG_CALLEE_SPILLS, FLAG_LOCAL_ARRAY, FLAG_SPILLS};
use cubins_build::arch::Arch;
use cubins_build::compile::Request;
use cubins_build::model::{CubinReport, KernelReport, Source};
use cubins_build::parse::{self, ParseError};
use cubins_build::pipeline::{self, BuildError};
use cubins_build::sass::count_matching;
use cubins_build::shapes::LaunchShapes;
use cubins_build::toolchain::cache::Cache;
use std::fs;

fn report(label: &str, arch: &str) -> CubinReport {
    let a = Arch::parse(arch).unwrap();
    analyze_cubin(a, &fixture_outputs(label, arch), &LaunchShapes::default())
        .unwrap_or_else(|e| panic!("{label}.{arch}: {e}"))
}

fn kernel<'r>(r: &'r CubinReport, name: &str) -> &'r KernelReport {
    r.kernels
        .iter()
        .find(|k| k.mangled == name || k.demangled == name)
        .unwrap_or_else(|| {
            panic!(
                "no kernel {name} in {:?}",
                r.kernels.iter().map(|k| &k.demangled).collect::<Vec<_>>()
            )
        })
}

#[test]
#[ignore = "rewrites fixtures/tool-output from the local toolchain"]
fn regenerate_tool_output_fixtures() {
    let tc = toolchain();
    let cache = Cache::new(cache_dir()).unwrap();
    for spec in SPECS {
        let archs: Vec<Arch> = spec.archs.iter().map(|a| Arch::parse(a).unwrap()).collect();
        let req = Request {
            source_dir: &fixtures().join("kernels"),
            only: vec![spec.file.into()],
            archs,
            extra_flags: spec.extra_flags.iter().map(|f| f.to_string()).collect(),
            cache_dir: &cache_dir(),
            jobs: 2,
        };
        let plan = req.plan().unwrap();
        let build = pipeline::build(&tc, &plan, &cache, 2).unwrap();
        write_depfile(&tc, &plan, spec);
        for c in &build.files[0].cubins {
            let dir = tool_output_dir(spec.label, &c.arch.sm_name());
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(PTXAS_LOG), &c.outputs.ptxas_log).unwrap();
            fs::write(dir.join(RES_USAGE), &c.outputs.res_usage).unwrap();
            fs::write(dir.join(SASS), &c.outputs.sass).unwrap();
            fs::write(dir.join(ELF), &c.outputs.elf).unwrap();
        }
    }
    let req = Request {
        source_dir: &fixtures().join("broken"),
        only: vec!["ptxas_fatal.cu".into()],
        archs: vec![Arch::new(90)],
        extra_flags: vec![],
        cache_dir: &cache_dir(),
        jobs: 1,
    };
    match pipeline::build(&tc, &req.plan().unwrap(), &cache, 1) {
        Err(BuildError::Compile(e)) => {
            let dir = tool_output_dir("ptxas_fatal", "sm_90");
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(PTXAS_LOG), &e.stderr).unwrap();
        }
        other => panic!("ptxas_fatal.cu should fail in ptxas: {other:?}"),
    }
}

/// nvcc's make-style dependency list for `spec`'s file (what the pipeline's `-MD -MF` writes),
/// beside its first arch's outputs, with the workspace's own path written as `/src`.
fn write_depfile(
    tc: &cubins_build::toolchain::Toolchain,
    plan: &pipeline::Plan,
    spec: &FixtureSpec,
) {
    let out = std::process::Command::new(&tc.nvcc)
        .args(["-M", "-x", "cu"])
        .args(&plan.flags)
        .arg(fixtures().join("kernels").join(spec.file))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout)
        .replace(&workspace_root().display().to_string(), "/src");
    fs::write(tool_output_dir(spec.label, spec.archs[0]).join(DEPS), text).unwrap();
}

#[test]
fn every_fixture_parses_and_analyzes() {
    for (label, arch) in all_fixtures() {
        let o = fixture_outputs(label, &arch.sm_name());
        parse::ptxas::parse(&o.ptxas_log).unwrap_or_else(|e| panic!("{label}.{arch}: {e}"));
        parse::res_usage::parse(&o.res_usage).unwrap_or_else(|e| panic!("{label}.{arch}: {e}"));
        parse::sass::parse(&o.sass).unwrap_or_else(|e| panic!("{label}.{arch}: {e}"));
        parse::elf::parse(&o.elf).unwrap_or_else(|e| panic!("{label}.{arch}: {e}"));
        let r = report(label, &arch.sm_name());
        assert!(!r.kernels.is_empty(), "{label}.{arch}: no kernels");
        for k in &r.kernels {
            assert_eq!(k.arch, arch);
            assert!(!k.occupancy.is_empty(), "{label}.{arch}: no occupancy rows");
            assert!(k.sass.starts_with(&format!("{}:\n", k.demangled)));
            assert!(
                !k.sass.contains("/*") && !k.sass.contains(" NOP"),
                "{label}.{arch}: addresses, encodings or NOPs left in\n{}",
                k.sass
            );
        }
    }
}

#[test]
fn spilling_kernel_reports_spills() {
    for arch in ["sm_80", "sm_90"] {
        let r = report("spill", arch);
        let k = kernel(&r, "spill_unrolled");
        assert_eq!(
            k.registers.value, 32,
            "{arch}: __launch_bounds__(1024, 2) caps registers at 32"
        );
        assert!(k.spill_stores > 0 && k.spill_loads > 0, "{arch}: {k:?}");
        assert!(k.stack_bytes.value > 0);
        assert!(k.cumulative_stack_bytes.is_some());
        assert!(
            k.flags.iter().any(|f| f.starts_with(FLAG_SPILLS)),
            "{arch}: {:?}",
            k.flags
        );
        assert!(!k.flags.iter().any(|f| f.starts_with(FLAG_LOCAL_ARRAY)));
        assert!(
            count_matching(&k.opcode_classes, "STL") > 0
                && count_matching(&k.opcode_classes, "LDL") > 0
        );
        assert_eq!(k.max_threads_per_block, Some(1024));
        assert_eq!(
            k.max_registers_override,
            Some(32),
            "{arch}: EIATTR_MAXREG_COUNT from __launch_bounds__(1024, 2)"
        );
    }
}

#[test]
fn local_array_is_flagged() {
    for arch in ["sm_80", "sm_90"] {
        let r = report("local_array", arch);
        let k = kernel(&r, "local_indexed");
        assert!(k.stack_bytes.value > 0, "{arch}: {k:?}");
        assert_eq!((k.spill_stores, k.spill_loads), (0, 0));
        assert!(
            k.flags.iter().any(|f| f.starts_with(FLAG_LOCAL_ARRAY)),
            "{arch}: {:?}",
            k.flags
        );
        assert!(
            count_matching(&k.opcode_classes, "STL") > 0,
            "{arch}: the array lives in local memory"
        );
        assert_eq!(k.max_threads_per_block, None);
        assert_eq!(k.params.len(), 3);
    }
}

#[test]
fn maxrregcount_override() {
    let log =
        parse::ptxas::parse(&fixture_outputs("local_array.maxrregcount24", "sm_80").ptxas_log)
            .unwrap();
    assert!(
        log.register_overrides
            .iter()
            .any(|o| o.function.as_deref() == Some("local_indexed") && o.to == 24),
        "{log:?}"
    );
    let r = report("local_array.maxrregcount24", "sm_80");
    let k = kernel(&r, "local_indexed");
    assert_eq!(k.max_registers_override, Some(24));
    assert_eq!(k.registers.value, 24);
}

#[test]
fn cp_async_shows_ldgsts_and_params() {
    for arch in ["sm_80", "sm_89", "sm_90"] {
        let r = report("cp_async", arch);
        let k = kernel(&r, "cp_async_tile");
        assert!(
            count_matching(&k.opcode_classes, "LDGSTS") > 0,
            "{arch}: {:?}",
            k.opcode_classes
        );
        assert!(count_matching(&k.opcode_classes, "BAR") > 0);
        assert_eq!(k.barriers, Some(1));
        assert_eq!(k.smem_bytes.value, 2048);
        assert_eq!(k.smem_bytes.source, Source::Ptxas);
        assert_eq!(k.max_threads_per_block, Some(128));
        let offsets: Vec<(u32, u32, u32)> = k
            .params
            .iter()
            .map(|p| (p.ordinal, p.offset, p.size))
            .collect();
        assert_eq!(offsets, vec![(0, 0, 8), (1, 8, 8)]);
        // 128-thread blocks fit 16 (sm_80, sm_90: 2048 threads) or 12 (sm_89: 1536) per SM.
        assert!(k.occupancy.iter().all(|o| o.block_size <= 128));
    }
    // sm_90: cuobjdump counts the 1 KB the compiler reserves in the shared window, ptxas does not.
    let k90 = report("cp_async", "sm_90").kernels[0].clone();
    assert_eq!(k90.smem_bytes.other, Some((Source::ResUsage, 3072)));
    // ptxas prints cmem[0] on sm_80 and leaves it out on sm_90.
    assert!(report("cp_async", "sm_80").kernels[0]
        .cmem_bytes
        .contains_key(&0));
    assert!(k90.cmem_bytes.is_empty());
}

#[test]
fn template_names_are_demangled() {
    for arch in ["sm_89", "sm_90"] {
        let r = report("template", arch);
        let names: Vec<&str> = r.kernels.iter().map(|k| k.demangled.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "void fixtures::scale<float, 4>(float const*, float*, float)",
                "void fixtures::scale<int, 2>(int const*, int*, int)"
            ],
            "{arch}"
        );
        assert!(r
            .kernels
            .iter()
            .all(|k| k.mangled.starts_with("_ZN8fixtures5scale")));
    }
}

#[test]
fn helper_spills_are_attributed_to_the_caller() {
    for arch in ["sm_80", "sm_90"] {
        let r = report("helper_spill", arch);
        let caller = kernel(&r, "calls_spilling_helper");
        assert_eq!(
            caller.callees,
            vec!["spilling_helper(float const*, int, int)".to_string()],
            "{arch}"
        );
        assert_eq!(caller.callee_spills.len(), 1, "{arch}: {caller:?}");
        let s = &caller.callee_spills[0];
        assert!(s.spill_stores > 0 && s.spill_loads > 0);
        assert!(
            caller
                .flags
                .iter()
                .any(|f| f.starts_with(FLAG_CALLEE_SPILLS)),
            "{arch}: {:?}",
            caller.flags
        );
        assert!(count_matching(&caller.opcode_classes, "CALL") > 0);
        let other = kernel(&r, "no_helper");
        assert!(
            other.callees.is_empty() && other.callee_spills.is_empty() && other.flags.is_empty(),
            "{arch}: {other:?}"
        );
    }
}

#[test]
fn wgmma_shows_hgmma_on_sm90a() {
    let r = report("wgmma", "sm_90a");
    let k = kernel(&r, "wgmma_m64n8k16");
    assert!(
        count_matching(&k.opcode_classes, "HGMMA") > 0,
        "{:?}",
        k.opcode_classes
    );
    assert_eq!(k.arch, Arch::specific(90));
}

#[test]
fn ptxas_fatal_is_a_typed_error() {
    let log = fs::read_to_string(tool_output_dir("ptxas_fatal", "sm_90").join(PTXAS_LOG)).unwrap();
    match parse::ptxas::parse(&log) {
        Err(ParseError::ToolFailed { messages, .. }) => {
            assert!(
                messages.iter().any(|m| m.contains("ptxas fatal")),
                "{messages:?}"
            );
            assert!(messages.iter().any(|m| m.contains("error")), "{messages:?}");
        }
        other => panic!("{other:?}"),
    }
    let outputs = cubins_build::model::CubinOutputs {
        ptxas_log: log,
        ..Default::default()
    };
    let e = analyze_cubin(Arch::new(90), &outputs, &LaunchShapes::default()).unwrap_err();
    assert!(e.to_string().contains("ptxas fatal"), "{e}");
}

#[test]
fn empty_and_truncated_inputs_are_errors() {
    let o = fixture_outputs("cp_async", "sm_90");
    assert!(matches!(
        parse::ptxas::parse(""),
        Err(ParseError::Empty { .. })
    ));
    assert!(matches!(
        parse::res_usage::parse(""),
        Err(ParseError::Empty { .. })
    ));
    assert!(matches!(
        parse::sass::parse(""),
        Err(ParseError::Empty { .. })
    ));
    assert!(matches!(
        parse::elf::parse(""),
        Err(ParseError::Empty { .. })
    ));
    // Cut just after each record header: the record is incomplete.
    let cut_after =
        |text: &str, needle: &str| text[..text.find(needle).unwrap() + needle.len()].to_string();
    let p = cut_after(&o.ptxas_log, "Function properties for cp_async_tile\n");
    assert!(
        matches!(parse::ptxas::parse(&p), Err(ParseError::Truncated { .. })),
        "{:?}",
        parse::ptxas::parse(&p)
    );
    let r = cut_after(&o.res_usage, "Function cp_async_tile:\n");
    assert!(matches!(
        parse::res_usage::parse(&r),
        Err(ParseError::Truncated { .. })
    ));
    let s = cut_after(&o.sass, "Function : cp_async_tile\n");
    assert!(matches!(
        parse::sass::parse(&s),
        Err(ParseError::Truncated { .. })
    ));
    let e = cut_after(&o.elf, "Attribute:\tEIATTR_KPARAM_INFO\n");
    assert!(
        matches!(parse::elf::parse(&e), Err(ParseError::Truncated { .. })),
        "{:?}",
        parse::elf::parse(&e)
    );
    // A SASS listing cut mid-line.
    let mid = &o.sass[..o.sass.find("/*0010*/").unwrap() + 4];
    assert!(parse::sass::parse(mid).is_err());
}
