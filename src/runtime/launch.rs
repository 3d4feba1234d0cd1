//! Launch geometry and the checks a launch passes before anything reaches the GPU: grid and
//! block against the device and the kernel, shared memory against the opt-in maximum, and
//! (for the ops layer) buffer lengths, alignment and aliasing. Pure: the limits are plain
//! numbers read from the driver once.

use std::fmt;

/// Grid, block and dynamic shared memory of one launch, and whether it is a programmatic
/// dependent of the stream's previous kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem_bytes: u32,
    /// Launch with programmatic stream serialization (`cuLaunchKernelEx`): the kernel may be
    /// scheduled while the previous kernel drains, hiding the launch gap. Only for kernels
    /// that execute `griddepcontrol.wait` before their first memory access.
    pub programmatic_dependent: bool,
}

impl LaunchConfig {
    /// A one-dimensional launch without dynamic shared memory.
    pub const fn linear(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_smem_bytes: 0,
            programmatic_dependent: false,
        }
    }

    pub const fn with_dynamic_smem(mut self, bytes: u32) -> LaunchConfig {
        self.dynamic_smem_bytes = bytes;
        self
    }

    pub const fn with_programmatic_dependent(mut self, on: bool) -> LaunchConfig {
        self.programmatic_dependent = on;
        self
    }

    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&d| u64::from(d)).product()
    }

    pub fn is_linear(&self) -> bool {
        self.grid[1] == 1 && self.grid[2] == 1 && self.block[1] == 1 && self.block[2] == 1
    }
}

/// Device limits that bound every launch (`cuDeviceGetAttribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    pub max_threads_per_block: u32,
    pub max_block: [u32; 3],
    pub max_grid: [u32; 3],
    /// Shared memory per block without opting in (48 KiB).
    pub max_smem_per_block: u32,
    /// Shared memory per block a kernel may opt into (`MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`).
    pub max_smem_per_block_optin: u32,
}

/// One kernel's limits on this device (`cuFuncGetAttribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLimits {
    /// The smaller of `__launch_bounds__` and what the kernel's registers allow.
    pub max_threads_per_block: u32,
    pub static_smem_bytes: u32,
    /// The function's current dynamic shared memory limit (raised on demand).
    pub max_dynamic_smem_bytes: u32,
}

/// What a launch must do about dynamic shared memory before it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmemPlan {
    Fits,
    /// Raise the function's `MAX_DYNAMIC_SHARED_SIZE_BYTES` to this many bytes first.
    Raise(u32),
}

/// A launch that was refused before reaching the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LaunchError {
    EmptyDimension {
        what: &'static str,
        dims: [u32; 3],
    },
    BlockTooLarge {
        axis: char,
        value: u32,
        max: u32,
    },
    GridTooLarge {
        axis: char,
        value: u32,
        max: u32,
    },
    TooManyThreads {
        threads: u64,
        kernel_max: u32,
        device_max: u32,
    },
    SharedMemory {
        static_bytes: u32,
        dynamic_bytes: u32,
        limit: u32,
    },
    /// A buffer shorter than the launch needs.
    Length {
        param: &'static str,
        needed_bytes: u64,
        actual_bytes: u64,
    },
    /// Two buffers whose lengths must agree do not.
    LengthMismatch {
        a: &'static str,
        a_bytes: u64,
        b: &'static str,
        b_bytes: u64,
    },
    /// A byte length the kernel's access width does not divide.
    NotMultiple {
        param: &'static str,
        bytes: u64,
        multiple: u32,
    },
    Misaligned {
        param: &'static str,
        address: u64,
        align: u32,
    },
    /// Buffers the kernel declares `__restrict__` overlap.
    Overlap {
        a: &'static str,
        b: &'static str,
    },
    /// A geometry the kernel's code does not support (it is written for one block shape).
    Geometry {
        kernel: &'static str,
        requirement: &'static str,
        config: LaunchConfig,
    },
    /// A raw launch passed a different number of arguments than the kernel takes.
    ArgumentCount {
        kernel: &'static str,
        expected: usize,
        actual: usize,
    },
    /// A tensor the copy engine cannot address as described (TMA's rules: a 16-byte aligned
    /// base, rows a multiple of 16 bytes apart, boxes of 1 to 256 elements a side).
    TensorMap {
        param: &'static str,
        requirement: &'static str,
        value: u64,
    },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::EmptyDimension { what, dims } => write!(f, "{what} {dims:?} has a zero dimension"),
            LaunchError::BlockTooLarge { axis, value, max } => {
                write!(f, "block dimension {axis} = {value} exceeds the device maximum {max}")
            }
            LaunchError::GridTooLarge { axis, value, max } => {
                write!(f, "grid dimension {axis} = {value} exceeds the device maximum {max}")
            }
            LaunchError::TooManyThreads { threads, kernel_max, device_max } => write!(
                f,
                "{threads} threads per block exceed the limit of {} (kernel: {kernel_max}, device: {device_max})",
                kernel_max.min(device_max)
            ),
            LaunchError::SharedMemory { static_bytes, dynamic_bytes, limit } => write!(
                f,
                "shared memory per block {} bytes (static {static_bytes} + dynamic {dynamic_bytes}) exceeds the \
                 device's opt-in maximum of {limit} bytes",
                u64::from(*static_bytes) + u64::from(*dynamic_bytes)
            ),
            LaunchError::Length { param, needed_bytes, actual_bytes } => {
                write!(f, "`{param}` holds {actual_bytes} bytes; the launch needs {needed_bytes}")
            }
            LaunchError::LengthMismatch { a, a_bytes, b, b_bytes } => {
                write!(f, "`{a}` ({a_bytes} bytes) and `{b}` ({b_bytes} bytes) must be the same length")
            }
            LaunchError::NotMultiple { param, bytes, multiple } => {
                write!(f, "`{param}` is {bytes} bytes, not a multiple of the kernel's {multiple}-byte access")
            }
            LaunchError::Misaligned { param, address, align } => {
                write!(f, "`{param}` at {address:#x} is not {align}-byte aligned, as the kernel's vector loads need")
            }
            LaunchError::Overlap { a, b } => write!(f, "`{a}` and `{b}` overlap; the kernel requires disjoint buffers"),
            LaunchError::TensorMap { param, requirement, value } => {
                write!(f, "`{param}` cannot be a TMA tensor ({value}): {requirement}")
            }
            LaunchError::Geometry { kernel, requirement, config } => write!(
                f,
                "{kernel} requires {requirement}; got grid {:?} block {:?}",
                config.grid, config.block
            ),
            LaunchError::ArgumentCount { kernel, expected, actual } => {
                write!(f, "{kernel} takes {expected} arguments; {actual} were passed")
            }
        }
    }
}

