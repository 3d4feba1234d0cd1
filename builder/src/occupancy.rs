//! Offline occupancy: resident blocks and warps per SM for a kernel at a launch shape,
//! following the rules of NVIDIA's occupancy calculator (`cuda_occupancy.h`), which is what
//! `cuOccupancyMaxActiveBlocksPerMultiprocessor` implements:
//!
//! - **warps**: `max_threads_per_sm / 32` over the block's warps (rounded up);
//! - **registers**: allocated per warp in units of 256 (`regs * 32` rounded up); each of the
//!   4 SM sub-partitions holds `registers_per_sm / 4 / regs_per_warp` warps; a block also
//!   fails the hardware check when its warps, rounded up to a multiple of 4, need more than
//!   `registers_per_block`;
//! - **shared memory**: static + dynamic + the 1 KB the driver reserves per block, rounded up
//!   to 128 bytes, against the SM's carve-out: with no preference the whole
//!   `smem_per_sm`; with a preference of p percent, p% of it rounded up to the next carve-out
//!   step, or, when one block does not fit in that, the smallest step that holds one block.
//!   More than 48 KB per block assumes the kernel opted in to the larger per-block limit (as
//!   a launcher must, with `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`);
//! - **blocks**: the per-arch limit of resident blocks;
//! - **barriers** (sm_90 and later): named barriers per SM over the barriers a block uses.
//!
//! The smallest of these is the result; the limiter named is the first of threads, block
//! limit, registers, shared memory, barriers that reaches it. A block that cannot run at all
//! (too many threads, registers or shared memory) gives 0 blocks and [`Limiter::DoesNotFit`].

use crate::arch::Arch;
use crate::model::{Limiter, Occupancy};

/// Hardware limits of one compute capability that occupancy depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchLimits {
    /// Compute capability times ten (arch-specific variants share their base's limits).
    pub cc: u32,
    pub warp_size: u32,
    pub max_threads_per_sm: u32,
    pub max_threads_per_block: u32,
    pub max_blocks_per_sm: u32,
    pub registers_per_sm: u32,
    pub registers_per_block: u32,
    /// Registers are allocated per warp in multiples of this.
    pub register_alloc_unit: u32,
    /// Most registers one thread can use.
    pub max_registers_per_thread: u32,
    /// Register file partitions (warp schedulers) per SM.
    pub sub_partitions: u32,
    /// Shared memory per SM at the largest carve-out, bytes.
    pub smem_per_sm: u32,
    /// Shared memory per block without opting in, bytes.
    pub smem_per_block_default: u32,
    /// Shared memory per block after opting in, bytes.
    pub smem_per_block_optin: u32,
    /// Shared memory the driver reserves for each resident block, bytes.
    pub reserved_smem_per_block: u32,
    /// Shared memory is allocated per block in multiples of this.
    pub smem_alloc_unit: u32,
    /// The carve-outs (shared memory sizes per SM) the hardware can configure, KB, ascending.
    pub smem_carveouts_kb: &'static [u32],
    /// Named barriers available per resident-block slot (sm_90+: barriers limit occupancy).
    pub barriers_per_block_slot: Option<u32>,
}

const KB: u32 = 1024;
const CARVEOUTS_164: &[u32] = &[0, 8, 16, 32, 64, 100, 132, 164];
const CARVEOUTS_100: &[u32] = &[0, 8, 16, 32, 64, 100];
const CARVEOUTS_228: &[u32] = &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228];

