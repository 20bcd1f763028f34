//! What every GPU backend shares besides the kernel plan ([`crate::ir::segments`],
//! [`crate::ir::gang_phases`], [`crate::ir::mapping`]): the launch routine itself, generic over
//! a small driver trait a backend implements with its API, and what it works from.
//!
//! - [`layout`]: what a launch needs to know of a lowered kernel (its entry points' shapes,
//!   locals buffer, reduction slots, region value), computed from the plan.
//! - [`status`]: the status words a kernel reports an out-of-range access or a cut loop in,
//!   one layout for every backend, and their decoding into [`Error`](crate::Error)s.
//! - [`kernel_cache`]: loaded kernels by their IR, each with its variants (checked, proven, narrowed)
//!   and the bounds proofs of its last launches.
//! - [`memo`]: what a launch worked out (array places, grid, dispatches) that the next launch
//!   of the kernel with the same arrays and sizes reuses.
//! - [`grid`]: how many blocks each entry point gets.
//! - [`driver`]: [`GpuDriver`] and [`launch`]: arguments placed (present data in place,
//!   the rest copied), entry points dispatched as the kernel's program says, an early return
//!   where nothing comes back, partials, locals and status read back.
//!
//! A new GPU backend is then an emitter (target text from the plan, a [`LaunchLayout`]) and a
//! driver (compile, place arguments, dispatch, finish).

pub mod driver;
pub mod grid;
pub mod kernel_cache;
pub mod layout;
pub mod memo;
pub mod status;

pub use driver::{launch, ArrayPlace, GpuDriver, GpuLaunch, Order, Readback};
pub use grid::{Grid, GridLimits};
pub use kernel_cache::{KernelCache, Variant};
pub use layout::{EntryShape, LaunchLayout};
