//! The WGSL backend's lowering: kernel IR to WGSL, parsed and validated by naga into a
//! `naga::Module` that wgpu runs (docs/design-notes/ir-and-backends.md).
//!
//! The IR is written as WGSL text and given to naga's WGSL front end and validator rather than
//! built as naga IR node by node: the text is what `ACC_DUMP=wgsl` shows anyway, naga still
//! validates every module against the adapter's capabilities, and the lowering stays readable
//! (docs/design-notes.md). Each top-level parallel loop of a kernel becomes one entry point,
//! a grid-stride loop over its (collapsed) iteration space.

mod lower;

pub use lower::{
    caps, lower, lower_variant, partial_size, widened_in_buffers, Binding, Lowered, ParamSlot,
    ReductionSlot, Target, PRIVATIZED_TYPES, WORKGROUP_SIZE,
};
