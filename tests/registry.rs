//! The embedded registry holds what the build produced: every kernel file under cuda/, a
//! cubin per arch of the file (arch-specific variants only for the files kernels.toml
//! declares), PTX for the lowest, and identities that match the bytes.

use cubins::registry::{build_info, kernel_file, kernel_files, RegistryError};
use cubins_build::arch::{archs_for_file, Arch};
use cubins_build::manifest::Manifest;
use cubins_build::toolchain::cache::sha256_hex;
use std::path::Path;

fn cuda_sources() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn every_kernel_file_is_embedded_for_every_arch() {
    let info = build_info();
    assert!(
        info.without_kernels.is_none(),
        "this test needs a build with kernels"
    );
    assert!(!info.archs.is_empty());
    let names: Vec<&str> = kernel_files().unwrap().iter().map(|f| f.name).collect();
    assert_eq!(names, cuda_sources());
    let manifest =
        Manifest::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/kernels.toml")).unwrap();
    let built: Vec<Arch> = info.archs.iter().map(|a| Arch::parse(a).unwrap()).collect();
    let mut union: Vec<&str> = Vec::new();
    for f in kernel_files().unwrap() {
        let archs: Vec<&str> = f.cubins.iter().map(|c| c.arch).collect();
        union.extend(&archs);
        if manifest.uses_arch_specific(&format!("{}.cu", f.name)) {
            // Every arch-specific variant built anywhere is built here; nothing outside the build.
            for a in built.iter().filter(|a| a.arch_specific) {
                assert!(
                    archs.contains(&a.sm_name().as_str()),
                    "{}: no {a} cubin",
                    f.name
                );
            }
            let mut sorted = archs.clone();
            sorted.sort_by_key(|a| Arch::parse(a).unwrap());
            assert_eq!(archs, sorted, "{}: cubins ascending", f.name);
        } else {
            let want: Vec<String> = archs_for_file(&built, false)
                .iter()
                .map(Arch::sm_name)
                .collect();
            assert_eq!(
                archs, want,
                "{}: one cubin per plain built arch, ascending (no arch-specific variant)",
                f.name
            );
        }
        let ptx = f
            .ptx
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no PTX", f.name));
        assert_eq!(ptx.cc, f.cubins[0].cc, "PTX is built for the lowest arch");
        assert_eq!(f.toolkit, info.toolkit);
        assert_eq!(f.source_digest.len(), 64);
        assert!(f.flags.contains(&"-lineinfo"));
    }
    union.sort_by_key(|a| Arch::parse(a).unwrap());
    union.dedup();
    assert_eq!(
        union, info.archs,
        "the build info lists every arch some file was built for"
    );
}

#[test]
fn artifact_hashes_match_their_bytes() {
    for f in kernel_files().unwrap() {
        for c in f.cubins {
            assert!(
                c.bytes.starts_with(b"\x7fELF"),
                "{} {}: a cubin is an ELF image",
                f.name,
                c.arch
            );
            assert_eq!(sha256_hex(c.bytes), c.sha256, "{} {}", f.name, c.arch);
        }
        let ptx = f.ptx.as_ref().unwrap();
        assert_eq!(
            ptx.bytes_with_nul.last(),
            Some(&0),
            "PTX is NUL-terminated for the driver"
        );
        assert_eq!(sha256_hex(ptx.text().as_bytes()), ptx.sha256);
        assert!(
            ptx.text()
                .contains(&format!(".target {}", ptx.arch.replace("compute_", "sm_"))),
            "{}",
            ptx.arch
        );
    }
}

#[test]
fn lookups_name_what_exists() {
    let copy = kernel_file("copy").unwrap();
    assert!(copy.cubin(build_info().archs[0]).is_ok());
    match kernel_file("no_such_file").unwrap_err() {
        RegistryError::UnknownKernelFile { available, .. } => assert!(available.contains(&"copy")),
        e => panic!("unexpected {e}"),
    }
    let err = copy.cubin("sm_75").unwrap_err().to_string();
    assert!(
        err.contains("sm_75") && err.contains(build_info().archs[0]),
        "{err}"
    );
}

#[test]
fn entry_points_carry_their_parameter_tables_and_resources() {
    let (file, ep) = cubins::find_entry_point("copy_vec16").unwrap();
    assert_eq!(file.name, "copy");
    assert_eq!(ep.mangled, "copy_vec16");
    assert_eq!(
        ep.params,
        &[(0, 8), (8, 8), (16, 8)],
        "(src, dst, n_vec) as the cubin lays them out"
    );
    for f in kernel_files().unwrap() {
        assert!(!f.entry_points.is_empty(), "{} has no entry points", f.name);
        for c in f.cubins {
            for ep in f.entry_points {
                let r = c.resources(ep.mangled).unwrap_or_else(|| {
                    panic!("{} {}: no resources for {}", f.name, c.arch, ep.mangled)
                });
                assert!(r.registers > 0, "{} {}", ep.mangled, c.arch);
            }
        }
    }
}
