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

/// An arch selection that names no supported arch.
/// The arches a kernel file is built for, out of the `selected` ones: all of them for a file
/// that uses arch-specific instructions; for any other file each arch-specific variant becomes
/// its plain arch (`sm_90a` gives `sm_90`), which compiles to the same code. Sorted, no duplicates.
pub fn archs_for_file(selected: &[Arch], uses_arch_specific: bool) -> Vec<Arch> {
    let mut out: Vec<Arch> = selected
        .iter()
        .map(|&a| if uses_arch_specific { a } else { a.plain() })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchError {
    /// Not a spelling of a supported arch (`75`, `sm_91`, `9x`).
    Unknown { input: String },
    /// A list with no arch in it (`;`).
    Empty { input: String },
}

/// `sm_80, sm_86, ...`: what every arch error lists.
fn supported_names() -> String {
    let names: Vec<String> = SUPPORTED.iter().map(|a| a.sm_name()).collect();
    names.join(", ")
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchError::Unknown { input } => write!(f, "unknown GPU arch `{input}`")?,
            ArchError::Empty { input } => write!(f, "`{input}` names no GPU arch")?,
        }
        write!(
            f,
            "; supported arches are: {} (written as `89`, `8.9`, `sm_89`, `sm89` or `compute_89`, \
             `90a`, `9.0a` or `sm_90a`; `all` selects every one)",
            supported_names()
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

    /// Parses the spellings of neighbouring tools: `89`, `8.9`, `sm_89`, `sm89`, `compute_89`,
    /// and with an `a` for the arch-specific variant (`90a`, `9.0a`, `sm_90a`, `SM_90A`);
    /// rejects arches not in [`SUPPORTED`].
    pub fn parse(input: &str) -> Result<Arch, ArchError> {
        let err = || ArchError::Unknown {
            input: input.trim().to_string(),
        };
        let s = input.trim().to_ascii_lowercase();
        let s = ["compute_", "compute", "sm_", "sm"]
            .iter()
            .find_map(|p| s.strip_prefix(p))
            .unwrap_or(&s);
        let (number, specific) = match s.strip_suffix('a') {
            Some(n) => (n, true),
            None => (s, false),
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        // `8.9` is compute capability major.minor; `89` is already times ten.
        let cc: u32 = match number.split_once('.') {
            Some((major, minor)) if digits(major) && digits(minor) && minor.len() == 1 => {
                let major: u32 = major.parse().map_err(|_| err())?;
                major * 10 + minor.parse::<u32>().map_err(|_| err())?
            }
            None if digits(number) => number.parse().map_err(|_| err())?,
            _ => return Err(err()),
        };
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

    /// Parses a list such as `80;89;90a` (also `,` or whitespace separated; `all` is every
    /// arch in [`SUPPORTED`]), sorted and without duplicates. A list naming no arch is an error.
    pub fn parse_list(input: &str) -> Result<Vec<Arch>, ArchError> {
        let mut out = Vec::new();
        for part in input
            .split([';', ',', ' ', '\t'])
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            if part.eq_ignore_ascii_case("all") {
                out.extend_from_slice(SUPPORTED);
            } else {
                out.push(Arch::parse(part)?);
            }
        }
        if out.is_empty() {
            return Err(ArchError::Empty {
                input: input.to_string(),
            });
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The plain arch of an arch-specific variant (`sm_90a` gives `sm_90`); itself otherwise.
    pub const fn plain(self) -> Arch {
        Arch::new(self.cc)
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
        for s in ["89", "8.9", "sm_89", "sm89", "compute_89", "SM_89", " 8.9 "] {
            assert_eq!(Arch::parse(s).unwrap(), Arch::new(89), "{s}");
        }
        for s in [
            "90a",
            "9.0a",
            "sm_90a",
            "sm90a",
            "compute_90a",
            "SM_90A",
            " 90a ",
        ] {
            assert_eq!(Arch::parse(s).unwrap(), Arch::specific(90), "{s}");
        }
        assert_eq!(Arch::parse("9.0").unwrap(), Arch::new(90));
        assert_eq!(Arch::parse("120").unwrap(), Arch::new(120));
        assert_eq!(Arch::parse("12.0").unwrap(), Arch::new(120));
        assert_eq!(Arch::parse("10.0").unwrap(), Arch::new(100));
    }

    #[test]
    fn rejects_unknown_with_supported_list() {
        for s in [
            "75", "7.5", "sm_91", "", "sm_", "9x", "80aa", "a", "8.", ".9", "8.10", "9.0.0",
            "sm_8_9", "compute_", "120a", "89a", "all",
        ] {
            let e = Arch::parse(s).unwrap_err();
            assert_eq!(
                e,
                ArchError::Unknown {
                    input: s.trim().to_string()
                }
            );
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!("unknown GPU arch `{}`", s.trim()))
                    && msg.contains("sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_120"),
                "{msg}"
            );
        }
    }

    #[test]
    fn list_is_sorted_and_deduplicated() {
        let l = Arch::parse_list("90a;80, 89 8.9;sm_90\tcompute_80").unwrap();
        assert_eq!(
            l,
            vec![
                Arch::new(80),
                Arch::new(89),
                Arch::new(90),
                Arch::specific(90)
            ]
        );
        let e = Arch::parse_list("80;77").unwrap_err();
        assert_eq!(e, ArchError::Unknown { input: "77".into() });
    }

    #[test]
    fn all_is_every_supported_arch() {
        assert_eq!(Arch::parse_list("all").unwrap(), SUPPORTED.to_vec());
        assert_eq!(Arch::parse_list(" ALL ").unwrap(), SUPPORTED.to_vec());
        assert_eq!(Arch::parse_list("all;90a").unwrap(), SUPPORTED.to_vec());
        assert!(Arch::parse_list("all;75").is_err());
    }

    #[test]
    fn a_list_without_arches_is_an_error() {
        for s in [";", " , ", ""] {
            let e = Arch::parse_list(s).unwrap_err();
            assert_eq!(e, ArchError::Empty { input: s.into() });
            assert!(e.to_string().contains("names no GPU arch"), "{e}");
            assert!(e.to_string().contains("sm_120"), "{e}");
        }
    }

    #[test]
    fn files_without_arch_specific_code_get_plain_arches() {
        let sel = [Arch::new(80), Arch::new(90), Arch::specific(90)];
        assert_eq!(archs_for_file(&sel, true), sel.to_vec());
        assert_eq!(
            archs_for_file(&sel, false),
            vec![Arch::new(80), Arch::new(90)]
        );
        assert_eq!(
            archs_for_file(&[Arch::specific(90)], false),
            vec![Arch::new(90)]
        );
        assert_eq!(
            archs_for_file(&[Arch::specific(90)], true),
            vec![Arch::specific(90)]
        );
        assert_eq!(Arch::specific(90).plain(), Arch::new(90));
        assert_eq!(Arch::new(89).plain(), Arch::new(89));
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
