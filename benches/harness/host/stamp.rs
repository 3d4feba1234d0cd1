//! The STAMP line every reading carries: what ran (kernel, route, toolkit, geometry,
//! dtype, shape), against what (comparator), where (GPU, SM clock at start and end).
//! A number without its STAMP is not a reading.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How many hex digits of an artifact's SHA-256 the line shows (the JSON keeps all).
pub const SHA_PREFIX: usize = 12;

/// Which code ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Route {
    /// An artifact of this crate (or of a baseline build) loaded by the runtime.
    Artifact {
        /// `sm_90` for a cubin, `compute_80` for PTX.
        arch: String,
        /// `cubin` or `PTX`.
        kind: String,
        sha256: String,
        /// The driver JIT compiled PTX because no cubin fit the device.
        fallback: bool,
        /// Where the bytes came from: `embedded` or a baseline file path.
        origin: String,
    },
    /// A vendor library picked at run time (`cuBLAS 13.0.2 /usr/local/cuda/lib64/libcublas.so.13`).
    Library {
        name: String,
        version: String,
        path: String,
    },
}

impl Route {
    pub fn is_fallback(&self) -> bool {
        matches!(self, Route::Artifact { fallback: true, .. })
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Route::Artifact {
                arch,
                kind,
                sha256,
                fallback,
                origin,
            } => {
                let sha = &sha256[..sha256.len().min(SHA_PREFIX)];
                write!(f, "{arch}/{kind}/sha256:{sha}")?;
                if origin != "embedded" {
                    write!(f, "/from:{origin}")?;
                }
                if *fallback {
                    f.write_str("/FALLBACK")?;
                }
                Ok(())
            }
            Route::Library {
                name,
                version,
                path,
            } => write!(f, "{name} {version} ({path})"),
        }
    }
}

/// Where an SM clock reading came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClockSource {
    /// NVML's current SM clock.
    Nvml,
    /// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`: the maximum clock, not the current one.
    MaxClockAttribute,
    Unavailable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub mhz: Option<u32>,
    pub source: ClockSource,
    /// GPU temperature in degrees C, when NVML reports it.
    pub temperature_c: Option<u32>,
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.mhz, self.source) {
            (Some(m), ClockSource::Nvml) => write!(f, "{m}MHz")?,
            (Some(m), ClockSource::MaxClockAttribute) => {
                write!(f, "{m}MHz(max-clock-attribute,NVML-unavailable)")?
            }
            _ => f.write_str("unavailable")?,
        }
        if let Some(t) = self.temperature_c {
            write!(f, "@{t}C")?;
        }
        Ok(())
    }
}

/// Launch geometry of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem_bytes: u32,
}

impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        write!(
            f,
            "grid({gx},{gy},{gz})block({bx},{by},{bz})smem({})",
            self.dynamic_smem_bytes
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Entry point, or the library call for a vendor comparator (`cublasGemmEx`).
    pub kernel: String,
    pub route: Route,
    pub toolkit: String,
    /// `None` where a library chooses its own (cuBLAS).
    pub geometry: Option<Geometry>,
    pub dtype: String,
    pub shape: String,
    /// Named literally: `cuBLAS bf16 in, bf16 out, CUBLAS_COMPUTE_32F, default math`.
    pub comparator: String,
    pub gpu: String,
    pub sm_clock_start: Clock,
    pub sm_clock_end: Clock,
    /// `eager` or `graph`, windows, launches per window, rotation.
    pub timing: String,
}

