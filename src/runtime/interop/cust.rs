//! `cust` buffers and streams. cust keeps no per-stream state: its views need nothing held.

use crate::runtime::memory::{
    Access, DevicePtr, DeviceRead, DeviceView, DeviceWrite, RawStream, StreamHandle,
};
use cust::memory::{DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::stream::Stream;

impl StreamHandle for Stream {
    fn raw_stream(&self) -> RawStream {
        self.as_inner().cast()
    }
}

fn view<T: DeviceCopy>(slice: &DeviceSlice<T>) -> DeviceView<T> {
    DeviceView {
        ptr: DevicePtr::from_raw(slice.as_device_ptr().as_raw()),
        len: slice.len(),
    }
}

macro_rules! buffers {
    ($($ty:ident),*) => {$(
        // SAFETY: cust device memory of the current context, borrowed (so allocated) for the
        // access's lifetime; the borrow rules keep Rust-side writers away meanwhile.
        unsafe impl<T: DeviceCopy> DeviceRead<T, Stream> for $ty<T> {
            fn read<'a>(&'a self, _: &'a Stream) -> Access<'a, T> {
                Access::new(view(self))
            }
        }

        // SAFETY: as above, borrowed mutably.
        unsafe impl<T: DeviceCopy> DeviceWrite<T, Stream> for $ty<T> {
            fn write<'a>(&'a mut self, _: &'a Stream) -> Access<'a, T> {
                Access::new(view(self))
            }
        }
    )*};
}

// A buffer is its slice (`Deref`); both are named, since generic arguments do not deref.
buffers!(DeviceSlice, DeviceBuffer);
