//! cuBLAS GEMM as a workload: the comparator of the GEMM family, named literally, on
//! rotated operands so decode shapes stream their weights from memory, not from L2.

use super::buffers::{download, poisoned, upload};
use super::cublas::Cublas;
use super::driver::Result;
use super::timer::{Identity, Workload};
use crate::harness::host::gemm::{
    check_entries, random_bytes, sample_entries, GemmTypes, RowMajorGemm,
};
use crate::harness::host::reading::Work;
use crate::harness::host::rotation::{Residency, RotationPlan};
use crate::harness::host::stamp::Route;
use cust::memory::DeviceBuffer;
use cust::stream::Stream;

pub struct CublasGemm<'c> {
    cublas: &'c Cublas,
    shape: RowMajorGemm,
    types: GemmTypes,
    identity: Identity,
    plan: RotationPlan,
    host_a: Vec<u8>,
    host_b: Vec<u8>,
    a: Vec<DeviceBuffer<u8>>,
    b: Vec<DeviceBuffer<u8>>,
    c: Vec<DeviceBuffer<u8>>,
}

impl<'c> CublasGemm<'c> {
    pub fn new(
        cublas: &'c Cublas,
        shape: RowMajorGemm,
        types: GemmTypes,
        l2_bytes: u64,
        residency: Residency,
        seed: u64,
    ) -> Result<CublasGemm<'c>> {
        shape.validate()?;
        let (na, nb, nc) = shape.elements();
        let bytes = ((na + nb) * types.input.size_bytes() + nc * types.output.size_bytes()) as u64;
        let plan = RotationPlan::new(bytes, l2_bytes, residency);
        let host_a = random_bytes(types.input, na, seed);
        let host_b = random_bytes(types.input, nb, seed.wrapping_add(1));
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..plan.sets {
            a.push(upload(&host_a)?);
            b.push(upload(&host_b)?);
            c.push(poisoned::<u8>(nc * types.output.size_bytes())?);
        }
        let identity = Identity {
            kernel: "cublasGemmEx".into(),
            route: Route::Library {
                name: "cuBLAS".into(),
                version: cublas.version.clone(),
                path: cublas.path.clone(),
            },
            toolkit: format!("cuBLAS {}", cublas.version),
            geometry: None,
            dtype: format!("{} in, {} out", types.input.name(), types.output.name()),
            shape: shape.to_string(),
            name: types.comparator_name(),
        };
        Ok(CublasGemm {
            cublas,
            shape,
            types,
            identity,
            plan,
            host_a,
            host_b,
            a,
            b,
            c,
        })
    }
}

impl Workload for CublasGemm<'_> {
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn work(&self) -> Option<Work> {
        Some(Work::Flops(self.shape.flops()))
    }

    fn rotation(&self) -> RotationPlan {
        self.plan
    }

    fn enqueue(&mut self, _stream: &Stream, set: usize) -> Result<()> {
        // The handle is bound to the timer's stream at `Cublas::open`.
        self.cublas.gemm(
            &self.shape,
            &self.types,
            &self.a[set],
            &self.b[set],
            &mut self.c[set],
        )
    }

    fn verify(&mut self, stream: &Stream) -> Result<()> {
        stream
            .synchronize()
            .map_err(|e| format!("cuStreamSynchronize: {e:?}"))?;
        let entries = sample_entries(&self.shape, 28, 0x5eed);
        for (set, c) in self.c.iter().enumerate() {
            let host_c = download(c)?;
            check_entries(
                &self.shape,
                &self.types,
                &self.host_a,
                &self.host_b,
                &host_c,
                &entries,
            )
            .map_err(|e| format!("set {set}: {e}"))?;
        }
        Ok(())
    }
}