impl std::error::Error for LaunchError {}

const AXES: [char; 3] = ['x', 'y', 'z'];

/// Checks `config` against the device and the kernel; says whether the kernel's dynamic
/// shared memory limit must be raised first.
pub fn check(
    config: &LaunchConfig,
    device: &DeviceLimits,
    kernel: &KernelLimits,
) -> Result<SmemPlan, LaunchError> {
    for (what, dims) in [("grid", config.grid), ("block", config.block)] {
        if dims.contains(&0) {
            return Err(LaunchError::EmptyDimension { what, dims });
        }
    }
    for (i, axis) in AXES.into_iter().enumerate() {
        let (block, max) = (config.block[i], device.max_block[i]);
        if block > max {
            return Err(LaunchError::BlockTooLarge {
                axis,
                value: block,
                max,
            });
        }
        let (grid, max) = (config.grid[i], device.max_grid[i]);
        if grid > max {
            return Err(LaunchError::GridTooLarge {
                axis,
                value: grid,
                max,
            });
        }
    }
    let threads = config.threads_per_block();
    if threads
        > u64::from(
            kernel
                .max_threads_per_block
                .min(device.max_threads_per_block),
        )
    {
        return Err(LaunchError::TooManyThreads {
            threads,
            kernel_max: kernel.max_threads_per_block,
            device_max: device.max_threads_per_block,
        });
    }
    let total = u64::from(kernel.static_smem_bytes) + u64::from(config.dynamic_smem_bytes);
    if total > u64::from(device.max_smem_per_block_optin) {
        return Err(LaunchError::SharedMemory {
            static_bytes: kernel.static_smem_bytes,
            dynamic_bytes: config.dynamic_smem_bytes,
            limit: device.max_smem_per_block_optin,
        });
    }
    if config.dynamic_smem_bytes > kernel.max_dynamic_smem_bytes {
        Ok(SmemPlan::Raise(config.dynamic_smem_bytes))
    } else {
        Ok(SmemPlan::Fits)
    }
}

/// A device buffer as the ops layer checks it: its name in the kernel signature, address and
/// length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferArg {
    pub param: &'static str,
    pub address: u64,
    pub bytes: u64,
}

impl BufferArg {
    pub fn aligned(&self, align: u32) -> Result<(), LaunchError> {
        if self.address % u64::from(align) == 0 {
            Ok(())
        } else {
            Err(LaunchError::Misaligned {
                param: self.param,
                address: self.address,
                align,
            })
        }
    }

    pub fn at_least(&self, needed_bytes: u64) -> Result<(), LaunchError> {
        if self.bytes >= needed_bytes {
            Ok(())
        } else {
            Err(LaunchError::Length {
                param: self.param,
                needed_bytes,
                actual_bytes: self.bytes,
            })
        }
    }

    pub fn multiple_of(&self, multiple: u32) -> Result<(), LaunchError> {
        if self.bytes % u64::from(multiple) == 0 {
            Ok(())
        } else {
            Err(LaunchError::NotMultiple {
                param: self.param,
                bytes: self.bytes,
                multiple,
            })
        }
    }

    pub fn same_length(&self, other: &BufferArg) -> Result<(), LaunchError> {
        if self.bytes == other.bytes {
            Ok(())
        } else {
            Err(LaunchError::LengthMismatch {
                a: self.param,
                a_bytes: self.bytes,
                b: other.param,
                b_bytes: other.bytes,
            })
        }
    }

