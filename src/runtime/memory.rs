//! Device memory and streams as the ops see them, whichever runtime allocated them: a typed
//! address ([`DevicePtr`], what a kernel parameter `T*` takes), a buffer's address and
//! length ([`DeviceView`]), and the traits a runtime's buffers and streams implement
//! ([`DeviceRead`], [`DeviceWrite`], [`StreamHandle`]). `cust` and `cudarc` types implement
//! them behind their features; a runtime of its own implements them for its types.

use super::launch::BufferArg;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

/// A device address of `T`s: a kernel's `T*` parameter (`repr(transparent)` over the
/// driver's `CUdeviceptr`).
#[repr(transparent)]
pub struct DevicePtr<T> {
    addr: u64,
    elem: PhantomData<fn() -> T>,
}

impl<T> DevicePtr<T> {
    pub const fn from_raw(addr: u64) -> Self {
        DevicePtr {
            addr,
            elem: PhantomData,
        }
    }

    pub const fn null() -> Self {
        DevicePtr::from_raw(0)
    }

    pub const fn as_raw(self) -> u64 {
        self.addr
    }

    /// The same address as a pointer to `U`.
    pub const fn cast<U>(self) -> DevicePtr<U> {
        DevicePtr::from_raw(self.addr)
    }

    /// The address `count` elements further on (wrapping, like pointer arithmetic; the
    /// caller keeps it inside the allocation).
    pub const fn add(self, count: usize) -> Self {
        DevicePtr::from_raw(
            self.addr
                .wrapping_add((count as u64).wrapping_mul(std::mem::size_of::<T>() as u64)),
        )
    }
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DevicePtr<T> {}

impl<T> PartialEq for DevicePtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr
    }
}

impl<T> Eq for DevicePtr<T> {}

impl<T> fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePtr({:#x})", self.addr)
    }
}

/// A buffer of `len` `T`s at `ptr`: what an op checks and launches with.
pub struct DeviceView<T> {
    pub ptr: DevicePtr<T>,
    pub len: usize,
}

impl<T> DeviceView<T> {
    /// The buffer as the launch checks see it, named `param`.
    pub fn arg(&self, param: &'static str) -> BufferArg {
        BufferArg {
            param,
            address: self.ptr.as_raw(),
            bytes: self.len as u64 * std::mem::size_of::<T>() as u64,
        }
    }
}

impl<T> Clone for DeviceView<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DeviceView<T> {}

impl<T> fmt::Debug for DeviceView<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceView({:#x}, len {})", self.ptr.as_raw(), self.len)
    }
}

/// A buffer's view for one op on one stream, and whatever its runtime holds until the op
/// has queued its work (`cudarc` records the access on the buffer's events when it drops).
pub struct Access<'a, T> {
    pub view: DeviceView<T>,
    _held: Held<'a>,
}

enum Held<'a> {
    Nothing(PhantomData<&'a ()>),
    #[cfg(feature = "cudarc")]
    Cudarc(#[allow(dead_code)] cudarc::driver::SyncOnDrop<'a>),
}

impl<'a, T> Access<'a, T> {
    /// A view that needs nothing held (memory the runtime does not track per stream).
    pub fn new(view: DeviceView<T>) -> Self {
        Access {
            view,
            _held: Held::Nothing(PhantomData),
        }
    }

    #[cfg(feature = "cudarc")]
    pub(crate) fn cudarc(view: DeviceView<T>, sync: cudarc::driver::SyncOnDrop<'a>) -> Self {
        Access {
            view,
            _held: Held::Cudarc(sync),
        }
    }
}

/// The driver's handle of a stream (`CUstream`).
pub type RawStream = *mut c_void;

/// A stream of some runtime, as the ops queue work on it.
pub trait StreamHandle {
    fn raw_stream(&self) -> RawStream;
}

/// A bare driver handle, for code that holds no runtime's stream type.
impl StreamHandle for RawStream {
    fn raw_stream(&self) -> RawStream {
        *self
    }
}

/// Device memory an op reads on streams of type `S`.
///
/// # Safety
/// `read` returns the address and length of memory of the stream's context that stays
/// allocated, and is not written by other work, while the returned access lives and until
/// the work queued on `stream` meanwhile has finished.
pub unsafe trait DeviceRead<T, S: ?Sized> {
    fn read<'a>(&'a self, stream: &'a S) -> Access<'a, T>;
}

/// Device memory an op writes (and may read) on streams of type `S`.
///
/// # Safety
/// As [`DeviceRead`], and no other access to the memory may be in flight.
pub unsafe trait DeviceWrite<T, S: ?Sized> {
    fn write<'a>(&'a mut self, stream: &'a S) -> Access<'a, T>;
}
