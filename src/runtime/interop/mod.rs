//! The runtimes whose buffers and streams the ops take, each behind its feature.

#[cfg(feature = "cudarc")]
mod cudarc;
#[cfg(feature = "cust")]
mod cust;