    pub fn disjoint(&self, other: &BufferArg) -> Result<(), LaunchError> {
        let overlap = self.bytes > 0
            && other.bytes > 0
            && self.address < other.address.saturating_add(other.bytes)
            && other.address < self.address.saturating_add(self.bytes);
        if overlap {
            Err(LaunchError::Overlap {
                a: self.param,
                b: other.param,
            })
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An H200's limits (sm_90: 1024 threads, 227 KiB opt-in shared memory).
    const H200: DeviceLimits = DeviceLimits {
        max_threads_per_block: 1024,
        max_block: [1024, 1024, 64],
        max_grid: [i32::MAX as u32, 65535, 65535],
        max_smem_per_block: 48 * 1024,
        max_smem_per_block_optin: 227 * 1024,
    };
    const COPY: KernelLimits = KernelLimits {
        max_threads_per_block: 256,
        static_smem_bytes: 8192,
        max_dynamic_smem_bytes: 40 * 1024,
    };

    #[test]
    fn valid_launches_and_smem_raise() {
        assert_eq!(
            check(&LaunchConfig::linear(1056, 256), &H200, &COPY),
            Ok(SmemPlan::Fits)
        );
        let big = LaunchConfig::linear(1, 128).with_dynamic_smem(100 * 1024);
        assert_eq!(check(&big, &H200, &COPY), Ok(SmemPlan::Raise(100 * 1024)));
        let max = LaunchConfig::linear(1, 128).with_dynamic_smem(227 * 1024 - 8192);
        assert_eq!(
            check(&max, &H200, &COPY),
            Ok(SmemPlan::Raise(227 * 1024 - 8192))
        );
    }

    #[test]
    fn each_rejection() {
        let c = |grid: [u32; 3], block: [u32; 3], smem: u32| {
            check(
                &LaunchConfig {
                    grid,
                    block,
                    dynamic_smem_bytes: smem,
                    programmatic_dependent: false,
                },
                &H200,
                &COPY,
            )
            .unwrap_err()
        };
        assert_eq!(
            c([0, 1, 1], [256, 1, 1], 0),
            LaunchError::EmptyDimension {
                what: "grid",
                dims: [0, 1, 1]
            }
        );
        assert_eq!(
            c([1, 1, 1], [256, 0, 1], 0),
            LaunchError::EmptyDimension {
                what: "block",
                dims: [256, 0, 1]
            }
        );
        assert_eq!(
            c([1, 1, 1], [1, 1, 65], 0),
            LaunchError::BlockTooLarge {
                axis: 'z',
                value: 65,
                max: 64
            }
        );
        assert_eq!(
            c([1, 65536, 1], [1, 1, 1], 0),
            LaunchError::GridTooLarge {
                axis: 'y',
                value: 65536,
                max: 65535
            }
        );
        let e = c([1, 1, 1], [512, 1, 1], 0);
        assert_eq!(
            e,
            LaunchError::TooManyThreads {
                threads: 512,
                kernel_max: 256,
                device_max: 1024
            }
        );
        assert!(e.to_string().contains("exceed the limit of 256"), "{e}");
        let e = c([1, 1, 1], [128, 1, 1], 227 * 1024 - 8191);
        assert_eq!(
            e,
            LaunchError::SharedMemory {
                static_bytes: 8192,
                dynamic_bytes: 227 * 1024 - 8191,
                limit: 232448
            }
        );
        assert!(
            e.to_string().contains("opt-in maximum of 232448 bytes"),
            "{e}"
        );
    }

    #[test]
    fn buffer_checks() {
        let src = BufferArg {
            param: "src",
            address: 0x1000,
            bytes: 64,
        };
        let dst = BufferArg {
            param: "dst",
            address: 0x1040,
            bytes: 64,
        };
        assert!(
            src.aligned(16).is_ok() && src.disjoint(&dst).is_ok() && src.same_length(&dst).is_ok()
        );
        let off = BufferArg {
            param: "dst",
            address: 0x1041,
            bytes: 63,
        };
        assert_eq!(
            off.aligned(16),
            Err(LaunchError::Misaligned {
                param: "dst",
                address: 0x1041,
                align: 16
            })
        );
        assert_eq!(
            off.multiple_of(16),
            Err(LaunchError::NotMultiple {
                param: "dst",
                bytes: 63,
                multiple: 16
            })
        );
        assert_eq!(
            src.disjoint(&BufferArg {
                address: 0x103f,
                ..dst
            }),
            Err(LaunchError::Overlap { a: "src", b: "dst" })
        );
        assert!(
            src.disjoint(&BufferArg { bytes: 0, ..src }).is_ok(),
            "empty buffers overlap nothing"
        );
        assert_eq!(
            src.at_least(65),
            Err(LaunchError::Length {
                param: "src",
                needed_bytes: 65,
                actual_bytes: 64
            })
        );
        assert!(src
            .same_length(&off)
            .unwrap_err()
            .to_string()
            .contains("must be the same length"));
    }
}
