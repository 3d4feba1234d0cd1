//! Safe operations over the generated launchers, one module per kernel family (mirroring
//! `cuda/`). Each checks its buffers (lengths against the shape, alignment the kernel's
//! vector accesses need, aliasing the kernel's `__restrict__` forbids) and picks a launch
//! geometry, then calls the typed launcher, whose own checks cover grid, block and shared
//! memory. A violation is an `Err` before anything reaches the GPU. Each returns a
//! [`Launched`] record of what it chose (GEMM: a [`gemm::GemmLaunch`], which gives one).

pub mod copy;
pub mod gemm;
mod launched;
pub mod layernorm;
mod norm;
mod norm_fwd;
pub mod rmsnorm;
pub mod rope;
pub mod rows;
pub mod softmax;
pub mod swiglu;

pub use launched::Launched;
pub use rows::Threads;
