//! Element types of launcher parameters that Rust lacks.

/// Sixteen bytes moved as one access: CUDA's `uint4` as a copy kernel uses it (`u8x16` in
/// kernels.toml). 16-byte aligned, as `LDG.128` / `STG.128` require.
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct U8x16(pub [u8; 16]);

// SAFETY: plain bytes, no pointers or host resources.
#[cfg(feature = "cust")]
unsafe impl cust::memory::DeviceCopy for U8x16 {}

#[cfg(test)]
mod tests {
    #[test]
    fn layout_matches_uint4() {
        assert_eq!(std::mem::size_of::<super::U8x16>(), 16);
        assert_eq!(std::mem::align_of::<super::U8x16>(), 16);
    }
}
