//! Which driver the embedded code needs, checked before a module loads, so an old driver is
//! an error that names both versions instead of a bare `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`
//! or `CUDA_ERROR_NO_BINARY_FOR_GPU`. Pure: the versions are arguments, so every case is
//! tested without a driver.
//!
//! The rules (NVIDIA's CUDA Compatibility guide):
//! - a cubin built by CUDA X.Y loads on any driver of CUDA X.0 or later (minor version
//!   compatibility, since CUDA 11);
//! - PTX is compiled by the driver's own JIT, which reads only PTX ISA versions up to its
//!   own: PTX from CUDA X.Y needs a CUDA X.Y driver or later.

use super::route::{ArtifactKind, Selected};
use crate::registry::KernelFile;
use std::fmt;

/// The oldest Linux x86_64 driver of each CUDA major, from the CUDA release notes: the CUDA
/// 13.0 GA driver for 13, the drivers minor version compatibility starts at for 12 and 11.
const MIN_LINUX_DRIVER: &[(u32, &str)] = &[(11, "450.80.02"), (12, "525.60.13"), (13, "580.65.06")];

/// What a build's code asks of the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverNeed {
    /// `cuDriverGetVersion` must report at least this (13000 for CUDA 13.0).
    pub version: u32,
    /// The oldest Linux x86_64 driver that reports it, where the release notes name one.
    pub linux_driver: Option<&'static str>,
}

/// The driver that code of `kind` built by toolkit `toolkit` (`13.0.88`) needs; `None` for
/// a toolkit version that does not parse (a build without kernels has none).
pub fn driver_needed(toolkit: &str, kind: ArtifactKind) -> Option<DriverNeed> {
    let mut parts = toolkit.split('.').map(str::parse::<u32>);
    let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) else {
        return None;
    };
    let minor = match kind {
        ArtifactKind::Cubin => 0,
        ArtifactKind::PtxJit => minor,
    };
    let linux_driver = MIN_LINUX_DRIVER
        .iter()
        .find(|&&(m, _)| m == major && minor == 0)
        .map(|&(_, driver)| driver);
    Some(DriverNeed {
        version: major * 1000 + minor * 10,
        linux_driver,
    })
}

/// `13.0` for 13000, as `cuDriverGetVersion` encodes a CUDA version.
pub(crate) fn cuda_text(version: u32) -> String {
    format!("{}.{}", version / 1000, version % 1000 / 10)
}

/// A driver too old for the artifact a kernel file's route loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverTooOld {
    pub file: &'static str,
    pub kind: ArtifactKind,
    /// `sm_90` or `compute_80`.
    pub arch: &'static str,
    /// The toolkit that built it (`13.0.88`).
    pub toolkit: &'static str,
    /// The PTX's `.version` (`9.0`) on a PTX route.
    pub ptx_isa: Option<&'static str>,
    /// What `cuDriverGetVersion` reported.
    pub driver: u32,
    pub needed: DriverNeed,
    /// Compute capability times ten of the device.
    pub device_cc: u32,
}

impl fmt::Display for DriverTooOld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let needed = cuda_text(self.needed.version);
        match self.kind {
            ArtifactKind::Cubin => write!(
                f,
                "kernel file `{}` (cubin {}) was built by CUDA {}, and cubins of CUDA {} load only on a CUDA {needed} driver or newer",
                self.file,
                self.arch,
                self.toolkit,
                self.needed.version / 1000
            )?,
            ArtifactKind::PtxJit => write!(
                f,
                "kernel file `{}` takes the PTX route ({}, PTX ISA {}, from CUDA {}), which only a CUDA {needed} driver or newer can JIT-compile",
                self.file,
                self.arch,
                self.ptx_isa.unwrap_or("unknown"),
                self.toolkit
            )?,
        }
        write!(
            f,
            " (cuDriverGetVersion >= {}); this driver reports CUDA {} ({}). Upgrade the driver",
            self.needed.version,
            cuda_text(self.driver),
            self.driver
        )?;
        match self.needed.linux_driver {
            Some(linux) => write!(f, " (on Linux to {linux} or newer)")?,
            None => write!(f, " to one of CUDA {needed} or newer")?,
        }
        match self.kind {
            // Minor version compatibility: any toolkit of the driver's major builds cubins it loads.
            ArtifactKind::Cubin => {
                write!(f, ", or build with a CUDA {} toolkit", self.driver / 1000)
            }
            ArtifactKind::PtxJit => write!(
                f,
                ", or build with a CUDA toolkit no newer than {}, or build a cubin for this device \
                 (cargo feature `sm{cc}` or CUBINS_ARCHS={cc}) so nothing is JIT-compiled",
                cuda_text(self.driver),
                cc = self.device_cc
            ),
        }
    }
}

impl std::error::Error for DriverTooOld {}

/// `Ok` when a driver reporting `driver` (`cuDriverGetVersion`) runs `selected`, an artifact of
/// `file`, on a device of compute capability `device_cc`.
pub fn check_driver(
    driver: u32,
    file: &'static KernelFile,
    selected: &Selected,
    device_cc: u32,
) -> Result<(), DriverTooOld> {
    let Some(needed) = driver_needed(file.toolkit, selected.kind) else {
        return Ok(());
    };
    if driver >= needed.version {
        return Ok(());
    }
    let ptx_isa = match selected.kind {
        ArtifactKind::PtxJit => file.ptx.as_ref().and_then(|p| ptx_isa_version(p.text())),
        ArtifactKind::Cubin => None,
    };
    Err(DriverTooOld {
        file: file.name,
        kind: selected.kind,
        arch: selected.arch,
        toolkit: file.toolkit,
        ptx_isa,
        driver,
        needed,
        device_cc,
    })
}

