//! The wgpu device: kernels lowered by [`crate::wgsl`] run as compute shaders on any adapter
//! wgpu reaches (Vulkan, Metal, DX12), Mesa's lavapipe on a plain CPU included.
//!
//! This build runs a kernel with its arrays copied in before the launch and the written ones
//! copied out after it (what a region's data clauses do when no data region holds the data);
//! the present table that keeps data on the device across regions comes with the data
//! environment.

mod runtime;

pub use runtime::{adapters, WgpuBackend, WgpuDevice};