const fn limits(
    cc: u32,
    max_threads_per_sm: u32,
    max_blocks_per_sm: u32,
    smem_per_sm_kb: u32,
    smem_carveouts_kb: &'static [u32],
    barriers_per_block_slot: Option<u32>,
) -> ArchLimits {
    ArchLimits {
        cc,
        warp_size: 32,
        max_threads_per_sm,
        max_threads_per_block: 1024,
        max_blocks_per_sm,
        registers_per_sm: 65536,
        registers_per_block: 65536,
        register_alloc_unit: 256,
        max_registers_per_thread: 255,
        sub_partitions: 4,
        smem_per_sm: smem_per_sm_kb * KB,
        smem_per_block_default: 48 * KB,
        // Opt-in per block is the SM's shared memory less the 1 KB reserved for the block.
        smem_per_block_optin: smem_per_sm_kb * KB - KB,
        reserved_smem_per_block: KB,
        smem_alloc_unit: 128,
        smem_carveouts_kb,
        barriers_per_block_slot,
    }
}

/// Per-arch limits (CUDA C++ Programming Guide, "Technical Specifications per Compute
/// Capability", and `cuda_occupancy.h` of CUDA 13.0).
pub const LIMITS: &[ArchLimits] = &[
    limits(80, 2048, 32, 164, CARVEOUTS_164, None),
    limits(86, 1536, 16, 100, CARVEOUTS_100, None),
    limits(89, 1536, 24, 100, CARVEOUTS_100, None),
    limits(90, 2048, 32, 228, CARVEOUTS_228, Some(2)),
    limits(100, 2048, 32, 228, CARVEOUTS_228, Some(2)),
    limits(120, 1536, 24, 100, CARVEOUTS_100, Some(1)),
];

/// The limits for `arch` (`sm_90a` uses sm_90's); `None` for an arch without a table entry.
pub fn limits_for(arch: Arch) -> Option<&'static ArchLimits> {
    LIMITS.iter().find(|l| l.cc == arch.cc)
}

/// What a kernel uses, as occupancy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelResources {
    pub registers: u32,
    pub static_smem_bytes: u32,
    pub barriers: u32,
    /// `__launch_bounds__` maximum, when declared.
    pub max_threads_per_block: Option<u32>,
}

/// The shared memory / L1 split the kernel asks for (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Carveout {
    /// No preference: the driver may use the largest carve-out.
    #[default]
    Default,
    /// Percent (0..=100) of the largest carve-out.
    Percent(u32),
}

/// Blocks per SM as each resource alone would allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub by_threads: u32,
    pub by_block_limit: u32,
    pub by_registers: u32,
    pub by_shared_memory: u32,
    pub by_barriers: u32,
}