/// `key=value`, quoting values that hold spaces or quotes so the line splits unambiguously.
fn field(f: &mut fmt::Formatter<'_>, key: &str, value: &dyn fmt::Display) -> fmt::Result {
    let v = value.to_string();
    if v.is_empty() || v.contains(|c: char| c.is_whitespace() || c == '"' || c == '=') {
        write!(f, " {key}={v:?}")
    } else {
        write!(f, " {key}={v}")
    }
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("STAMP")?;
        if self.route.is_fallback() {
            f.write_str(" FALLBACK")?;
        }
        field(f, "kernel", &self.kernel)?;
        field(f, "route", &self.route)?;
        field(f, "toolkit", &self.toolkit)?;
        match &self.geometry {
            Some(g) => field(f, "geometry", g)?,
            None => field(f, "geometry", &"library-chosen")?,
        }
        field(f, "dtype", &self.dtype)?;
        field(f, "shape", &self.shape)?;
        field(f, "comparator", &self.comparator)?;
        field(f, "gpu", &self.gpu)?;
        field(f, "sm_clock_start", &self.sm_clock_start)?;
        field(f, "sm_clock_end", &self.sm_clock_end)?;
        field(f, "timing", &self.timing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvml(mhz: u32) -> Clock {
        Clock {
            mhz: Some(mhz),
            source: ClockSource::Nvml,
            temperature_c: Some(41),
        }
    }

    fn stamp(fallback: bool) -> Stamp {
        Stamp {
            kernel: "copy_vec16".into(),
            route: Route::Artifact {
                arch: if fallback { "compute_80" } else { "sm_90" }.into(),
                kind: if fallback { "PTX" } else { "cubin" }.into(),
                sha256: "0123456789abcdef0123456789abcdef".into(),
                fallback,
                origin: "embedded".into(),
            },
            toolkit: "13.0.88".into(),
            geometry: Some(Geometry {
                grid: [1056, 1, 1],
                block: [256, 1, 1],
                dynamic_smem_bytes: 0,
            }),
            dtype: "u8x16".into(),
            shape: "n_vec=67108864".into(),
            comparator: "reference 4.26 TB/s (torch device copy)".into(),
            gpu: "NVIDIA H200".into(),
            sm_clock_start: nvml(1980),
            sm_clock_end: nvml(1965),
            timing: "eager".into(),
        }
    }

    #[test]
    fn line_carries_every_field_and_quotes_spaced_values() {
        let line = stamp(false).to_string();
        assert_eq!(
            line,
            "STAMP kernel=copy_vec16 route=sm_90/cubin/sha256:0123456789ab toolkit=13.0.88 \
             geometry=grid(1056,1,1)block(256,1,1)smem(0) dtype=u8x16 shape=\"n_vec=67108864\" \
             comparator=\"reference 4.26 TB/s (torch device copy)\" gpu=\"NVIDIA H200\" \
             sm_clock_start=1980MHz@41C sm_clock_end=1965MHz@41C timing=eager"
        );
    }

    #[test]
    fn fallback_routes_are_marked_twice() {
        let line = stamp(true).to_string();
        assert!(line.starts_with("STAMP FALLBACK "), "{line}");
        assert!(
            line.contains("route=compute_80/PTX/sha256:0123456789ab/FALLBACK"),
            "{line}"
        );
    }

    #[test]
    fn baseline_artifacts_name_their_origin() {
        let mut s = stamp(false);
        if let Route::Artifact { origin, .. } = &mut s.route {
            *origin = "old/copy.sm_90.cubin".into();
        }
        assert!(s
            .to_string()
            .contains("route=sm_90/cubin/sha256:0123456789ab/from:old/copy.sm_90.cubin"));
    }

    #[test]
    fn attribute_clock_is_labelled_as_the_maximum() {
        let c = Clock {
            mhz: Some(1980),
            source: ClockSource::MaxClockAttribute,
            temperature_c: None,
        };
        assert_eq!(
            c.to_string(),
            "1980MHz(max-clock-attribute,NVML-unavailable)"
        );
        let none = Clock {
            mhz: None,
            source: ClockSource::Unavailable,
            temperature_c: None,
        };
        assert_eq!(none.to_string(), "unavailable");
    }

    #[test]
    fn library_routes_print_name_version_and_path() {
        let r = Route::Library {
            name: "cuBLAS".into(),
            version: "13.0.2".into(),
            path: "/usr/local/cuda/lib64/libcublas.so.13".into(),
        };
        assert_eq!(
            r.to_string(),
            "cuBLAS 13.0.2 (/usr/local/cuda/lib64/libcublas.so.13)"
        );
        assert!(!r.is_fallback());
    }
}
