//! `cudarc` buffers and streams. cudarc orders work on a buffer across streams with events:
//! each access waits for the buffer's last write and records itself when the op has queued
//! its launches, as cudarc's own launches do.

use crate::runtime::memory::{
    Access, DevicePtr, DeviceRead, DeviceView, DeviceWrite, RawStream, StreamHandle,
};
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr as _, DevicePtrMut as _,
};
use std::sync::Arc;

impl StreamHandle for Arc<CudaStream> {
    fn raw_stream(&self) -> RawStream {
        self.cu_stream().cast()
    }
}

macro_rules! reads {
    ($($ty:ty),*) => {$(
        // SAFETY: cudarc device memory of the stream's context, borrowed for the access; the
        // access waits for the buffer's pending write and records the read on drop.
        unsafe impl<T> DeviceRead<T, Arc<CudaStream>> for $ty {
            fn read<'a>(&'a self, stream: &'a Arc<CudaStream>) -> Access<'a, T> {
                let len = self.len();
                let (ptr, sync) = self.device_ptr(stream);
                Access::cudarc(DeviceView { ptr: DevicePtr::from_raw(ptr), len }, sync)
            }
        }
    )*};
}

macro_rules! writes {
    ($($ty:ty),*) => {$(
        // SAFETY: as for reads, borrowed mutably; the access waits for pending reads and
        // writes and records the write on drop.
        unsafe impl<T> DeviceWrite<T, Arc<CudaStream>> for $ty {
            fn write<'a>(&'a mut self, stream: &'a Arc<CudaStream>) -> Access<'a, T> {
                let len = self.len();
                let (ptr, sync) = self.device_ptr_mut(stream);
                Access::cudarc(DeviceView { ptr: DevicePtr::from_raw(ptr), len }, sync)
            }
        }
    )*};
}

reads!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);
writes!(CudaSlice<T>, CudaViewMut<'_, T>);
