//! The wgpu device: kernels lowered by [`crate::wgsl`] run as compute shaders on any adapter
//! wgpu reaches (Vulkan, Metal, DX12), Mesa's lavapipe on a plain CPU included.
//!
//! Data that a data region or `enter_data!` made present stays in device buffers across
//! kernels (`memory`); arrays a kernel uses that are not present are copied in for the launch
//! and, when it writes them, back out after it (3.3 section 2.6.2, implicit `copy`).

mod memory;
mod pool;
mod runtime;

pub use runtime::{adapters, adopt, WgpuBackend, WgpuDevice};