/// The `.version` directive of a PTX text (`9.0`).
fn ptx_isa_version(ptx: &'static str) -> Option<&'static str> {
    ptx.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(".version"))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Cubin, Origin, Ptx};
    use crate::runtime::{select, RoutePolicy};

    static CUBINS: &[Cubin] = &[Cubin {
        arch: "sm_90",
        cc: 90,
        arch_specific: false,
        bytes: b"elf",
        sha256: "c",
        resources: &[],
    }];

    fn file(toolkit: &'static str) -> &'static KernelFile {
        Box::leak(Box::new(KernelFile {
            name: "copy",
            source_digest: "",
            toolkit,
            flags: &[],
            origin: Origin::Nvcc,
            cubins: CUBINS,
            ptx: Some(Ptx {
                arch: "compute_80",
                cc: 80,
                bytes_with_nul: b"//\n.version 9.1\n.target sm_80\n\0",
                sha256: "p",
            }),
            entry_points: &[],
        }))
    }

    fn route(file: &'static KernelFile, device_cc: u32) -> Selected {
        select(file, device_cc, RoutePolicy::Auto).unwrap()
    }

    #[test]
    fn cubins_need_the_first_driver_of_their_major() {
        let need = driver_needed("13.0.88", ArtifactKind::Cubin).unwrap();
        assert_eq!(need.version, 13000);
        assert_eq!(need.linux_driver, Some("580.65.06"));
        // Minor version compatibility: a 13.2 cubin still loads on a 13.0 driver.
        assert_eq!(driver_needed("13.2.51", ArtifactKind::Cubin), Some(need));
        assert_eq!(
            driver_needed("12.8.93", ArtifactKind::Cubin)
                .unwrap()
                .linux_driver,
            Some("525.60.13")
        );
        assert_eq!(driver_needed("", ArtifactKind::Cubin), None);
    }

    #[test]
    fn ptx_needs_a_driver_as_new_as_its_toolkit() {
        let need = driver_needed("13.1.80", ArtifactKind::PtxJit).unwrap();
        assert_eq!(need.version, 13010);
        // The release notes name the oldest driver per major, not per minor.
        assert_eq!(need.linux_driver, None);
        assert_eq!(
            driver_needed("13.0.88", ArtifactKind::PtxJit)
                .unwrap()
                .linux_driver,
            Some("580.65.06")
        );
    }

    #[test]
    fn a_driver_of_the_toolkits_major_or_newer_passes() {
        let f = file("13.0.88");
        for driver in [13000, 13020, 14000] {
            assert_eq!(check_driver(driver, f, &route(f, 90), 90), Ok(()));
            assert_eq!(check_driver(driver, f, &route(f, 89), 89), Ok(()));
        }
    }

    #[test]
    fn an_old_driver_for_a_cubin_names_both_versions_and_the_fix() {
        let f = file("13.0.88");
        let e = check_driver(12080, f, &route(f, 90), 90).unwrap_err();
        assert_eq!(e.needed.version, 13000);
        assert_eq!(
            e.to_string(),
            "kernel file `copy` (cubin sm_90) was built by CUDA 13.0.88, and cubins of CUDA 13 load only on a \
             CUDA 13.0 driver or newer (cuDriverGetVersion >= 13000); this driver reports CUDA 12.8 (12080). \
             Upgrade the driver (on Linux to 580.65.06 or newer), or build with a CUDA 12 toolkit"
        );
    }

    #[test]
    fn ptx_newer_than_the_driver_names_its_isa_and_the_cubin_way_out() {
        let f = file("13.1.80");
        // sm_89 has no cubin here: the PTX route, which a 13.0 driver cannot JIT.
        let selected = route(f, 89);
        assert_eq!(selected.kind, ArtifactKind::PtxJit);
        let e = check_driver(13000, f, &selected, 89).unwrap_err();
        assert_eq!(e.ptx_isa, Some("9.1"));
        let m = e.to_string();
        for part in [
            "takes the PTX route (compute_80, PTX ISA 9.1, from CUDA 13.1.80)",
            "only a CUDA 13.1 driver or newer can JIT-compile (cuDriverGetVersion >= 13010)",
            "this driver reports CUDA 13.0 (13000)",
            "to one of CUDA 13.1 or newer",
            "no newer than 13.0",
            "cargo feature `sm89` or CUBINS_ARCHS=89",
        ] {
            assert!(m.contains(part), "{part:?} missing from: {m}");
        }
        // The same driver runs the file's cubin on a device it was built for.
        assert_eq!(check_driver(13000, f, &route(f, 90), 90), Ok(()));
    }

    #[test]
    fn ptx_isa_is_read_from_the_version_directive() {
        assert_eq!(
            ptx_isa_version("//\n// comment\n.version 9.0\n"),
            Some("9.0")
        );
        assert_eq!(ptx_isa_version(".target sm_80\n"), None);
    }
}
