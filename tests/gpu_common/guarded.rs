//! Guarded device buffers for the GPU gates that check values (`tests/gpu_fused.rs`,
//! `tests/gpu_gemm.rs`, which include this file by path next to `tests/common`): the data
//! sits between poisoned guard zones, so a write past either end, or an output element never
//! written, is caught.
#![allow(dead_code)] // each including binary uses part of it

use crate::common::data::Elem;
use cubins::runtime::{Bf16, F16};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use half::{bf16, f16};

/// A host storage type and the device type the launchers take.
pub trait DeviceElem: Elem {
    type Dev: DeviceCopy + Copy;
    fn dev(self) -> Self::Dev;
    fn host(v: Self::Dev) -> Self;
}

impl DeviceElem for bf16 {
    type Dev = Bf16;
    fn dev(self) -> Bf16 {
        Bf16(self)
    }
    fn host(v: Bf16) -> Self {
        v.0
    }
}

impl DeviceElem for f16 {
    type Dev = F16;
    fn dev(self) -> F16 {
        F16(self)
    }
    fn host(v: F16) -> Self {
        v.0
    }
}

impl DeviceElem for f32 {
    type Dev = f32;
    fn dev(self) -> f32 {
        self
    }
    fn host(v: f32) -> Self {
        v
    }
}

/// Poisoned elements around every buffer.
const GUARD: usize = 64;

/// `len` elements at element offset `GUARD + shift` of an allocation whose other elements
/// hold the poison (`shift` moves the base off 16-byte alignment).
pub struct Guarded<T: DeviceElem> {
    buf: DeviceBuffer<T::Dev>,
    start: usize,
    len: usize,
}

impl<T: DeviceElem> Guarded<T> {
    pub fn new(values: &[T], shift: usize) -> Guarded<T> {
        let start = GUARD + shift;
        let mut host = vec![T::poison().dev(); start + values.len() + GUARD];
        for (d, &v) in host[start..].iter_mut().zip(values) {
            *d = v.dev();
        }
        Guarded {
            buf: crate::gpu_common::uploaded(&host).expect("upload"),
            start,
            len: values.len(),
        }
    }

    /// An output: all poison.
    pub fn poisoned(len: usize, shift: usize) -> Guarded<T> {
        Guarded::new(&vec![T::poison(); len], shift)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn view(&self) -> DeviceSlice<T::Dev> {
        self.buf.index(self.start..self.start + self.len)
    }

    pub fn upload(&mut self, values: &[T]) {
        let dev: Vec<T::Dev> = values.iter().map(|&v| v.dev()).collect();
        self.view().copy_from(&dev[..]).expect("upload");
        // As `uploaded`: the copy done before a launch on another stream reads it.
        cust::context::CurrentContext::synchronize().expect("upload");
    }

    /// The elements, after checking that the guard zones still hold the poison.
    pub fn read(&self, what: &str) -> Vec<T> {
        let mut host = vec![T::default().dev(); self.buf.len()];
        self.buf.copy_to(&mut host[..]).expect("download");
        let all: Vec<T> = host.into_iter().map(T::host).collect();
        let (before, rest) = all.split_at(self.start);
        let (body, after) = rest.split_at(self.len);
        assert!(
            before.iter().chain(after).all(|v| v.is_poison()),
            "{what}: a write landed outside the buffer"
        );
        body.to_vec()
    }

    /// The elements, every one written (no poison left).
    pub fn output(&self, what: &str) -> Vec<T> {
        let body = self.read(what);
        if let Some(i) = body.iter().position(|v| v.is_poison()) {
            panic!(
                "{what} ({}): element {i} of {} was never written",
                T::NAME,
                body.len()
            );
        }
        body
    }
}
