//! # acc — OpenACC for Rust
//!
//! Annotate ordinary Rust loops with OpenACC directives, and the same source runs on an
//! NVIDIA GPU (PTX through the CUDA driver), on any GPU wgpu reaches (Vulkan, Metal, DX12), on
//! all host cores, or sequentially on the host, chosen at run time. The [`guide`] (also
//! `docs/guide/` in the repository) teaches it, from a first region to porting a C or Fortran
//! OpenACC program.
//!
//! ```
//! #[acc::parallel_loop(copyin(x), copy(y))]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     for i in 0..y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! let x = vec![1.0f32; 1000];
//! let mut y = vec![2.0f32; 1000];
//! saxpy(3.0, &x, &mut y);
//! assert!(y.iter().all(|&v| v == 5.0));
//! ```
//!
//! ## Directives
//! Function attributes: [`parallel`], [`kernels`], [`serial`], [`parallel_loop`],
//! [`kernels_loop`], [`serial_loop`], [`data`], [`routine`], [`declare`], [`offload`]. Inside a
//! function that carries one of them, the same names (and `r#loop`, [`atomic`],
//! [`host_data`]) work on statements. Executable directives are macros: [`update!`],
//! [`enter_data!`], [`exit_data!`], [`wait!`], [`init!`], [`shutdown!`], [`set!`], [`cache!`].
//! [`guide::directives`] describes every directive and clause, with its C counterpart.
//!
//! ## Devices
//! The device is chosen at run time: `ACC_DEVICE_TYPE` (`host`, `multicore`, `nvidia`, `wgpu`,
//! any case) or [`set_device_type`]; by default the best one present: an NVIDIA GPU, then a
//! GPU wgpu reaches, then all host cores. Each device type but `host` is a feature, all on by
//! default: `multicore`, `wgpu` and `cuda` (the nvidia device; the CUDA driver is loaded at run
//! time, so it builds without CUDA). Asking for a device type this build lacks, or one this
//! machine lacks, is an [`Error`] naming it, never a silent fallback.

#![warn(missing_docs)]

#[doc(hidden)]
pub mod __rt;
mod device_vec;
pub mod guide;
mod interop;
mod memory;
#[cfg(feature = "mpi")]
pub mod mpi;
mod routines;

pub use acc_core::data::{DataVar, DeviceCopy};
pub use acc_core::queue::{ASYNC_NOVAL, ASYNC_SYNC};
/// Reduction operators and the trait that says which types they fit, for bounds on generic
/// functions with reductions (`T: acc::reduce::Reduce<acc::reduce::Add>`).
pub use acc_core::reduce;
pub use acc_core::{DeviceType, Error, Location, Property, Result};
// Each directive's page: its clauses, an example (a doc test), the C counterpart, the spec
// section (`src/directive_docs/`).
#[doc = include_str!("directive_docs/atomic.md")]
pub use acc_macros::atomic;
#[doc = include_str!("directive_docs/cache.md")]
pub use acc_macros::cache;
#[doc = include_str!("directive_docs/data.md")]
pub use acc_macros::data;
#[doc = include_str!("directive_docs/declare.md")]
pub use acc_macros::declare;
#[doc = include_str!("directive_docs/enter_data.md")]
pub use acc_macros::enter_data;
#[doc = include_str!("directive_docs/exit_data.md")]
pub use acc_macros::exit_data;
#[doc = include_str!("directive_docs/host_data.md")]
pub use acc_macros::host_data;
#[doc = include_str!("directive_docs/init.md")]
pub use acc_macros::init;
#[doc = include_str!("directive_docs/kernels.md")]
pub use acc_macros::kernels;
#[doc = include_str!("directive_docs/kernels_loop.md")]
pub use acc_macros::kernels_loop;
#[doc = include_str!("directive_docs/offload.md")]
pub use acc_macros::offload;
#[doc = include_str!("directive_docs/parallel.md")]
pub use acc_macros::parallel;
#[doc = include_str!("directive_docs/parallel_loop.md")]
pub use acc_macros::parallel_loop;
#[doc = include_str!("directive_docs/loop.md")]
pub use acc_macros::r#loop;
#[doc = include_str!("directive_docs/routine.md")]
pub use acc_macros::routine;
#[doc = include_str!("directive_docs/serial.md")]
pub use acc_macros::serial;
#[doc = include_str!("directive_docs/serial_loop.md")]
pub use acc_macros::serial_loop;
#[doc = include_str!("directive_docs/set.md")]
pub use acc_macros::set;
#[doc = include_str!("directive_docs/shutdown.md")]
pub use acc_macros::shutdown;
#[doc = include_str!("directive_docs/update.md")]
pub use acc_macros::update;
#[doc = include_str!("directive_docs/wait.md")]
pub use acc_macros::wait;
#[doc = include_str!("directive_docs/device_copy.md")]
pub use acc_macros::DeviceCopy;
pub use device_vec::DeviceVec;
pub use memory::{
    attach, detach, deviceptr, deviceptr_mut, free, hostptr, malloc, map_data, memcpy_d2d,
    memcpy_device, memcpy_from_device, memcpy_from_device_raw, memcpy_peer, memcpy_to_device,
    memcpy_to_device_raw, unmap_data, DevicePtr,
};
pub use routines::*;

/// The `half` crate (feature `half`), whose `f16` and `bf16` are element types on every device.
#[cfg(feature = "half")]
pub use half;
#[cfg(feature = "cuda")]
pub use interop::cudarc;
pub use interop::{get_cuda_stream, set_cuda_stream, DeviceSlice};
#[cfg(feature = "wgpu")]
pub use interop::{wgpu, wgpu_adopt, wgpu_device};
/// The `ndarray` crate (feature `ndarray`), whose arrays in standard layout are data-clause
/// variables and are indexed `a[[i, j]]` in regions on every device.
#[cfg(feature = "ndarray")]
pub use ndarray;
/// The `num-complex` crate (feature `num-complex`), whose `Complex<f32>` and `Complex<f64>` are
/// element types, scalars and reduction variables on every device.
#[cfg(feature = "num-complex")]
pub use num_complex;

/// The OpenACC version whose semantics this crate implements (`_OPENACC`, 3.3 section 2.2).
pub const OPENACC_VERSION: u32 = 202211;
