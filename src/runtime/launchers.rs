//! What the generated launchers are made of: the launcher table's rows ([`KernelInfo`]),
//! the trait each generated marker type implements ([`KernelSpec`]), the argument
//! tuples a launch takes ([`LaunchArgs`]) and the storage types a generic marker takes
//! ([`Dtype`]). Each launcher's parameter count, offsets and sizes were checked against
//! every cubin's own parameter table when its crate was built.

use crate::Library;

pub use super::vector::{Dtype, DtypeKind};

/// A kernel with a typed launcher.
#[derive(Debug)]
pub struct KernelInfo {
    /// Entry-point name as declared in the manifest (`kernels.toml`).
    pub name: &'static str,
    /// Symbol looked up in the module (mangled for C++ entry points).
    pub symbol: &'static str,
    /// Kernel file stem (`copy` for `cuda/copy.cu`).
    pub file: &'static str,
    pub params: &'static [ParamInfo],
}

/// One parameter: its declaration and place in the parameter buffer (natural C alignment).
#[derive(Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    /// As declared: `*const u8x16`, `u64`.
    pub ty: &'static str,
    pub offset: u32,
    pub size: u32,
}

/// Implemented by each generated marker type (`cubins::kernels::CopyVec16`, and for a family
/// with a `dtype` axis `cubins::kernels::SwigluFwd<T>` for each [`Dtype`] it has an entry of).
pub trait KernelSpec: 'static {
    /// The library (one crate's kernels) the kernel belongs to.
    const LIBRARY: &'static Library;
    /// Position in the library's launcher table.
    const INDEX: usize;
    /// The kernel's arguments in declaration order, as a tuple of their Rust types
    /// (`(DevicePtr<U8x16>, DevicePtr<U8x16>, u64)`).
    type Args: LaunchArgs;

    fn info() -> &'static KernelInfo {
        &Self::LIBRARY.kernels[Self::INDEX]
    }
}

/// A tuple of kernel arguments, each passed to the driver by address.
///
/// # Safety
/// `pointers` returns exactly one pointer per element, in order, each to that element.
pub unsafe trait LaunchArgs {
    /// `[*mut c_void; N]` for N arguments.
    type Pointers: AsMut<[*mut core::ffi::c_void]>;
    /// The address of each argument; valid while `self` is neither moved nor dropped.
    fn pointers(&mut self) -> Self::Pointers;
}

macro_rules! launch_args {
    ($n:literal $(, $t:ident . $i:tt)*) => {
        // SAFETY: one pointer per tuple element, in order.
        unsafe impl<$($t: Copy),*> LaunchArgs for ($($t,)*) {
            type Pointers = [*mut core::ffi::c_void; $n];
            #[allow(clippy::unused_unit)]
            fn pointers(&mut self) -> Self::Pointers {
                [$(&mut self.$i as *mut $t as *mut core::ffi::c_void),*]
            }
        }
    };
}

launch_args!(0);
launch_args!(1, A.0);
launch_args!(2, A.0, B.1);
launch_args!(3, A.0, B.1, C.2);
launch_args!(4, A.0, B.1, C.2, D.3);
launch_args!(5, A.0, B.1, C.2, D.3, E.4);
launch_args!(6, A.0, B.1, C.2, D.3, E.4, F.5);
launch_args!(7, A.0, B.1, C.2, D.3, E.4, F.5, G.6);
launch_args!(8, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);
launch_args!(9, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8);
launch_args!(10, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9);
launch_args!(11, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10);
launch_args!(12, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10, L.11);
launch_args!(13, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10, L.11, M.12);
launch_args!(14, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10, L.11, M.12, N.13);
launch_args!(15, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10, L.11, M.12, N.13, O.14);
launch_args!(
    16, A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10, L.11, M.12, N.13, O.14, P.15
);

/// The launcher table entry for `name` among cubins' own kernels.
pub fn kernel_info(name: &str) -> Result<&'static KernelInfo, super::Error> {
    crate::kernels::LIBRARY.kernel_info(name)
}

#[cfg(test)]
mod tests {
    use super::{KernelSpec, LaunchArgs};
    use crate::kernels::{
        RmsnormBwdCluster, RopeGptj, RopeNeox, SoftmaxFwd, SwigluFwd, SwigluFwdBf16,
        SwigluFwdInterleavedF16,
    };
    use crate::runtime::{Bf16, F16};
    use std::any::TypeId;

    #[test]
    fn a_generic_marker_takes_the_entry_of_its_dtype() {
        assert_eq!(SwigluFwd::<Bf16>::info().name, "swiglu_fwd_bf16");
        assert_eq!(SwigluFwd::<F16>::info().name, "swiglu_fwd_f16");
        assert_eq!(SwigluFwd::<f32>::info().name, "swiglu_fwd_f32");
        assert_eq!(RopeNeox::<F16>::info().name, "rope_neox_f16");
        assert_eq!(RopeGptj::<f32>::info().name, "rope_gptj_f32");
        assert_eq!(SoftmaxFwd::<Bf16>::info().name, "softmax_fwd_bf16");
        assert_eq!(
            RmsnormBwdCluster::<f32>::info().name,
            "rmsnorm_bwd_cluster_f32"
        );
        // The entry's own name is the same type.
        assert_eq!(
            TypeId::of::<SwigluFwdBf16>(),
            TypeId::of::<SwigluFwd<Bf16>>()
        );
        assert_eq!(
            SwigluFwdInterleavedF16::info().name,
            "swiglu_fwd_interleaved_f16"
        );
    }

    #[test]
    fn each_pointer_addresses_its_argument() {
        let mut args = (1u32, 2.5f32, 3u64);
        let p = args.pointers();
        // SAFETY: the pointers address the tuple's elements, alive here.
        unsafe {
            assert_eq!(*(p[0] as *const u32), 1);
            assert_eq!(*(p[1] as *const f32), 2.5);
            assert_eq!(*(p[2] as *const u64), 3);
        }
        assert_eq!(().pointers().len(), 0);
    }
}
