//! How many blocks each entry point of a launch gets: one thread per iteration of its loop
//! where the iteration count is known before the launch (else per element of the largest
//! array), or one block per iteration (per warp's worth) where the body is a vector loop, up
//! to as many blocks as the device's limits allow, each thread then striding over more
//! iterations (so reductions have few partials to combine). An entry point of one thread gets
//! the block count of the grid before it: a fold of partials reads it.

use super::layout::{EntryShape, LaunchLayout};
use crate::ir::args::KernelArg;
use crate::Result;

/// A device's grid limits and words.
#[derive(Clone, Copy, Debug)]
pub struct GridLimits {
    /// Threads of a block.
    pub threads: u32,
    /// Most blocks of a launch without reductions.
    pub max_blocks: u32,
    /// Most blocks of a launch with reductions (their partial buffers hold this many) or of an
    /// entry point whose blocks merge privatized copies: about as many as the device holds
    /// at once.
    pub max_reduction_blocks: u32,
    /// Every entry point of a launch gets the same block count (the largest any wants): the
    /// device writes the count once per launch where folds read it.
    pub uniform: bool,
    /// What the target calls a block and a thread (for `ACC_NOTIFY` and `ACC_TIME`).
    pub words: (&'static str, &'static str),
    /// Most bytes of a launch's buffer of private arrays spilled to device memory
    /// ([`crate::ir::spill`]); the grid keeps to the threads whose copies fit.
    pub spill_bytes: u64,
}

/// The blocks of one launch's entry points.
#[derive(Clone)]
pub struct Grid {
    limits: GridLimits,
    shapes: Vec<EntryShape>,
    /// Most blocks of any entry point, and of one whose blocks merge privatized copies.
    cap: u64,
    merge_cap: u64,
    largest: u64,
    uniform: Option<u32>,
    last: u32,
    /// Each entry point's block count at its last launch (a reduction's partials are read by
    /// it).
    pub blocks: Vec<u32>,
}

impl Grid {
    /// The grid of a launch of `layout` with `args`, whose largest array has `largest` elements.
    pub fn new(
        layout: &LaunchLayout,
        limits: GridLimits,
        largest: u64,
        args: &[KernelArg<'_>],
    ) -> Result<Grid> {
        let cap = layout.max_blocks(&limits)?;
        let mut grid = Grid {
            limits,
            shapes: layout.entries.clone(),
            cap: u64::from(cap.max(1)),
            merge_cap: u64::from(cap.min(limits.max_reduction_blocks).max(1)),
            largest: largest.max(1),
            uniform: None,
            last: 1,
            blocks: vec![1; layout.entries.len()],
        };
        if limits.uniform {
            let mut wanted = 0;
            layout
                .program
                .run::<crate::Error>(args, &mut |e, iterations, _| {
                    if grid.shapes.get(e).is_some_and(|s| !s.single) {
                        wanted = wanted.max(grid.wanted(e, iterations));
                    }
                    Ok(())
                })?;
            if wanted == 0 {
                wanted = grid.largest.div_ceil(u64::from(limits.threads));
            }
            let merges = layout.entries.iter().any(|s| s.merges_per_block);
            let cap = if merges { grid.merge_cap } else { grid.cap };
            grid.uniform = Some(wanted.clamp(1, cap) as u32);
        }
        Ok(grid)
    }

    fn wanted(&self, e: usize, iterations: Option<u64>) -> u64 {
        let iterations = iterations.unwrap_or(self.largest).max(1);
        match self.shapes.get(e) {
            Some(s) if s.block_per_iteration => {
                iterations.div_ceil(u64::from(s.gangs_per_block.max(1)))
            }
            _ => iterations.div_ceil(u64::from(self.limits.threads)),
        }
    }

    /// The blocks of entry point `e` launched for a loop of `iterations` (unknown: `None`).
    pub fn blocks_for(&mut self, e: usize, iterations: Option<u64>) -> u32 {
        let single = self.shapes.get(e).is_none_or(|s| s.single);
        if let Some(u) = self.uniform {
            self.last = u;
        } else if !single {
            let merges = self.shapes.get(e).is_some_and(|s| s.merges_per_block);
            let cap = if merges { self.merge_cap } else { self.cap };
            self.last = self.wanted(e, iterations).clamp(1, cap) as u32;
        }
        if let Some(b) = self.blocks.get_mut(e) {
            *b = self.last;
        }
        self.last
    }

    /// The grid of each entry point, as `blocks x threads: 1x1, 512x256` (`ACC_TIME`).
    pub fn shape(&self) -> String {
        let (block, thread) = self.limits.words;
        let grids: Vec<String> = self
            .blocks
            .iter()
            .zip(&self.shapes)
            .map(|(b, s)| {
                if s.single {
                    "1x1".into()
                } else {
                    format!("{b}x{}", self.limits.threads)
                }
            })
            .collect();
        format!("{block}s x {thread}s: {}", grids.join(", "))
    }

    /// The block count of every entry point, where the limits make it uniform.
    pub fn uniform(&self) -> Option<u32> {
        self.uniform
    }

    /// The device's limits and words.
    pub fn limits(&self) -> GridLimits {
        self.limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::plan::{prepare, Caps, Variant};
    use crate::ir::Scalar;

    fn layout() -> LaunchLayout {
        let k = crate::ir::samples::saxpy(Scalar::F32);
        let caps = Caps::cuda_like();
        let prepared = prepare(&k, &caps, Variant::default()).expect("prepared");
        LaunchLayout::new(&prepared.plan(&caps), (&[], 0), false).expect("layout")
    }

    const LIMITS: GridLimits = GridLimits {
        threads: 256,
        max_blocks: 4096,
        max_reduction_blocks: 1024,
        uniform: false,
        words: ("block", "thread"),
        spill_bytes: 1 << 30,
    };

    #[test]
    fn a_grid_takes_a_thread_per_iteration_up_to_its_cap_and_merging_blocks_fewer() {
        let mut l = layout();
        let mut g = Grid::new(&l, LIMITS, 1, &[]).expect("grid");
        assert_eq!(g.blocks_for(0, Some(1000)), 4);
        assert_eq!(g.blocks_for(0, Some(1 << 30)), 4096);
        l.entries[0].merges_per_block = true;
        let mut g = Grid::new(&l, LIMITS, 1, &[]).expect("grid");
        assert_eq!(g.blocks_for(0, Some(1 << 30)), 1024);
        assert_eq!(g.shape(), "blocks x threads: 1024x256");
    }

    #[test]
    fn spilled_private_arrays_cap_the_grid_to_the_copies_that_fit() {
        let mut l = layout();
        l.spilled_per_thread = 512 * 1024;
        // 1 GiB holds 8 blocks' copies.
        let mut g = Grid::new(&l, LIMITS, 1, &[]).expect("grid");
        assert_eq!(g.blocks_for(0, Some(1 << 30)), 8);
        assert_eq!(g.blocks_for(0, Some(1000)), 4);
        assert_eq!(l.spill_buffer_bytes(&LIMITS).expect("bytes"), 1 << 30);
        // Not even one block's copies fit: an error naming the sizes.
        l.spilled_per_thread = 8 << 20;
        let e = Grid::new(&l, LIMITS, 1, &[])
            .err()
            .expect("too large")
            .to_string();
        assert!(e.contains("private arrays of 8 MiB a thread"), "{e}");
        assert!(e.contains("take 2 GiB, more than the 1 GiB"), "{e}");
    }
}
