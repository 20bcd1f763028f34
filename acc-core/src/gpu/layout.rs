//! What a launch needs to know of a lowered kernel, the same for every GPU backend: how each
//! entry point runs, the locals buffer, where each reduction's result is, the region's value.
//! Emitters compute it from the [`Plan`] they lowered ([`LaunchLayout::new`]).

use crate::ir::args::{sequential_reduction_slots, ReductionSlot};
use crate::ir::plan::{EntryPlan, Plan};
use crate::ir::segments::Program;
use crate::ir::spill::show_bytes;
use crate::ir::{LocalId, Scalar};

/// How one entry point of a lowered kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryShape {
    /// On one thread (code between parallel loops, a fold of per-block partials into a region
    /// local) rather than over a grid.
    pub single: bool,
    /// Each iteration of its gang loop takes a whole block, whose threads share the inner
    /// vector loops ([`crate::ir::GangPhases`]), rather than one thread.
    pub block_per_iteration: bool,
    /// Iterations of its gang loop one block runs at once: 1, or a warp's worth per block where
    /// the target runs a gang iteration per warp ([`crate::ir::plan::EntryPlan::gangs_per_block`]).
    pub gangs_per_block: u32,
    /// Each block ends by merging its own copy of an array into memory (atomics privatized
    /// per block, [`crate::ir::privatize`]), or its threads update such an array by
    /// compare-exchange loops ([`crate::ir::privatize::contended_by_cas`]): the grid keeps to
    /// the blocks the device holds at once, else the merges cost as much as the updates they
    /// save, or more blocks only add retries.
    pub merges_per_block: bool,
}

impl EntryShape {
    /// The shape of an entry point the plan decided.
    pub fn of(e: &EntryPlan<'_>) -> EntryShape {
        EntryShape {
            single: e.single,
            block_per_iteration: e.phases.is_some(),
            gangs_per_block: e.gangs_per_block,
            merges_per_block: e.merges_per_block,
        }
    }
}

/// What a launch needs to know of a lowered kernel.
#[derive(Clone, Debug)]
pub struct LaunchLayout {
    /// The entry points, in the order the kernel's [`Program`] numbers them.
    pub entries: Vec<EntryShape>,
    /// Bytes of the locals buffer, which keeps the region's locals between entry points when
    /// the region has code besides its parallel loops (0 when it has none).
    pub locals_size: u32,
    /// Where each kernel reduction's result is: per-block partials of an entry point, or a
    /// region local that sequential code computed.
    pub reductions: Vec<ReductionSlot>,
    /// Bytes of one partial of each of `reductions`.
    pub partial_sizes: Vec<u32>,
    /// The region's value: its type and offset in the locals buffer.
    pub result: Option<(Scalar, u32)>,
    /// Bytes of a `usize` word in the locals buffer and partials.
    pub index_bytes: usize,
    /// Whether the kernel can report anything in its status words (an out-of-range access, a
    /// loop cut short): when not, a launch that brings nothing else back need not wait.
    pub status_used: bool,
    /// The order in which the entry points are launched (host loops repeat some).
    pub program: Program,
    /// Bytes of one thread's private arrays spilled to device memory ([`crate::ir::spill::Spilled`]): the
    /// launch provides a buffer of this many bytes per thread of its grid, which it caps
    /// ([`LaunchLayout::spill_blocks`]). 0 when nothing is spilled.
    pub spilled_per_thread: u64,
}

