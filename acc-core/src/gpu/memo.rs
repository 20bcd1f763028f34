//! What a launch worked out that the next launch of the same kernel reuses: where its arrays
//! are on the device (while the present table is unchanged and the arguments are the same
//! arrays), and its grid and dispatches (while the variant and every value the host program
//! reads are the same). A time loop's launch then neither looks its arrays up nor runs the
//! host program again; one with exactly the same arguments, which returned without waiting,
//! is made again as the backend kept it ([`super::GpuDriver::replay`]), without assembling it.

use super::grid::Grid;
use super::kernel_cache::Variant;
use crate::ir::args::{KernelArg, ScalarValue};
use crate::present::Placement;

/// One kernel's memo ([`super::kernel_cache::Found::memo`]).
#[derive(Default)]
pub struct LaunchMemo {
    pub(super) places: Option<Places>,
    pub(super) dispatches: Option<Dispatches>,
    pub(super) replay: Option<Replay>,
}

/// A launch that returned without waiting, as the backend kept it to make it again
/// ([`super::GpuLaunch::replay`]), and the arguments it was made with.
pub(super) struct Replay {
    variant: Variant,
    /// The present table's generation then.
    generation: u64,
    /// Each argument: an array's address and length in bytes, a scalar's bits.
    key: Vec<(usize, u64)>,
    pub(super) kept: Box<dyn std::any::Any + Send>,
}

impl Replay {
    pub(super) fn new(
        variant: Variant,
        generation: u64,
        args: &[KernelArg<'_>],
        kept: Box<dyn std::any::Any + Send>,
    ) -> Replay {
        Replay {
            variant,
            generation,
            key: args.iter().map(replay_word).collect(),
            kept,
        }
    }

    /// Whether a launch of `variant` with `args` at `generation` is this one again: the same
    /// arrays where they were, every scalar the same.
    pub(super) fn fits(&self, variant: Variant, generation: u64, args: &[KernelArg<'_>]) -> bool {
        self.variant == variant
            && self.generation == generation
            && self.key.len() == args.len()
            && self.key.iter().zip(args).all(|(k, a)| *k == replay_word(a))
    }
}

fn replay_word(a: &KernelArg<'_>) -> (usize, u64) {
    match a {
        KernelArg::Read(d) => (d.as_ptr() as usize, d.len() as u64),
        KernelArg::Write(d) => (d.as_ptr() as usize, d.len() as u64),
        KernelArg::Scalar(_) => (0, super::kernel_cache::word(a, true)),
    }
}

/// Where an array argument went: present on the device, or not passed at all (the kernel
/// never touches it: only its length, in elements).
#[derive(Clone, Copy)]
pub(super) enum Kept {
    Present(Placement),
    Unused(usize),
}

/// Where a launch found its arrays.
pub(super) struct Places {
    /// Each argument's address and length in bytes (0, 0 for a scalar).
    key: Vec<(usize, usize)>,
    /// The present table's generation then.
    generation: u64,
    /// Each parameter's place (`None` for a scalar).
    pub(super) at: Vec<Option<Kept>>,
    /// The largest array's length in elements.
    pub(super) largest: usize,
}

impl Places {
    pub(super) fn new(
        args: &[KernelArg<'_>],
        generation: u64,
        at: Vec<Option<Kept>>,
        largest: usize,
    ) -> Places {
        Places {
            key: args.iter().map(array_key).collect(),
            generation,
            at,
            largest,
        }
    }

    /// Whether `args` are the same arrays at `generation`.
    pub(super) fn fits(&self, args: &[KernelArg<'_>], generation: u64) -> bool {
        self.generation == generation
            && self.key.len() == args.len()
            && self.key.iter().zip(args).all(|(k, a)| *k == array_key(a))
    }
}

fn array_key(a: &KernelArg<'_>) -> (usize, usize) {
    match a {
        KernelArg::Read(d) => (d.as_ptr() as usize, d.len()),
        KernelArg::Write(d) => (d.as_ptr() as usize, d.len()),
        KernelArg::Scalar(_) => (0, 0),
    }
}

/// A launch's grid and dispatches.
pub(super) struct Dispatches {
    variant: Variant,
    /// Each argument's word: an array's length, an integer or `bool` scalar's value (what the
    /// host program and the grid read), 0 for a float.
    key: Vec<u64>,
    /// The grid before the dispatches, and after them.
    pub(super) ready: Grid,
    pub(super) done: Grid,
    /// Entry point, blocks and the host loops' values of each dispatch, in order.
    pub(super) steps: Vec<(usize, u32, Vec<i128>)>,
}

impl Dispatches {
    pub(super) fn new(
        variant: Variant,
        args: &[KernelArg<'_>],
        ready: Grid,
        done: Grid,
        steps: Vec<(usize, u32, Vec<i128>)>,
    ) -> Dispatches {
        Dispatches {
            variant,
            key: args.iter().map(program_word).collect(),
            ready,
            done,
            steps,
        }
    }

    /// Whether a launch of `variant` with `args` makes the same dispatches.
    pub(super) fn fits(&self, variant: Variant, args: &[KernelArg<'_>]) -> bool {
        self.variant == variant
            && self.key.len() == args.len()
            && self
                .key
                .iter()
                .zip(args)
                .all(|(k, a)| *k == program_word(a))
    }
}

fn program_word(a: &KernelArg<'_>) -> u64 {
    // Floats steer neither the host program nor the grid.
    let float = matches!(
        a,
        KernelArg::Scalar(ScalarValue::F32(_) | ScalarValue::F64(_))
    );
    super::kernel_cache::word(a, !float)
}
