//! The PTX backend's lowering: kernel IR to PTX text for NVIDIA GPUs (compute capability 7.0
//! and newer), the first half of the `nvidia` device (docs/design-notes/ir-and-backends.md). Generating
//! PTX needs no GPU; `ptxas` checks what is generated (the tests run it when it is installed,
//! and CI installs it).
//!
//! The kernel's shape follows the WGSL lowering: each top-level parallel loop is one entry
//! point, a grid-stride loop over its (collapsed) iteration space in blocks of
//! [`BLOCK_SIZE`] threads; reductions combine in shared memory into one partial per block;
//! every array access is bounds-checked and the first out-of-range access of a launch is
//! recorded in a status word. Unlike WGSL, PTX reads and writes every element type at its own
//! width, so arrays keep the host's layout.
//!
//! Not lowered yet (each an `acc::Error::Unsupported` naming it): code between parallel loops,
//! atomics, transcendental math functions, and reductions into region locals. The CUDA runtime
//! (`cuda`) that loads and launches these kernels is not there yet either.

mod lower;

pub use lower::{
    caps, lower, lower_with, partial_size, Lowered, ReductionSlot, Target, BLOCK_SIZE,
    PRIVATE_ARRAY_BIT, PRIVATIZED_TYPES,
};
