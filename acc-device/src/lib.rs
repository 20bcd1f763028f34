//! Backends of `acc` behind the [`acc_core::Device`] trait.
//!
//! Each backend is a folder with the same shape: `runtime` for devices, memory, queues and
//! launches (and, for GPU backends, `lower` from the kernel IR). This build has:
//! - [`host`]: the calling thread, running each region's host twin sequentially;
//! - [`multicore`] (feature `multicore`): all host cores, splitting each region's outermost
//!   parallel loops across a thread pool;
//! - `wgpu` (feature `wgpu`): any GPU wgpu reaches, running regions as WGSL compute shaders
//!   lowered by `wgsl` (IR to WGSL validated by naga);
//! - [`ptx`]: IR to PTX, for `cuda` (feature `cuda`): NVIDIA GPUs through the CUDA driver.

#![warn(missing_docs)]

#[cfg(feature = "cuda")]
pub mod cuda;
pub mod host;
#[cfg(feature = "multicore")]
pub mod multicore;
pub mod ptx;
#[cfg(feature = "wgpu")]
pub mod wgpu;
#[cfg(feature = "wgpu")]
pub mod wgsl;

use acc_core::device::Backend;

/// The crates of the GPU APIs the devices use, at the versions they use, for programs that
/// work on the same devices and buffers (`host_data use_device`).
pub mod deps {
    /// cudarc (the nvidia device's CUDA driver bindings).
    #[cfg(feature = "cuda")]
    pub use ::cudarc;
    /// wgpu (the `wgpu` device's API).
    #[cfg(feature = "wgpu")]
    pub use ::wgpu;
}

/// The backends of this build, one per device type.
pub fn backends() -> Vec<Box<dyn Backend>> {
    #[allow(unused_mut)]
    let mut v: Vec<Box<dyn Backend>> = vec![Box::new(host::HostBackend)];
    #[cfg(feature = "multicore")]
    v.push(Box::new(multicore::MulticoreBackend::default()));
    #[cfg(feature = "wgpu")]
    v.push(Box::new(wgpu::WgpuBackend::default()));
    #[cfg(feature = "cuda")]
    v.push(Box::new(cuda::CudaBackend::default()));
    v
}
