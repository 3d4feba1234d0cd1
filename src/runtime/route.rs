//! Route selection: which artifact of a kernel file a device runs, and the `STAMP` line that
//! says so. Pure (no driver): the registry and a compute capability are all it reads.
//!
//! Order: the cubin for exactly the device's arch (an arch-specific `sm_90a` cubin first, it
//! runs only there); else a cubin of the same major version with the highest lower minor;
//! else the embedded PTX through the driver JIT, if its arch is not above the device's; else
//! an error naming the device and what was built. A PTX route is a fallback, always: it is
//! counted process-wide ([`ptx_fallbacks`]) and labelled in the stamp, so a reading taken on
//! the slow path cannot pass for the fast one.

use crate::registry::{KernelFile, Origin};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Which artifact a route loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArtifactKind {
    Cubin,
    /// PTX compiled by the driver at module load.
    PtxJit,
}

/// Which routes selection may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RoutePolicy {
    /// Cubin if one runs on the device, else PTX.
    #[default]
    Auto,
    /// Cubins only: an error rather than a JIT.
    ForceCubin,
    /// PTX only, even where a cubin would run (tests of the fallback path).
    ForcePtx,
}

/// Environment variable that forces a policy for every `Gpu::new` (feature `cust`): `ptx`,
/// `cubin` or `auto`.
pub const FORCE_ROUTE_ENV: &str = "CUBINS_FORCE_ROUTE";

impl RoutePolicy {
    /// Parses a `CUBINS_FORCE_ROUTE` value.
    pub fn parse(value: &str) -> Option<RoutePolicy> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Some(RoutePolicy::Auto),
            "cubin" => Some(RoutePolicy::ForceCubin),
            "ptx" => Some(RoutePolicy::ForcePtx),
            _ => None,
        }
    }

    /// The policy `CUBINS_FORCE_ROUTE` asks for (`Auto` when unset).
    pub fn from_env() -> Result<RoutePolicy, super::Error> {
        match std::env::var(FORCE_ROUTE_ENV) {
            Err(_) => Ok(RoutePolicy::Auto),
            Ok(v) => RoutePolicy::parse(&v).ok_or(super::Error::BadEnv {
                var: FORCE_ROUTE_ENV,
                value: v,
                expected: "`ptx`, `cubin` or `auto`",
            }),
        }
    }

    fn label(self) -> &'static str {
        match self {
            RoutePolicy::Auto => "auto",
            RoutePolicy::ForceCubin => "force-cubin",
            RoutePolicy::ForcePtx => "force-ptx",
        }
    }
}

/// The artifact selection picked for a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub kind: ArtifactKind,
    /// `sm_90` for a cubin, `compute_80` for PTX.
    pub arch: &'static str,
    /// Compute capability times ten the code was built for (90 for `sm_90a`, 80 for
    /// `compute_80`): what `__CUDA_ARCH__ / 10` is in it.
    pub cc: u32,
    pub sha256: &'static str,
    /// What to hand to `cuModuleLoadData`: cubin bytes, or NUL-terminated PTX.
    pub image: &'static [u8],
}

/// Why no artifact of a kernel file can run on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRoute {
    pub file: &'static str,
    pub device_cc: u32,
    pub cubins: Vec<&'static str>,
    pub ptx: Option<&'static str>,
    pub policy: RoutePolicy,
}

fn cc_text(cc: u32) -> String {
    format!("{}.{}", cc / 10, cc % 10)
}

