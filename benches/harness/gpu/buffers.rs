//! Device buffers as benches want them: inputs uploaded from random host data, outputs
//! poisoned (all bytes 0xFF: NaN in every float type) so a launch that skips an element
//! shows up in the output check.

use super::driver::{cust_error, Result};
use cust::memory::bytemuck::Pod;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};

pub const POISON_BYTE: u8 = 0xFF;

pub fn upload<T: DeviceCopy>(host: &[T]) -> Result<DeviceBuffer<T>> {
    DeviceBuffer::from_slice(host).map_err(|e| cust_error("uploading an input", e))
}

pub fn poisoned<T: DeviceCopy + Pod>(len: usize) -> Result<DeviceBuffer<T>> {
    // SAFETY: every byte is written by the memset before anything reads the buffer.
    let mut buf = unsafe { DeviceBuffer::<T>::uninitialized(len) }
        .map_err(|e| cust_error("allocating an output", e))?;
    buf.set_8(POISON_BYTE)
        .map_err(|e| cust_error("poisoning an output", e))?;
    Ok(buf)
}

pub fn download<T: DeviceCopy + Default + Clone>(buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
    let mut host = vec![T::default(); buf.len()];
    buf.copy_to(&mut host[..])
        .map_err(|e| cust_error("downloading an output", e))?;
    Ok(host)
}