fn div_ceil(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

fn round_up(a: u64, unit: u64) -> u64 {
    div_ceil(a, unit) * unit
}

fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The smallest carve-out step that holds `bytes`, if any.
fn carveout_step(l: &ArchLimits, bytes: u64) -> Option<u64> {
    l.smem_carveouts_kb
        .iter()
        .map(|kb| u64::from(*kb) * u64::from(KB))
        .find(|step| *step >= bytes)
}

impl ArchLimits {
    pub fn max_warps_per_sm(&self) -> u32 {
        self.max_threads_per_sm / self.warp_size
    }

    /// Blocks per SM each resource allows at `block_size` threads and `dynamic_smem` bytes.
    pub fn limits(
        &self,
        k: &KernelResources,
        block_size: u32,
        dynamic_smem: u32,
        carveout: Carveout,
    ) -> Limits {
        let warps = div_ceil(u64::from(block_size), u64::from(self.warp_size));
        let fits_block = block_size > 0
            && block_size <= self.max_threads_per_block
            && k.max_threads_per_block.map_or(true, |m| block_size <= m);
        let by_threads = if fits_block {
            clamp_u32(u64::from(self.max_warps_per_sm()) / warps)
        } else {
            0
        };
        Limits {
            by_threads,
            by_block_limit: self.max_blocks_per_sm,
            by_registers: self.blocks_by_registers(k.registers, warps),
            by_shared_memory: self.blocks_by_smem(k.static_smem_bytes, dynamic_smem, carveout),
            by_barriers: self.blocks_by_barriers(k.barriers),
        }
    }

    fn blocks_by_registers(&self, registers: u32, warps: u64) -> u32 {
        let per_warp = round_up(
            u64::from(registers) * u64::from(self.warp_size),
            u64::from(self.register_alloc_unit),
        );
        let per_block = per_warp * warps;
        // The hardware check assumes allocation in every sub-partition at once.
        let assumed = per_warp * round_up(warps, u64::from(self.sub_partitions));
        if registers > self.max_registers_per_thread
            || per_block > u64::from(self.registers_per_block)
            || assumed > u64::from(self.registers_per_block)
        {
            return 0;
        }
        if per_warp == 0 {
            return u32::MAX;
        }
        let per_sub_partition = u64::from(self.registers_per_sm / self.sub_partitions) / per_warp;
        clamp_u32(per_sub_partition * u64::from(self.sub_partitions) / warps.max(1))
    }

    /// Shared memory one block takes from the SM: static + dynamic + reserved, rounded up.
    pub fn smem_per_block(&self, static_smem: u32, dynamic_smem: u32) -> u64 {
        let total = u64::from(static_smem)
            + u64::from(dynamic_smem)
            + u64::from(self.reserved_smem_per_block);
        round_up(total, u64::from(self.smem_alloc_unit))
    }

    fn blocks_by_smem(&self, static_smem: u32, dynamic_smem: u32, carveout: Carveout) -> u32 {
        let allocated = self.smem_per_block(static_smem, dynamic_smem);
        let requested = u64::from(static_smem) + u64::from(dynamic_smem);
        let per_block_limit = if requested > u64::from(self.smem_per_block_default) {
            self.smem_per_block_optin
        } else {
            self.smem_per_block_default
        };
        if allocated > u64::from(per_block_limit) + u64::from(self.reserved_smem_per_block) {
            return 0;
        }
        let preferred = match carveout {
            Carveout::Default => Some(u64::from(self.smem_per_sm)),
            Carveout::Percent(p) => carveout_step(
                self,
                u64::from(p.min(100)) * u64::from(self.smem_per_sm) / 100,
            ),
        };
        let per_sm = match preferred {
            Some(p) if p >= allocated => p,
            _ => match carveout_step(self, allocated) {
                Some(step) => step,
                None => return 0,
            },
        };
        clamp_u32(per_sm / allocated)
    }

    fn blocks_by_barriers(&self, barriers: u32) -> u32 {
        match self.barriers_per_block_slot {
            Some(per_slot) if barriers > 0 => self.max_blocks_per_sm * per_slot / barriers,
            _ => u32::MAX,
        }
    }

    /// Occupancy of a kernel at one launch shape.
    pub fn occupancy(
        &self,
        k: &KernelResources,
        block_size: u32,
        dynamic_smem: u32,
        carveout: Carveout,
    ) -> Occupancy {
        let l = self.limits(k, block_size, dynamic_smem, carveout);
        let order = [
            (l.by_threads, Limiter::Threads),
            (l.by_block_limit, Limiter::BlockLimit),
            (l.by_registers, Limiter::Registers),
            (l.by_shared_memory, Limiter::SharedMemory),
            (l.by_barriers, Limiter::Barriers),
        ];
        let blocks = order.iter().map(|(b, _)| *b).min().unwrap_or(0);
        let limiter = if blocks == 0 {
            Limiter::DoesNotFit
        } else {
            order
                .iter()
                .find(|(b, _)| *b == blocks)
                .map_or(Limiter::DoesNotFit, |(_, lim)| *lim)
        };
        let warps_per_block = clamp_u32(div_ceil(u64::from(block_size), u64::from(self.warp_size)));
        let warps_per_sm = blocks.saturating_mul(warps_per_block);
        Occupancy {
            block_size,
            dynamic_smem_bytes: dynamic_smem,
            blocks_per_sm: blocks,
            warps_per_sm,
            occupancy_pct: clamp_u32(
                u64::from(warps_per_sm) * 100 / u64::from(self.max_warps_per_sm()),
            ),
            limiter,
        }
    }
}

/// Block sizes reported when the manifest declares none: powers of two from 64 to 1024 that
/// the kernel's `__launch_bounds__` allows.
pub fn default_block_sizes(max_threads_per_block: Option<u32>) -> Vec<u32> {
    [64, 128, 256, 512, 1024]
        .into_iter()
        .filter(|b| max_threads_per_block.map_or(true, |m| *b <= m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(cc: u32, registers: u32, smem: u32, block: u32, dynamic: u32) -> Occupancy {
        let k = KernelResources {
            registers,
            static_smem_bytes: smem,
            ..Default::default()
        };
        limits_for(Arch::new(cc))
            .unwrap()
            .occupancy(&k, block, dynamic, Carveout::Default)
    }

    fn blocks(o: Occupancy) -> (u32, Limiter) {
        (o.blocks_per_sm, o.limiter)
    }

    #[test]
    fn every_supported_arch_has_limits() {
        for a in crate::arch::SUPPORTED {
            let l = limits_for(*a).unwrap_or_else(|| panic!("no limits for {a}"));
            assert_eq!(l.cc, a.cc);
            assert!(
                l.smem_carveouts_kb.last().copied() == Some(l.smem_per_sm / KB),
                "{a}: largest carve-out is the SM's shared memory"
            );
        }
    }

    #[test]
    fn thread_and_block_limits() {
        // 2048 threads per SM on sm_80 / sm_90; 1536 on sm_86 / sm_89 / sm_120.
        assert_eq!(blocks(occ(80, 32, 0, 256, 0)), (8, Limiter::Threads));
        assert_eq!(blocks(occ(90, 22, 0, 256, 0)), (8, Limiter::Threads));
        assert_eq!(blocks(occ(86, 32, 0, 256, 0)), (6, Limiter::Threads));
        assert_eq!(occ(86, 32, 0, 256, 0).occupancy_pct, 100);
        // Small blocks hit the per-arch block limit: 32 (sm_80), 16 (sm_86), 24 (sm_89, sm_120).
        assert_eq!(blocks(occ(80, 16, 0, 32, 0)), (32, Limiter::BlockLimit));
        assert_eq!(blocks(occ(86, 16, 0, 32, 0)), (16, Limiter::BlockLimit));
        assert_eq!(blocks(occ(89, 16, 0, 32, 0)), (24, Limiter::BlockLimit));
        assert_eq!(blocks(occ(120, 16, 0, 32, 0)), (24, Limiter::BlockLimit));
        assert_eq!(occ(89, 16, 0, 32, 0).occupancy_pct, 50);
    }

    #[test]
    fn register_granularity() {
        // 64 regs: 2048 per warp, 8 warps per sub-partition -> 32 warps -> 4 blocks of 8 warps.
        assert_eq!(blocks(occ(80, 64, 0, 256, 0)), (4, Limiter::Registers));
        // 33 regs round up to 1280 per warp: 12 warps per sub-partition -> 48 warps -> 12 blocks of 4.
        assert_eq!(blocks(occ(90, 33, 0, 128, 0)), (12, Limiter::Registers));
        assert_eq!(occ(90, 33, 0, 128, 0).warps_per_sm, 48);
        // 3-warp blocks with 168 regs: 5376 per warp, 3 warps per sub-partition -> 12 warps -> 4 blocks.
        assert_eq!(blocks(occ(90, 168, 0, 96, 0)), (4, Limiter::Registers));
        // 64 regs x 1024 threads is exactly the register file: 1 block.
        assert_eq!(blocks(occ(90, 64, 0, 1024, 0)), (1, Limiter::Registers));
        // 255 regs x 1024 threads cannot launch.
        assert_eq!(blocks(occ(90, 255, 0, 1024, 0)), (0, Limiter::DoesNotFit));
        // 9 warps x 224 regs (7168 per warp) = 64512 fits the register file, but the hardware
        // check counts 12 warps (9 rounded up to 4 sub-partitions): 86016, so it cannot launch.
        assert_eq!(blocks(occ(90, 224, 0, 288, 0)), (0, Limiter::DoesNotFit));
        assert_eq!(occ(90, 224, 0, 256, 0).blocks_per_sm, 1);
    }

    #[test]
    fn shared_memory_and_carveout() {
        // 48 KB static + 1 KB reserved = 50176 B per block; 228 KB per SM -> 4.
        assert_eq!(
            blocks(occ(90, 32, 48 * KB, 128, 0)),
            (4, Limiter::SharedMemory)
        );
        // 100 KB dynamic on sm_80 opts in (limit 163 KB + 1 KB): one block in 164 KB.
        assert_eq!(
            blocks(occ(80, 32, 0, 128, 100 * KB)),
            (1, Limiter::SharedMemory)
        );
        // The same on sm_86 exceeds the 99 KB opt-in limit.
        assert_eq!(
            blocks(occ(86, 32, 0, 128, 100 * KB)),
            (0, Limiter::DoesNotFit)
        );
        // Exactly the opt-in limit fits.
        assert_eq!(occ(90, 32, 0, 128, 227 * KB).blocks_per_sm, 1);
        assert_eq!(occ(90, 32, 0, 128, 227 * KB + 1).blocks_per_sm, 0);
        // Allocation granularity: 1 byte of smem takes 128 B + 1 KB reserved = 1152 B.
        assert_eq!(
            limits_for(Arch::new(90)).unwrap().smem_per_block(1, 0),
            1152
        );

        let l = limits_for(Arch::new(90)).unwrap();
        let k = KernelResources {
            registers: 32,
            static_smem_bytes: 8 * KB,
            ..Default::default()
        };
        // 25% of 228 KB = 57 KB, rounded up to the 64 KB carve-out: 65536 / 9216 = 7 blocks.
        assert_eq!(
            l.occupancy(&k, 256, 0, Carveout::Percent(25)).blocks_per_sm,
            7
        );
        assert_eq!(
            l.occupancy(&k, 256, 0, Carveout::Percent(25)).limiter,
            Limiter::SharedMemory
        );
        // 0% still gives one block: the smallest step holding it (16 KB for 9 KB) -> 1 block.
        assert_eq!(
            l.occupancy(&k, 256, 0, Carveout::Percent(0)).blocks_per_sm,
            1
        );
    }

    #[test]
    fn barriers_on_hopper() {
        let l = limits_for(Arch::new(90)).unwrap();
        let k = KernelResources {
            registers: 16,
            barriers: 16,
            ..Default::default()
        };
        // 32 block slots x 2 barriers / 16 per block = 4.
        assert_eq!(
            blocks(l.occupancy(&k, 64, 0, Carveout::Default)),
            (4, Limiter::Barriers)
        );
        // Not a limit before sm_90.
        assert_eq!(
            limits_for(Arch::new(80))
                .unwrap()
                .occupancy(&k, 64, 0, Carveout::Default)
                .blocks_per_sm,
            32
        );
    }

    #[test]
    fn launch_bounds() {
        let l = limits_for(Arch::new(90)).unwrap();
        let k = KernelResources {
            registers: 16,
            max_threads_per_block: Some(256),
            ..Default::default()
        };
        assert_eq!(
            blocks(l.occupancy(&k, 512, 0, Carveout::Default)),
            (0, Limiter::DoesNotFit)
        );
        assert_eq!(l.occupancy(&k, 256, 0, Carveout::Default).blocks_per_sm, 8);
        assert_eq!(blocks(occ(90, 16, 0, 2048, 0)), (0, Limiter::DoesNotFit));
        assert_eq!(default_block_sizes(Some(256)), vec![64, 128, 256]);
        assert_eq!(default_block_sizes(None).len(), 5);
    }
}