impl fmt::Display for NoRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no route for kernel file `{}` on a device of compute capability {}: cubins built: {}",
            self.file,
            cc_text(self.device_cc),
            if self.cubins.is_empty() {
                "none".to_string()
            } else {
                self.cubins.join(", ")
            }
        )?;
        write!(
            f,
            " (a cubin runs only on its own major version at an equal or higher minor)"
        )?;
        match self.ptx {
            Some(p) => write!(f, "; PTX: {p}")?,
            None => write!(f, "; no PTX embedded")?,
        }
        match self.policy {
            RoutePolicy::Auto => Ok(()),
            RoutePolicy::ForceCubin => {
                write!(f, "; route forced to cubin, so PTX was not considered")
            }
            RoutePolicy::ForcePtx => {
                write!(f, "; route forced to PTX, so cubins were not considered")
            }
        }?;
        write!(
            f,
            ". Rebuild with CUBINS_ARCHS including sm_{}",
            self.device_cc
        )
    }
}

/// Picks the artifact of `file` that runs on a device of compute capability `device_cc`.
pub fn select(
    file: &'static KernelFile,
    device_cc: u32,
    policy: RoutePolicy,
) -> Result<Selected, NoRoute> {
    if policy != RoutePolicy::ForcePtx {
        if let Some(c) = best_cubin(file, device_cc) {
            return Ok(Selected {
                kind: ArtifactKind::Cubin,
                arch: c.arch,
                cc: c.cc,
                sha256: c.sha256,
                image: c.bytes,
            });
        }
    }
    if policy != RoutePolicy::ForceCubin {
        if let Some(p) = file
            .ptx
            .as_ref()
            .filter(|p| ptx_runs_on(p.arch, p.cc, device_cc))
        {
            return Ok(Selected {
                kind: ArtifactKind::PtxJit,
                arch: p.arch,
                cc: p.cc,
                sha256: p.sha256,
                image: p.bytes_with_nul,
            });
        }
    }
    Err(NoRoute {
        file: file.name,
        device_cc,
        cubins: file.cubins.iter().map(|c| c.arch).collect(),
        ptx: file.ptx.as_ref().map(|p| p.arch),
        policy,
    })
}

fn best_cubin(
    file: &'static KernelFile,
    device_cc: u32,
) -> Option<&'static crate::registry::Cubin> {
    let exact = |specific: bool| {
        file.cubins
            .iter()
            .find(|c| c.cc == device_cc && c.arch_specific == specific)
    };
    exact(true).or_else(|| exact(false)).or_else(|| {
        file.cubins
            .iter()
            .filter(|c| {
                !c.arch_specific && c.cc / 10 == device_cc / 10 && c.cc % 10 < device_cc % 10
            })
            .max_by_key(|c| c.cc)
    })
}

/// PTX JITs for its own arch and later ones; arch-specific PTX (`compute_90a`) only for its own.
fn ptx_runs_on(arch: &str, cc: u32, device_cc: u32) -> bool {
    if arch.ends_with('a') {
        cc == device_cc
    } else {
        cc <= device_cc
    }
}

static PTX_FALLBACKS: AtomicU64 = AtomicU64::new(0);

/// How many modules this process has loaded through the PTX JIT (forced or not).
pub fn ptx_fallbacks() -> u64 {
    PTX_FALLBACKS.load(Ordering::SeqCst)
}

#[cfg_attr(not(feature = "driver"), allow(dead_code))]
pub(crate) fn count_ptx_fallback() {
    PTX_FALLBACKS.fetch_add(1, Ordering::SeqCst);
}

/// The device a route was taken on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceId {
    pub name: Arc<str>,
    /// Compute capability times ten.
    pub cc: u32,
}

/// Which artifact a kernel runs from on this device, and how it got there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Entry point (`copy_vec16`).
    pub kernel: &'static str,
    /// Kernel file stem (`copy`).
    pub file: &'static str,
    pub kind: ArtifactKind,
    /// `sm_90` (cubin) or `compute_80` (PTX).
    pub arch: &'static str,
    /// Compute capability times ten the code was built for: 90 for `sm_90a`, 80 for
    /// `compute_80` (what `__CUDA_ARCH__ / 10` is in it).
    pub code_cc: u32,
    /// SHA-256 of the artifact loaded.
    pub sha256: &'static str,
    /// CUDA toolkit that built the artifact.
    pub toolkit: &'static str,
    /// Whether the build compiled it or embedded it prebuilt.
    pub origin: Origin,
    pub device: DeviceId,
    pub policy: RoutePolicy,
}