impl LaunchLayout {
    /// The layout of `plan`'s kernel, its scalar region locals at `local_slots` (local, type,
    /// offset) of a locals buffer of `locals_size` bytes. `Err` names what the target cannot
    /// hold (a reduction into an array local updated outside the loops).
    pub fn new(
        plan: &Plan<'_>,
        (local_slots, locals_size): (&[(LocalId, Scalar, u32)], u32),
        status_used: bool,
    ) -> Result<LaunchLayout, String> {
        let (k, segments, caps) = (plan.kernel, plan.segments, plan.caps);
        let entries = plan.entries.iter().map(EntryShape::of).collect();
        let slot = |l: LocalId| {
            local_slots
                .iter()
                .find(|(i, ..)| *i == l)
                .map(|&(_, t, off)| (t, off))
        };
        let mut reductions = segments.reductions.clone();
        // Kernel reductions computed by sequential code: the local's final value.
        reductions.extend(sequential_reduction_slots(
            k,
            &segments.reduced_in_loops,
            slot,
        )?);
        Ok(LaunchLayout {
            entries,
            locals_size,
            partial_sizes: reductions
                .iter()
                .map(|r| caps.partial_bytes.of(r.ty))
                .collect(),
            reductions,
            result: k.result.and_then(slot),
            index_bytes: caps.index_bytes,
            status_used,
            program: segments.program.clone(),
            spilled_per_thread: plan.spilled.bytes_per_thread,
        })
    }

    /// The most blocks a launch of this kernel runs on a device of `limits`: fewer where it
    /// has reductions (their partials) or spilled private arrays (their copies).
    pub fn max_blocks(&self, limits: &super::GridLimits) -> crate::Result<u32> {
        let cap = if self.reductions.is_empty() {
            limits.max_blocks
        } else {
            limits.max_reduction_blocks
        };
        // With spilled arrays, no more than the device holds at once: more would only add
        // copies, each thread striding over iterations anyway.
        Ok(
            match self.spill_blocks(limits.threads, limits.spill_bytes)? {
                Some(spill) => cap.min(limits.max_reduction_blocks).min(spill),
                None => cap,
            },
        )
    }

    /// Bytes of the buffer of spilled private arrays a launch on a device of `limits` needs
    /// at most (0 when nothing is spilled): a copy for every thread of the largest grid.
    pub fn spill_buffer_bytes(&self, limits: &super::GridLimits) -> crate::Result<u64> {
        if self.spilled_per_thread == 0 {
            return Ok(0);
        }
        let blocks = self.max_blocks(limits)?.max(1);
        Ok(u64::from(blocks) * u64::from(limits.threads) * self.spilled_per_thread)
    }

    /// The most blocks of `threads` threads a launch may run so that every thread's copy of
    /// the spilled private arrays fits in `budget` bytes (`None` when nothing is spilled);
    /// `Err` when not even one block's fit.
    pub fn spill_blocks(&self, threads: u32, budget: u64) -> crate::Result<Option<u32>> {
        if self.spilled_per_thread == 0 {
            return Ok(None);
        }
        let block = self.spilled_per_thread * u64::from(threads.max(1));
        match budget / block {
            0 => Err(crate::Error::Unsupported {
                what: format!(
                    "private arrays of {} a thread, in device memory: a {}-thread block's copies take {}, more than the {} this device gives them",
                    show_bytes(self.spilled_per_thread),
                    threads,
                    show_bytes(block),
                    show_bytes(budget)
                ),
            }),
            n => Ok(Some(n.min(u64::from(u32::MAX)) as u32)),
        }
    }

    /// Whether a launch must read the locals buffer back: a reduction sequential code computed,
    /// or the region's value.
    pub fn reads_locals(&self) -> bool {
        self.result.is_some() || self.reductions.iter().any(|r| r.entry.is_none())
    }

    /// The reductions whose per-block partials the host folds (by index in `reductions`): those
    /// an entry point computes into a parameter.
    pub fn host_partials(&self) -> impl Iterator<Item = usize> + '_ {
        self.reductions
            .iter()
            .enumerate()
            .filter(|(_, r)| r.entry.is_some() && r.into.is_some())
            .map(|(i, _)| i)
    }

    /// Whether anything of a launch comes back to the host besides arrays: reductions, the
    /// region's value, or status words the kernel may have set.
    pub fn reads_back(&self) -> bool {
        self.reads_back_values() || self.status_used
    }

    /// Whether values come back to the host from a launch: reductions, the region's value.
    pub fn reads_back_values(&self) -> bool {
        self.reads_locals() || self.host_partials().next().is_some()
    }

    /// Whether every entry point runs on one thread.
    pub fn all_single(&self) -> bool {
        self.entries.iter().all(|e| e.single)
    }
}
