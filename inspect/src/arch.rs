//! GPU architectures: parsing, validation, nvcc flags and per-arch hardware limits.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A real GPU architecture a cubin is built for, e.g. `sm_90` or `sm_90a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Arch {
    /// Compute capability times ten: 80, 86, 89, 90, 100, 120.
    pub cc: u32,
    /// Arch-specific variant (`sm_90a`): uses instructions that do not run on later GPUs.
    pub arch_specific: bool,
}

/// The arches this crate knows how to build and reason about (limits table, features).
pub const SUPPORTED: &[Arch] = &[
    Arch::new(80),
    Arch::new(86),
    Arch::new(89),
    Arch::new(90),
    Arch::specific(90),
    Arch::new(100),
    Arch::new(120),
];

/// Arches built when neither a cargo feature nor `CUBINS_ARCHS` selects any:
/// sm_80 (whose PTX is the JIT fallback for every later GPU) and sm_90 (the H200).
pub const DEFAULT: &[Arch] = &[Arch::new(80), Arch::new(90)];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchError {
    pub input: String,
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = SUPPORTED.iter().map(|a| a.to_string()).collect();
        write!(
            f,
            "unknown GPU arch `{}`; supported arches are: {} (written as `90a`, `sm_90a` or `sm90a`)",
            self.input,
            names.join(", ")
        )
    }
}

impl std::error::Error for ArchError {}

impl Arch {
    pub const fn new(cc: u32) -> Self {
        Arch {
            cc,
            arch_specific: false,
        }
    }

    pub const fn specific(cc: u32) -> Self {
        Arch {
            cc,
            arch_specific: true,
        }
    }

    pub fn major(&self) -> u32 {
        self.cc / 10
    }

    pub fn minor(&self) -> u32 {
        self.cc % 10
    }

    /// Parses `90a`, `sm_90a`, `sm90a`, `SM_90A`; rejects arches not in [`SUPPORTED`].
    pub fn parse(input: &str) -> Result<Arch, ArchError> {
        let err = || ArchError {
            input: input.to_string(),
        };
        let s = input.trim().to_ascii_lowercase();
        let s = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("sm"))
            .unwrap_or(&s);
        let (digits, specific) = match s.strip_suffix('a') {
            Some(d) => (d, true),
            None => (s, false),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let cc: u32 = digits.parse().map_err(|_| err())?;
        let arch = Arch {
            cc,
            arch_specific: specific,
        };
        if SUPPORTED.contains(&arch) {
            Ok(arch)
        } else {
            Err(err())
        }
    }

    /// Parses a list such as `80;89;90a` (also `,` or whitespace separated),
    /// sorted and without duplicates.
    pub fn parse_list(input: &str) -> Result<Vec<Arch>, ArchError> {
        let mut out = Vec::new();
        for part in input
            .split([';', ',', ' ', '\t'])
            .filter(|p| !p.trim().is_empty())
        {
            out.push(Arch::parse(part)?);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// `sm_90a`
    pub fn sm_name(&self) -> String {
        format!(
            "sm_{}{}",
            self.cc,
            if self.arch_specific { "a" } else { "" }
        )
    }

    /// `compute_90a`
    pub fn compute_name(&self) -> String {
        format!(
            "compute_{}{}",
            self.cc,
            if self.arch_specific { "a" } else { "" }
        )
    }

    /// The cargo feature that selects this arch: `sm90a`.
    pub fn feature_name(&self) -> String {
        format!("sm{}{}", self.cc, if self.arch_specific { "a" } else { "" })
    }

    /// Whether a cubin for `self` runs on a device of compute capability `device_cc`:
    /// same major, minor not above the device's, and arch-specific cubins only on their exact arch.
    pub fn cubin_runs_on(&self, device_cc: u32) -> bool {
        if self.arch_specific {
            return self.cc == device_cc;
        }
        self.major() == device_cc / 10 && self.minor() <= device_cc % 10
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sm_name())
    }
}

impl TryFrom<String> for Arch {
    type Error = ArchError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Arch::parse(&s)
    }
}

impl From<Arch> for String {
    fn from(a: Arch) -> String {
        a.sm_name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_spellings() {
        for s in ["90a", "sm_90a", "sm90a", "SM_90A", " 90a "] {
            assert_eq!(Arch::parse(s).unwrap(), Arch::specific(90), "{s}");
        }
        assert_eq!(Arch::parse("sm_89").unwrap(), Arch::new(89));
        assert_eq!(Arch::parse("120").unwrap(), Arch::new(120));
    }

    #[test]
    fn rejects_unknown_with_supported_list() {
        for s in ["75", "sm_91", "", "sm_", "9x", "80aa", "compute_80", "a"] {
            let e = Arch::parse(s).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains("sm_80") && msg.contains("sm_90a") && msg.contains("sm_120"),
                "{msg}"
            );
        }
    }

    #[test]
    fn list_is_sorted_and_deduplicated() {
        let l = Arch::parse_list("90a;80, 89 89;sm_90").unwrap();
        assert_eq!(
            l,
            vec![
                Arch::new(80),
                Arch::new(89),
                Arch::new(90),
                Arch::specific(90)
            ]
        );
        assert!(Arch::parse_list("80;77").is_err());
    }

    #[test]
    fn names() {
        let a = Arch::specific(90);
        assert_eq!(a.sm_name(), "sm_90a");
        assert_eq!(a.compute_name(), "compute_90a");
        assert_eq!(a.feature_name(), "sm90a");
    }

    #[test]
    fn cubin_compatibility() {
        assert!(Arch::new(80).cubin_runs_on(86));
        assert!(Arch::new(80).cubin_runs_on(89));
        assert!(!Arch::new(89).cubin_runs_on(86));
        assert!(!Arch::new(80).cubin_runs_on(90));
        assert!(Arch::new(90).cubin_runs_on(90));
        assert!(Arch::specific(90).cubin_runs_on(90));
        assert!(!Arch::specific(90).cubin_runs_on(100));
        assert!(!Arch::new(90).cubin_runs_on(100));
    }
}
