//! TMA descriptors: what `cp.async.bulk.tensor` reads to copy a box of a tensor between
//! global and shared memory. The driver encodes one (`cuTensorMapEncodeTiled`) from the
//! tensor's address, sizes and row pitch and the box shape; a kernel takes it by value
//! (`tensor_map` in `kernels.toml`, `const __grid_constant__ CUtensorMap` in the kernel).
//!
//! [`Tiled2d::check`] refuses, before any driver call, every tensor the copy engine cannot
//! address, naming the parameter and the rule it breaks.

use super::LaunchError;
use std::fmt;

/// `CUDA_ERROR_NOT_FOUND`: what a missing driver entry point is reported as.
#[cfg(feature = "driver")]
const CUDA_ERROR_NOT_FOUND: u32 = 500;

/// An encoded `CUtensorMap`: 128 opaque bytes on a 64-byte boundary.
#[repr(C, align(64))]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TensorMap([u64; 16]);

#[cfg(feature = "driver")]
impl TensorMap {
    /// All zero bits: what the driver overwrites.
    pub(crate) const fn zeroed() -> TensorMap {
        TensorMap([0; 16])
    }
}

impl fmt::Debug for TensorMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TensorMap { .. }")
    }
}

/// Element types a tensor map describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaElem {
    Bf16,
    F16,
    F32,
}

impl TmaElem {
    pub fn bytes(self) -> u64 {
        match self {
            TmaElem::Bf16 | TmaElem::F16 => 2,
            TmaElem::F32 => 4,
        }
    }

    /// `CUtensorMapDataType`.
    #[cfg(feature = "driver")]
    fn code(self) -> std::ffi::c_int {
        match self {
            TmaElem::F16 => 6,
            TmaElem::F32 => 7,
            TmaElem::Bf16 => 9,
        }
    }
}

/// The layout a box is written in shared memory: plain rows, or 16-byte chunks XORed within
/// a span of 32, 64 or 128 bytes (the layouts wgmma descriptors address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// The bytes of a box row the mode can hold.
    fn span(self) -> Option<u64> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }

    /// `CUtensorMapSwizzle`.
    #[cfg(feature = "driver")]
    fn code(self) -> std::ffi::c_int {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }
}

/// A row-major 2-D tensor at device address `base`: `rows` rows of `cols` elements, `pitch`
/// elements from one row's start to the next; copied in boxes of `box_rows` x `box_cols`.
/// Boxes that reach past the tensor read zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiled2d {
    /// The kernel parameter it is for, as errors name it.
    pub param: &'static str,
    pub elem: TmaElem,
    pub base: u64,
    pub cols: u64,
    pub rows: u64,
    pub pitch: u64,
    pub box_cols: u32,
    pub box_rows: u32,
    pub swizzle: Swizzle,
}

/// The largest box side the copy engine takes, in elements.
pub const MAX_BOX: u32 = 256;

impl Tiled2d {
    /// The copy engine's rules (cuda.h, `cuTensorMapEncodeTiled`), each an error naming the
    /// parameter: a 16-byte aligned base; non-empty dimensions of at most 2^32 elements; a
    /// pitch of at least a row, a multiple of 16 bytes and under 2^40 bytes; box sides of 1
    /// to 256 elements; box rows a multiple of 16 bytes and, swizzled, within the span.
    pub fn check(&self) -> Result<(), LaunchError> {
        let e = self.elem.bytes();
        let refuse = |requirement, value| {
            Err(LaunchError::TensorMap {
                param: self.param,
                requirement,
                value,
            })
        };
        if self.base % 16 != 0 {
            return refuse("its base address must be 16-byte aligned", self.base);
        }
        for d in [self.cols, self.rows] {
            if d == 0 || d > 1 << 32 {
                return refuse("each dimension must hold 1 to 2^32 elements", d);
            }
        }
        if self.pitch < self.cols {
            return refuse("the row pitch must hold a row", self.pitch);
        }
        let pitch_bytes = self.pitch * e;
        if pitch_bytes % 16 != 0 {
            return refuse(
                "rows must start a multiple of 16 bytes apart (the leading dimension a multiple of 16 bytes)",
                pitch_bytes,
            );
        }
        if pitch_bytes >= 1 << 40 {
            return refuse("the row pitch must be under 2^40 bytes", pitch_bytes);
        }
        for b in [self.box_cols, self.box_rows] {
            if b == 0 || b > MAX_BOX {
                return refuse("each box side must be 1 to 256 elements", u64::from(b));
            }
        }
        let box_row_bytes = u64::from(self.box_cols) * e;
        if box_row_bytes % 16 != 0 {
            return refuse("a box row must be a multiple of 16 bytes", box_row_bytes);
        }
        if self.swizzle.span().is_some_and(|span| box_row_bytes > span) {
            return refuse(
                "a swizzled box row must fit the swizzle span",
                box_row_bytes,
            );
        }
        Ok(())
    }

