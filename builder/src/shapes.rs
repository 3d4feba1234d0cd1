//! The launch shapes analysis reports occupancy at: per kernel, the block sizes it is
//! launched with and the dynamic shared memory per block on each arch. Data handed to the
//! analysis ([`crate::analyze::analyze_cubin`]): a build takes them from its manifest
//! ([`LaunchShapes::of`]); without any, every kernel gets the default block-size sweep.

use crate::analyze::KernelNames;
use crate::manifest::Manifest;
use std::collections::BTreeMap;

/// Launch shapes by kernel name (the `extern "C"` symbol or the demangled C++ name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchShapes {
    kernels: BTreeMap<String, Shape>,
}

/// How one kernel is launched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// Threads per block; empty: the default sweep up to the kernel's bound.
    pub block_sizes: Vec<u32>,
    /// Dynamic shared memory per block, bytes, where no arch figure is given.
    pub dynamic_smem_bytes: u32,
    /// Per arch (`sm_86`), where its ring differs.
    pub dynamic_smem_by_arch: BTreeMap<String, u32>,
}

impl Shape {
    /// Dynamic shared memory per block on `arch` (`sm_86`).
    pub fn dynamic_smem_on(&self, arch: &str) -> u32 {
        self.dynamic_smem_by_arch
            .get(arch)
            .copied()
            .unwrap_or(self.dynamic_smem_bytes)
    }
}

impl LaunchShapes {
    /// The shapes `manifest` declares: each entry's `block_sizes` and `dynamic_smem_bytes`,
    /// with the arch tables' figures.
    pub fn of(manifest: &Manifest) -> LaunchShapes {
        let kernels = manifest
            .kernels
            .iter()
            .map(|(name, e)| {
                let by_arch = e
                    .arch
                    .iter()
                    .filter_map(|(a, c)| Some((a.clone(), c.dynamic_smem_bytes?)))
                    .collect();
                let shape = Shape {
                    block_sizes: e.block_sizes.clone(),
                    dynamic_smem_bytes: e.dynamic_smem_bytes,
                    dynamic_smem_by_arch: by_arch,
                };
                (name.clone(), shape)
            })
            .collect();
        LaunchShapes { kernels }
    }

    pub fn insert(&mut self, kernel: impl Into<String>, shape: Shape) {
        self.kernels.insert(kernel.into(), shape);
    }

    /// The shape of the kernel with symbol `mangled`, by any of its names.
    pub fn get(&self, mangled: &str) -> Option<&Shape> {
        let names = KernelNames::of(mangled);
        self.kernels
            .iter()
            .find(|(k, _)| names.matches(k))
            .map(|(_, s)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_come_from_the_manifest_with_per_arch_shared_memory() {
        let m = Manifest::parse(
            "[kernels.k]\nfile = \"k.cu\"\nblock_sizes = [128, 256]\ndynamic_smem_bytes = 1024\n\
             [kernels.k.arch.sm_86]\ndynamic_smem_bytes = 512\n",
            "kernels.toml",
        )
        .unwrap();
        let shapes = LaunchShapes::of(&m);
        let s = shapes.get("k").unwrap();
        assert_eq!(s.block_sizes, vec![128, 256]);
        assert_eq!(
            (s.dynamic_smem_on("sm_90"), s.dynamic_smem_on("sm_86")),
            (1024, 512)
        );
        assert!(shapes.get("other").is_none());
    }
}
