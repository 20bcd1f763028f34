//! What a GPU target offers the plan: its words for ACC_INFO, its block size, whether a gang
//! iteration can take a warp, which atomic updates it combines in a block's memory, and the
//! sizes its buffers give each scalar type.

use crate::{BinaryOp, Scalar};

/// Bytes of each scalar type on a target, looked up by type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarBytes([u32; Scalar::ALL.len()]);

impl ScalarBytes {
    /// The table of `bytes(t)` for every scalar type.
    pub fn from_fn(bytes: impl Fn(Scalar) -> u32) -> ScalarBytes {
        ScalarBytes(Scalar::ALL.map(bytes))
    }
    /// Bytes of `t`.
    pub fn of(&self, t: Scalar) -> u32 {
        self.0[t as usize]
    }
}

/// The shared-memory budget of both GPU targets today
/// ([`Caps::shared_array_bytes`]): half of the 16 KiB every WebGPU adapter has. CUDA blocks may
/// hold 48 KiB; the kernels in `benches/` were tuned with this budget on both.
pub const SHARED_ARRAY_BYTES: u32 = 8192;

/// A GPU target's capabilities, as the plan reads them ([`super::Prepared::plan`]). Each
/// backend makes its own (`acc_device::ptx::caps`, `acc_device::wgsl::caps`); nothing in the
/// plan names a backend.
#[derive(Clone, Debug)]
pub struct Caps {
    /// What a block is called: `block` (CUDA) or `workgroup` (wgpu).
    pub block: &'static str,
    /// What a thread is called: `thread` or `invocation`.
    pub thread: &'static str,
    /// Threads per block.
    pub threads: u32,
    /// Bytes of shared (workgroup) memory the passes may give a block's arrays: a gang
    /// iteration's arrays, `tile` and automatic tile staging, `cache` windows. The rest of
    /// what the target offers is left for the reductions' and privatized atomics' slots. An
    /// iteration whose arrays need more runs on one thread per iteration instead, and a
    /// window or tile that needs more is not staged.
    pub shared_array_bytes: u32,
    /// The threads of a warp, where the target can give each gang iteration of a short vector
    /// loop (`vector_length(n)`, n at most 32) a warp of its own, the block's warps taking
    /// consecutive iterations; `None` where it cannot (such a block then has 32 threads).
    pub warp_lanes: Option<u32>,
    /// The element types whose atomic updates a block combines in its own memory first
    /// ([`crate::privatize::privatized`]).
    pub privatized_types: &'static [Scalar],
    /// Whether the target updates an element of this type with this operator by a
    /// compare-exchange loop rather than one atomic instruction.
    pub update_by_cas: fn(BinaryOp, Scalar) -> bool,
    /// Bytes of one per-block partial of a reduction of each type.
    pub partial_bytes: ScalarBytes,
    /// Bytes of an element of each type in device buffers (spilled private arrays).
    pub elem_bytes: ScalarBytes,
    /// Bytes of a `usize` word in the locals buffer and in partials.
    pub index_bytes: usize,
    /// Whether the fast version of a loop ([`super::versioned_arrays`]) may cover arrays the
    /// kernel updates atomically (the target's atomics take the unchecked address).
    pub versions_atomic_arrays: bool,
    /// Whether the loops a block's threads share get fast versions too, not only the grid
    /// loop.
    pub versions_shared_loops: bool,
    /// Whether a loop a block's threads share with a short literal trip count (at most
    /// [`super::WRITTEN_OUT_ROUNDS`] iterations per thread) is written out, each thread's
    /// iterations one stretch of code without a loop around them.
    pub writes_out_short_loops: bool,
}

#[cfg(any(test, feature = "samples"))]
impl Caps {
    /// A CUDA-like target for tests: blocks of 256 threads, warps, 32-bit histograms
    /// privatized, host sizes.
    pub fn cuda_like() -> Caps {
        Caps {
            block: "block",
            thread: "thread",
            threads: 256,
            shared_array_bytes: SHARED_ARRAY_BYTES,
            warp_lanes: Some(32),
            privatized_types: &[Scalar::I32, Scalar::U32, Scalar::F32],
            update_by_cas: |_, t| t.size() < 4,
            partial_bytes: ScalarBytes::from_fn(|t| t.size().max(4)),
            elem_bytes: ScalarBytes::from_fn(Scalar::size),
            index_bytes: 8,
            versions_atomic_arrays: true,
            versions_shared_loops: true,
            writes_out_short_loops: true,
        }
    }
}