    /// The encoded descriptor, after [`check`](Self::check): L2 promotion of 256 bytes,
    /// zeros out of bounds, no interleave.
    #[cfg(feature = "driver")]
    pub fn encode(&self) -> Result<TensorMap, super::Error> {
        self.check().map_err(super::Error::Launch)?;
        let d = super::driver::driver()?;
        let encode_tiled = d
            .cuTensorMapEncodeTiled
            .ok_or_else(|| super::Error::Driver {
                call: "cuTensorMapEncodeTiled",
                code: CUDA_ERROR_NOT_FOUND,
                name: "CUDA_ERROR_NOT_FOUND".into(),
                context: "the loaded driver library has no such entry point (drivers of CUDA 12.0 \
                      and later have it); update the NVIDIA driver"
                    .into(),
            })?;
        let e = self.elem.bytes();
        let dims = [self.cols, self.rows];
        let strides = [self.pitch * e];
        let boxes = [self.box_cols, self.box_rows];
        let element_strides = [1u32, 1];
        let mut map = TensorMap::zeroed();
        const INTERLEAVE_NONE: std::ffi::c_int = 0;
        const L2_PROMOTION_256B: std::ffi::c_int = 3;
        const OOB_FILL_ZEROS: std::ffi::c_int = 0;
        // SAFETY: every pointer is to a live array of the rank (strides: rank - 1) the call
        // reads; the driver writes the 128 bytes of `map` and reads nothing at `base`.
        let status = unsafe {
            encode_tiled(
                &mut map,
                self.elem.code(),
                2,
                self.base as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                element_strides.as_ptr(),
                INTERLEAVE_NONE,
                self.swizzle.code(),
                L2_PROMOTION_256B,
                OOB_FILL_ZEROS,
            )
        };
        super::driver::check_with("cuTensorMapEncodeTiled", status, || format!("{self:?}"))?;
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_tile() -> Tiled2d {
        Tiled2d {
            param: "a",
            elem: TmaElem::Bf16,
            base: 0x7f00_0000_0000,
            cols: 4096,
            rows: 4096,
            pitch: 4096,
            box_cols: 64,
            box_rows: 128,
            swizzle: Swizzle::B128,
        }
    }

    fn requirement(t: Tiled2d) -> &'static str {
        match t.check() {
            Err(LaunchError::TensorMap {
                param, requirement, ..
            }) => {
                assert_eq!(param, "a");
                requirement
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_layout_is_cuda_h_s() {
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
        assert_eq!(std::mem::align_of::<TensorMap>(), 64);
    }

    #[test]
    fn a_gemm_operand_tile_passes() {
        assert_eq!(a_tile().check(), Ok(()));
        // A tail: boxes past the edge read zeros; any row count and column count.
        let tail = Tiled2d {
            cols: 776,
            rows: 333,
            pitch: 776,
            ..a_tile()
        };
        assert_eq!(tail.check(), Ok(()));
    }

    #[test]
    fn every_rule_is_an_error_naming_it() {
        assert!(requirement(Tiled2d {
            base: 8,
            ..a_tile()
        })
        .contains("16-byte aligned"));
        assert!(requirement(Tiled2d {
            rows: 0,
            ..a_tile()
        })
        .contains("1 to 2^32"));
        assert!(requirement(Tiled2d {
            pitch: 4000,
            ..a_tile()
        })
        .contains("hold a row"));
        // An odd leading dimension: 4097 bf16 is 8194 bytes.
        let odd = Tiled2d {
            cols: 4097,
            pitch: 4097,
            ..a_tile()
        };
        assert!(requirement(odd).contains("multiple of 16 bytes apart"));
        assert!(requirement(Tiled2d {
            box_rows: 512,
            ..a_tile()
        })
        .contains("1 to 256"));
        assert!(requirement(Tiled2d {
            box_cols: 4,
            ..a_tile()
        })
        .contains("multiple of 16 bytes"));
        assert!(requirement(Tiled2d {
            box_cols: 128,
            ..a_tile()
        })
        .contains("swizzle span"));
        let unswizzled = Tiled2d {
            box_cols: 128,
            swizzle: Swizzle::None,
            ..a_tile()
        };
        assert_eq!(unswizzled.check(), Ok(()));
        let e = Tiled2d {
            base: 8,
            ..a_tile()
        }
        .check()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`a` cannot be a TMA tensor (8): its base address must be 16-byte aligned"
        );
    }
}
