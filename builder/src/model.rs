//! The facts this crate derives about compiled kernels. These types are what the
//! build script embeds in the registry, what reports render and what snapshots hold.

use crate::arch::Arch;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Raw tool outputs captured for one cubin (one kernel file, one arch).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CubinOutputs {
    /// stderr of `nvcc -Xptxas -v` for this arch.
    pub ptxas_log: String,
    /// `cuobjdump -res-usage <cubin>`.
    pub res_usage: String,
    /// `cuobjdump -sass <cubin>`.
    pub sass: String,
    /// `cuobjdump -elf <cubin>` (parameter tables live in `.nv.info.<kernel>`).
    pub elf: String,
}

/// Which tool reported a resource figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    Ptxas,
    ResUsage,
}

/// A resource figure with the tool it came from; `other` holds the second tool's figure
/// when the two disagree (they can), so neither is silently dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sourced {
    pub value: u32,
    pub source: Source,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub other: Option<(Source, u32)>,
}

/// One kernel parameter as the cubin's `.nv.info` parameter table states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamSlot {
    pub ordinal: u32,
    pub offset: u32,
    pub size: u32,
}

/// What limits the number of resident blocks per SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limiter {
    Registers,
    SharedMemory,
    Threads,
    BlockLimit,
    /// Named barriers per SM (sm_90 and later).
    Barriers,
    /// The block cannot run at all (too many threads or registers, or too much shared memory).
    DoesNotFit,
}

/// Offline occupancy of one kernel at one block size (and dynamic shared memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    pub block_size: u32,
    pub dynamic_smem_bytes: u32,
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    /// Resident warps over the arch's maximum, in percent (rounded down).
    pub occupancy_pct: u32,
    pub limiter: Limiter,
}

/// Everything known about one entry point in one cubin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelReport {
    /// Symbol as in the cubin (mangled for C++ names, plain for `extern "C"`).
    pub mangled: String,
    /// Demangled name (equal to `mangled` for `extern "C"` kernels).
    pub demangled: String,
    pub arch: Arch,
    pub registers: Sourced,
    pub barriers: Option<u32>,
    /// Static shared memory in bytes.
    pub smem_bytes: Sourced,
    /// Stack frame in bytes.
    pub stack_bytes: Sourced,
    pub spill_stores: u32,
    pub spill_loads: u32,
    /// `cumulative stack size` from ptxas (includes callees), when printed.
    pub cumulative_stack_bytes: Option<u32>,
    /// Constant bank sizes (`cmem[n]`) by bank index, when printed (sm_90 omits `cmem[0]`).
    pub cmem_bytes: BTreeMap<u32, u32>,
    /// Register limit from `-maxrregcount` / `__launch_bounds__` / `__maxnreg__`, when one applies
    /// (ptxas's override line, else the cubin's `EIATTR_MAXREG_COUNT` when below 255).
    pub max_registers_override: Option<u32>,
    /// `.maxntid` / `__launch_bounds__` limit on threads per block, when the cubin states one.
    pub max_threads_per_block: Option<u32>,
    /// Device functions this kernel calls (demangled), from the disassembly.
    pub callees: Vec<String>,
    /// Spill bytes (stores, loads) in callees, attributed to this kernel.
    pub callee_spills: Vec<CalleeSpill>,
    /// Human-readable flags a reviewer must see: a stack frame with no spills
    /// (a run-time indexed local array), spills, helper spills.
    pub flags: Vec<String>,
    /// Opcode-class histogram of the SASS (`LDG.128`, `LDGSTS`, `HMMA`, `LDL`, ...).
    pub opcode_classes: BTreeMap<String, u32>,
    /// Parameter table from `.nv.info` (ordinal order).
    pub params: Vec<ParamSlot>,
    /// Occupancy at the block sizes the manifest declares (or a default sweep).
    pub occupancy: Vec<Occupancy>,
    /// Normalized SASS: addresses, encodings and NOP padding dropped, branch targets relabeled.
    pub sass: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalleeSpill {
    pub callee: String,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_bytes: u32,
}

impl CalleeSpill {
    /// Bytes stored plus loaded (saturating: a report read from a file may hold anything).
    pub fn bytes(&self) -> u32 {
        self.spill_stores.saturating_add(self.spill_loads)
    }
}

impl KernelReport {
    /// Spill bytes of the callees charged to this kernel (saturating).
    pub fn callee_spill_bytes(&self) -> u32 {
        self.callee_spills
            .iter()
            .fold(0, |sum, c| sum.saturating_add(c.bytes()))
    }

    /// Spill bytes, stored plus loaded, of the kernel and its callees (saturating).
    pub fn spill_bytes(&self) -> u32 {
        self.spill_stores
            .saturating_add(self.spill_loads)
            .saturating_add(self.callee_spill_bytes())
    }
}

/// All kernels of one cubin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CubinReport {
    pub arch: Arch,
    /// `ptxas` warning lines, verbatim.
    pub warnings: Vec<String>,
    pub kernels: Vec<KernelReport>,
}