impl Route {
    /// Whether the driver JIT compiled this route's code (slower load, possibly slower code).
    pub fn is_fallback(&self) -> bool {
        self.kind == ArtifactKind::PtxJit
    }

    /// The `STAMP` line (same as `to_string()`).
    pub fn stamp(&self) -> String {
        self.to_string()
    }

    /// The first 12 hex digits of the artifact's SHA-256, as STAMP lines print it.
    pub fn short_sha256(&self) -> &'static str {
        self.sha256.get(..12).unwrap_or(self.sha256)
    }

    /// The route as one token, `sm_90a/cubin/sha256:0123456789ab`: a second kernel's route on
    /// a STAMP line.
    pub fn brief(&self) -> String {
        let kind = match self.kind {
            ArtifactKind::Cubin => "cubin",
            ArtifactKind::PtxJit => "ptx-jit(FALLBACK)",
        };
        format!("{}/{kind}/sha256:{}", self.arch, self.short_sha256())
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let route = match self.kind {
            ArtifactKind::Cubin => "cubin",
            ArtifactKind::PtxJit => "ptx-jit (FALLBACK)",
        };
        write!(
            f,
            "STAMP kernel={} file={} route={route} arch={} sha256={} toolkit={} origin={} device={:?} cc={}",
            self.kernel,
            self.file,
            self.arch,
            self.short_sha256(),
            self.toolkit,
            self.origin,
            &*self.device.name,
            cc_text(self.device.cc)
        )?;
        if self.policy != RoutePolicy::Auto {
            write!(f, " policy={}", self.policy.label())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Cubin, Ptx};

    const fn cubin(arch: &'static str, cc: u32, arch_specific: bool) -> Cubin {
        Cubin {
            arch,
            cc,
            arch_specific,
            bytes: b"elf",
            sha256: arch,
            resources: &[],
        }
    }

    fn file(cubins: &'static [Cubin], ptx: Option<(&'static str, u32)>) -> &'static KernelFile {
        named("copy", cubins, ptx)
    }

    fn named(
        name: &'static str,
        cubins: &'static [Cubin],
        ptx: Option<(&'static str, u32)>,
    ) -> &'static KernelFile {
        Box::leak(Box::new(KernelFile {
            name,
            source_digest: "",
            toolkit: "13.0.88",
            flags: &[],
            origin: Origin::Nvcc,
            cubins,
            ptx: ptx.map(|(arch, cc)| Ptx {
                arch,
                cc,
                bytes_with_nul: b".version 9.0\0",
                sha256: arch,
            }),
            entry_points: &[],
        }))
    }

    static SM80_90: &[Cubin] = &[cubin("sm_80", 80, false), cubin("sm_90", 90, false)];
    static SM80_86_90_90A: &[Cubin] = &[
        cubin("sm_80", 80, false),
        cubin("sm_86", 86, false),
        cubin("sm_90", 90, false),
        cubin("sm_90a", 90, true),
    ];

    fn arch_of(r: Result<Selected, NoRoute>) -> String {
        match r {
            Ok(s) => format!("{:?} {}", s.kind, s.arch),
            Err(e) => format!("none: {e}"),
        }
    }

    #[test]
    fn exact_then_same_major_then_ptx() {
        let f = file(SM80_86_90_90A, Some(("compute_80", 80)));
        let auto = RoutePolicy::Auto;
        assert_eq!(arch_of(select(f, 90, auto)), "Cubin sm_90a");
        assert_eq!(arch_of(select(f, 86, auto)), "Cubin sm_86");
        assert_eq!(arch_of(select(f, 89, auto)), "Cubin sm_86");
        assert_eq!(arch_of(select(f, 87, auto)), "Cubin sm_86");
        assert_eq!(arch_of(select(f, 80, auto)), "Cubin sm_80");
        // sm_90a never runs on a later arch, and SASS does not cross majors.
        assert_eq!(arch_of(select(f, 100, auto)), "PtxJit compute_80");
        assert_eq!(arch_of(select(f, 120, auto)), "PtxJit compute_80");
    }

    #[test]
    fn only_arch_specific_files_have_sm90a_and_the_others_route_to_sm90() {
        let auto = RoutePolicy::Auto;
        // CUBINS_ARCHS="80;90a": copy.cu was built for sm_90 in place of sm_90a.
        static COPY: &[Cubin] = &[cubin("sm_80", 80, false), cubin("sm_90", 90, false)];
        static WGMMA: &[Cubin] = &[cubin("sm_80", 80, false), cubin("sm_90a", 90, true)];
        let copy = named("copy", COPY, Some(("compute_80", 80)));
        let wgmma = named("gemm_wgmma", WGMMA, Some(("compute_80", 80)));
        assert_eq!(arch_of(select(copy, 90, auto)), "Cubin sm_90");
        assert_eq!(arch_of(select(wgmma, 90, auto)), "Cubin sm_90a");
        for cc in [80, 86, 89] {
            assert_eq!(arch_of(select(copy, cc, auto)), "Cubin sm_80", "{cc}");
            assert_eq!(arch_of(select(wgmma, cc, auto)), "Cubin sm_80", "{cc}");
        }
        assert_eq!(arch_of(select(copy, 100, auto)), "PtxJit compute_80");
        assert_eq!(arch_of(select(wgmma, 100, auto)), "PtxJit compute_80");

        // CUBINS_ARCHS="90a" alone: copy.cu has an sm_90 cubin and compute_90 PTX, so a later
        // GPU still JITs it; the arch-specific file runs on 9.0 only.
        static COPY_90: &[Cubin] = &[cubin("sm_90", 90, false)];
        static WGMMA_90A: &[Cubin] = &[cubin("sm_90a", 90, true)];
        let copy = named("copy", COPY_90, Some(("compute_90", 90)));
        let wgmma = named("gemm_wgmma", WGMMA_90A, Some(("compute_90a", 90)));
        assert_eq!(arch_of(select(copy, 90, auto)), "Cubin sm_90");
        assert_eq!(arch_of(select(wgmma, 90, auto)), "Cubin sm_90a");
        assert_eq!(arch_of(select(copy, 120, auto)), "PtxJit compute_90");
        let e = select(wgmma, 100, auto).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "no route for kernel file `gemm_wgmma` on a device of compute capability 10.0"
            ) && e.contains("cubins built: sm_90a"),
            "{e}"
        );
    }

    #[test]
    fn forced_policies() {
        let f = file(SM80_90, Some(("compute_80", 80)));
        assert_eq!(
            arch_of(select(f, 90, RoutePolicy::ForcePtx)),
            "PtxJit compute_80"
        );
        assert_eq!(
            arch_of(select(f, 90, RoutePolicy::ForceCubin)),
            "Cubin sm_90"
        );
        let e = select(f, 100, RoutePolicy::ForceCubin)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("compute capability 10.0") && e.contains("sm_80, sm_90"),
            "{e}"
        );
        assert!(e.contains("route forced to cubin"), "{e}");
    }

    #[test]
    fn no_route_names_device_and_built_arches() {
        let f = file(SM80_90, Some(("compute_80", 80)));
        let e = select(f, 75, RoutePolicy::Auto).unwrap_err();
        assert_eq!(e.cubins, vec!["sm_80", "sm_90"]);
        let m = e.to_string();
        assert!(
            m.starts_with("no route for kernel file `copy` on a device of compute capability 7.5"),
            "{m}"
        );
        assert!(
            m.contains("PTX: compute_80") && m.contains("CUBINS_ARCHS including sm_75"),
            "{m}"
        );
        // Arch-specific PTX only on its own arch.
        let f = file(&[], Some(("compute_90a", 90)));
        assert_eq!(
            arch_of(select(f, 90, RoutePolicy::Auto)),
            "PtxJit compute_90a"
        );
        let m = arch_of(select(f, 100, RoutePolicy::Auto));
        assert!(
            m.starts_with("none:")
                && m.contains("cubins built: none")
                && m.contains("PTX: compute_90a"),
            "{m}"
        );
    }

    fn route(kind: ArtifactKind, policy: RoutePolicy) -> Route {
        route_from(kind, policy, Origin::Nvcc)
    }

    fn route_from(kind: ArtifactKind, policy: RoutePolicy, origin: Origin) -> Route {
        Route {
            kernel: "copy_vec16",
            file: "copy",
            kind,
            arch: if kind == ArtifactKind::Cubin {
                "sm_90"
            } else {
                "compute_80"
            },
            code_cc: if kind == ArtifactKind::Cubin { 90 } else { 80 },
            sha256: "1a2b3c4d5e6f7a8b9c0d",
            toolkit: "13.0.88",
            origin,
            device: DeviceId {
                name: "NVIDIA H200".into(),
                cc: 90,
            },
            policy,
        }
    }

    #[test]
    fn selections_carry_the_code_cc() {
        let cc_of = |r: Result<Selected, NoRoute>| r.map(|s| (s.arch, s.cc)).unwrap();
        let f = file(SM80_86_90_90A, Some(("compute_80", 80)));
        let auto = RoutePolicy::Auto;
        assert_eq!(cc_of(select(f, 90, auto)), ("sm_90a", 90));
        assert_eq!(cc_of(select(f, 89, auto)), ("sm_86", 86));
        assert_eq!(cc_of(select(f, 100, auto)), ("compute_80", 80));
        static SM100A: &[Cubin] = &[cubin("sm_100a", 100, true)];
        let g = file(SM100A, None);
        assert_eq!(cc_of(select(g, 100, auto)), ("sm_100a", 100));
    }

    #[test]
    fn stamp_lines() {
        let r = route(ArtifactKind::Cubin, RoutePolicy::Auto);
        assert_eq!(
            r.to_string(),
            "STAMP kernel=copy_vec16 file=copy route=cubin arch=sm_90 sha256=1a2b3c4d5e6f toolkit=13.0.88 \
             origin=nvcc device=\"NVIDIA H200\" cc=9.0"
        );
        let prebuilt = route_from(ArtifactKind::Cubin, RoutePolicy::Auto, Origin::Prebuilt);
        assert!(
            prebuilt
                .stamp()
                .contains(" toolkit=13.0.88 origin=prebuilt device="),
            "{prebuilt}"
        );
        assert!(!r.is_fallback());
        assert_eq!(r.brief(), "sm_90/cubin/sha256:1a2b3c4d5e6f");
        let r = route(ArtifactKind::PtxJit, RoutePolicy::ForcePtx);
        assert_eq!(
            r.brief(),
            "compute_80/ptx-jit(FALLBACK)/sha256:1a2b3c4d5e6f"
        );
        assert!(r.is_fallback());
        let s = r.stamp();
        assert!(
            s.contains(" route=ptx-jit (FALLBACK) arch=compute_80 ")
                && s.ends_with(" policy=force-ptx"),
            "{s}"
        );
        assert_eq!(s.lines().count(), 1);
    }

    #[test]
    fn policy_parsing() {
        assert_eq!(RoutePolicy::parse("PTX"), Some(RoutePolicy::ForcePtx));
        assert_eq!(RoutePolicy::parse("cubin"), Some(RoutePolicy::ForceCubin));
        assert_eq!(RoutePolicy::parse(""), Some(RoutePolicy::Auto));
        assert_eq!(RoutePolicy::parse("jit"), None);
    }
}
