//! The GPU half of the harness (feature `cust`): event timing, the paired protocol, cuBLAS
//! and NVML opened at run time, the copy-ceiling and cuBLAS workloads, and the session that
//! turns a bench run into an evidence folder.

pub mod baseline;
pub mod buffers;
pub mod copy;
pub mod cublas;
pub mod driver;
pub mod gemm;
pub mod nvml;
pub mod record;
pub mod session;
pub mod timer;
