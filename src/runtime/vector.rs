//! Element types of launcher pointers that need a device-side identity of their own, and
//! [`Dtype`], the storage types a generic launcher takes.
//!
//! `cust` implements its `DeviceCopy` for `half` 1.x only, and this crate speaks `half` 2;
//! `Bf16` and `F16` wrap `half` 2's types (same layout, `repr(transparent)`) so device buffers
//! of them exist. Host slices convert without copying: `bytemuck::cast_slice(&[half::bf16])`.

use bytemuck::{Pod, Zeroable};

/// Sixteen bytes moved as one access: CUDA's `uint4` as a copy kernel uses it (`u8x16` in
/// kernels.toml). 16-byte aligned, as `LDG.128` / `STG.128` require.
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct U8x16(pub [u8; 16]);

/// `__nv_bfloat16` on the device (`bf16` in kernels.toml).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct Bf16(pub half::bf16);

/// `__half` on the device (`f16` in kernels.toml).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct F16(pub half::f16);

// SAFETY: plain bytes without padding (align 16 = size 16; the wrappers are transparent over
// 2-byte `Pod` types), valid for every bit pattern.
unsafe impl Zeroable for U8x16 {}
unsafe impl Pod for U8x16 {}
unsafe impl Zeroable for Bf16 {}
unsafe impl Pod for Bf16 {}
unsafe impl Zeroable for F16 {}
unsafe impl Pod for F16 {}

// SAFETY: as above: no pointers or host resources, any bit pattern is a value.
#[cfg(feature = "cust")]
unsafe impl cust::memory::DeviceCopy for U8x16 {}
#[cfg(feature = "cust")]
unsafe impl cust::memory::DeviceCopy for Bf16 {}
#[cfg(feature = "cust")]
unsafe impl cust::memory::DeviceCopy for F16 {}
#[cfg(feature = "cudarc")]
mod cudarc_impls {
    use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
    // SAFETY: as above; all-zero bytes are a value (zero, or sixteen zero bytes).
    unsafe impl DeviceRepr for super::U8x16 {}
    unsafe impl DeviceRepr for super::Bf16 {}
    unsafe impl DeviceRepr for super::F16 {}
    unsafe impl ValidAsZeroBits for super::U8x16 {}
    unsafe impl ValidAsZeroBits for super::Bf16 {}
    unsafe impl ValidAsZeroBits for super::F16 {}
}

/// A storage type of the kernels' `dtype` axes: [`Bf16`], [`F16`] or `f32` (sealed). A
/// manifest family with a `dtype` axis gets one generic launcher marker (`SwigluFwd<T>`)
/// whose entry point follows from `T`; a `T` the family has no entry for fails to compile.
pub trait Dtype: sealed::Sealed + Copy + Default + 'static {
    const KIND: DtypeKind;
    /// As kernels.toml and the entry names write it: `bf16`, `f16`, `f32`.
    const NAME: &'static str = Self::KIND.name();
}

/// Which [`Dtype`]: what a generated launcher's entry choice matches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DtypeKind {
    Bf16,
    F16,
    F32,
}

impl DtypeKind {
    pub const fn name(self) -> &'static str {
        match self {
            DtypeKind::Bf16 => "bf16",
            DtypeKind::F16 => "f16",
            DtypeKind::F32 => "f32",
        }
    }
}

impl Dtype for Bf16 {
    const KIND: DtypeKind = DtypeKind::Bf16;
}

impl Dtype for F16 {
    const KIND: DtypeKind = DtypeKind::F16;
}

impl Dtype for f32 {
    const KIND: DtypeKind = DtypeKind::F32;
}

mod sealed {
    /// Only this crate's storage types are a [`super::Dtype`]; each is an element type of
    /// the runtimes enabled (`cust::memory::DeviceCopy`, `cudarc::driver::DeviceRepr`), so
    /// code generic over `T: Dtype` allocates their buffers.
    pub trait Sealed: Runtimes {}

    #[cfg(all(feature = "cust", feature = "cudarc"))]
    pub trait Runtimes: cust::memory::DeviceCopy + cudarc::driver::DeviceRepr {}
    #[cfg(all(feature = "cust", not(feature = "cudarc")))]
    pub trait Runtimes: cust::memory::DeviceCopy {}
    #[cfg(all(feature = "cudarc", not(feature = "cust")))]
    pub trait Runtimes: cudarc::driver::DeviceRepr {}
    #[cfg(not(any(feature = "cust", feature = "cudarc")))]
    pub trait Runtimes {}

    impl<T: Sealed> Runtimes for T {}

    impl Sealed for super::Bf16 {}
    impl Sealed for super::F16 {}
    impl Sealed for f32 {}
}

impl From<half::bf16> for Bf16 {
    fn from(v: half::bf16) -> Self {
        Bf16(v)
    }
}

impl From<Bf16> for half::bf16 {
    fn from(v: Bf16) -> Self {
        v.0
    }
}

impl From<half::f16> for F16 {
    fn from(v: half::f16) -> Self {
        F16(v)
    }
}

impl From<F16> for half::f16 {
    fn from(v: F16) -> Self {
        v.0
    }
}

impl Bf16 {
    pub fn from_f32(v: f32) -> Self {
        Bf16(half::bf16::from_f32(v))
    }

    pub fn to_f32(self) -> f32 {
        self.0.to_f32()
    }
}

impl F16 {
    pub fn from_f32(v: f32) -> Self {
        F16(half::f16::from_f32(v))
    }

    pub fn to_f32(self) -> f32 {
        self.0.to_f32()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_device_types() {
        assert_eq!(
            (std::mem::size_of::<U8x16>(), std::mem::align_of::<U8x16>()),
            (16, 16)
        );
        assert_eq!(
            (std::mem::size_of::<Bf16>(), std::mem::align_of::<Bf16>()),
            (2, 2)
        );
        assert_eq!(
            (std::mem::size_of::<F16>(), std::mem::align_of::<F16>()),
            (2, 2)
        );
    }

    #[test]
    fn dtype_names_are_the_manifest_types() {
        assert_eq!([Bf16::NAME, F16::NAME, f32::NAME], ["bf16", "f16", "f32"]);
        assert_eq!(<f32 as Dtype>::KIND, DtypeKind::F32);
    }

    #[test]
    fn host_slices_convert_in_place() {
        let host = [half::bf16::from_f32(1.5), half::bf16::from_f32(-2.0)];
        let dev: &[Bf16] = bytemuck::cast_slice(&host);
        assert_eq!(dev[1].to_f32(), -2.0);
        assert_eq!(F16::from_f32(0.5).to_f32(), 0.5);
        assert_eq!(
            half::bf16::from(Bf16::from_f32(3.0)),
            half::bf16::from_f32(3.0)
        );
    }
}
