//! The plan of a kernel for one GPU target: the passes run in one written order
//! ([`prepare`]), then every schedule decision of each entry point made once
//! ([`Prepared::plan`]). Both emitters, the launch layout, ACC_INFO
//! ([`crate::mapping::describe`]) and the golden `.plan` files read the same [`Plan`], so
//! what ACC_INFO reports is what runs; an emitter only writes what the plan says.

use std::borrow::Cow;

pub use super::gang_phases::GangPhases;
pub use super::privatize::Privatized;
use super::segments::Segments;
pub use super::spill::Spilled;
use super::{FieldId, Kernel, LocalId, LoopLevel, ParamId, Scalar, Stmt};

mod caps;
mod versioning;
pub use crate::unroll::unrolls_strided;
pub use caps::{Caps, ScalarBytes, SHARED_ARRAY_BYTES};
pub use versioning::versioned_arrays;

// The plan's parts, as the emitters read them (they import nothing from the passes that
// compute them).
pub use super::args::ReductionSlot;
pub use super::gang_phases::{BlockReduction, SharedLoop, Step};
pub use super::segments::Entry;
pub use super::spill::SpilledArray;

/// Which lowering of a kernel a launch runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Without bounds checks: every access is proven in bounds for the launch's arguments
    /// ([`crate::bounds`]), or the kernel asked for none ([`Kernel::unchecked`]).
    pub proven: bool,
    /// Proven, and its `usize` arithmetic in 32 bits: the arguments keep every index value
    /// within them ([`crate::narrow`]).
    pub narrow: bool,
}

/// A kernel after the passes of one target and variant, with its entry points and expression
/// types: what a [`Plan`] is made from.
#[derive(Debug)]
pub struct Prepared {
    /// The kernel after the target's own passes ([`for_target`]: `cache` staging, automatic
    /// tiles), before the variant's: what ACC_INFO describes loop by loop.
    pub staged: Kernel,
    /// The kernel the target runs: `staged` with its tiled nests expanded into tile and
    /// element loops ([`crate::tile::expand`]), without the checks the variant proves
    /// needless, narrowed where it says.
    pub kernel: Kernel,
    /// Its entry points and launch order ([`Segments`]).
    pub segments: Segments,
    /// The type of each of its expressions, from the validator.
    pub types: Vec<Scalar>,
}

/// `k` after the passes that depend on the target but not on a launch's arguments, in this
/// order: array elements accumulated in sequential loops kept in registers
/// ([`crate::promote::promote`], recorded in [`Kernel::kept_in_registers`]), `cache` staging
/// ([`crate::cache_staging::stage`]), then automatic tiles
/// ([`crate::tile::auto_tile`], recorded in [`Kernel::auto_tiled`]), each within the
/// target's [`Caps::shared_array_bytes`]. The builder runs no pass; the bounds proof reads
/// the kernel as built, whose accesses these passes keep (a staged copy reads only elements
/// the loop reads, behind a check of the array's length).
pub fn for_target(k: &Kernel, caps: &Caps) -> Kernel {
    let mut staged = k.clone();
    // First, so that the tiles see an element accumulated in a loop as the scalar it becomes.
    super::promote::promote(&mut staged);
    super::cache_staging::stage(&mut staged, caps.shared_array_bytes);
    staged.auto_tiled = super::tile::auto_tile(&mut staged, caps.shared_array_bytes);
    staged
}

/// Runs the passes on `k` for a target of `caps` and variant `v`, in this order: the
/// target's passes ([`for_target`]), bounds checks dropped where proven, tile expansion,
/// narrowing, type checking (once: everything after reads its types), the split into entry
/// points. `Err` says what no entry point can hold yet, or that the IR is invalid (an
/// internal error).
pub fn prepare(k: &Kernel, caps: &Caps, v: Variant) -> Result<Prepared, String> {
    let staged = for_target(k, caps);
    let mut kernel = match super::tile::expand(&staged, caps.shared_array_bytes) {
        Cow::Owned(expanded) => expanded,
        Cow::Borrowed(_) => staged.clone(),
    };
    kernel.unchecked |= v.proven;
    if v.narrow {
        kernel = super::narrow::to_32(&kernel);
    }
    let types =
        super::validate::expr_types(&kernel).map_err(|e| format!("invalid kernel IR: {e}"))?;
    let segments = Segments::with_types(&kernel, &types)?;
    Ok(Prepared {
        staged,
        kernel,
        segments,
        types,
    })
}

impl Prepared {
    /// The plan of this kernel on a target of `caps`.
    pub fn plan<'a>(&'a self, caps: &'a Caps) -> Plan<'a> {
        let k = &self.kernel;
        Plan {
            kernel: k,
            segments: &self.segments,
            types: &self.types,
            entries: self
                .segments
                .entries
                .iter()
                .map(|e| match e {
                    Entry::Grid { looped, .. } => EntryPlan::of(k, looped, caps),
                    _ => EntryPlan::single(),
                })
                .collect(),
            spilled: Spilled::of(k, |t| caps.elem_bytes.of(t)),
            atomic_arrays: atomic_arrays(k),
            caps,
        }
    }
}

/// Every schedule decision for one kernel on one target.
#[derive(Debug)]
pub struct Plan<'a> {
    /// The kernel as the target runs it ([`Prepared::kernel`]).
    pub kernel: &'a Kernel,
    /// Its entry points.
    pub segments: &'a Segments,
    /// The type of each expression.
    pub types: &'a [Scalar],
    /// How each entry point runs, in the order of `segments.entries`.
    pub entries: Vec<EntryPlan<'a>>,
    /// The private arrays kept in device memory, laid out with the target's element sizes.
    pub spilled: Spilled,
    /// The arrays (and fields) an `atomic` statement updates anywhere in the kernel: a
    /// target whose language types atomic memory (WGSL's `atomic<..>`) declares these so.
    pub atomic_arrays: std::collections::BTreeSet<(ParamId, Option<FieldId>)>,
    /// The target.
    pub caps: &'a Caps,
}

impl Plan<'_> {
    /// The plan of the grid entry whose parallel loop starts at `line` with variable `var`
    /// (how ACC_INFO, which reads the kernel as written, finds a loop's entry).
    pub fn grid_entry(&self, line: u32, var: LocalId) -> Option<&EntryPlan<'_>> {
        self.segments
            .entries
            .iter()
            .zip(&self.entries)
            .find_map(|(e, p)| match e {
                Entry::Grid { looped, .. } if first_level(looped) == Some((line, var)) => Some(p),
                _ => None,
            })
    }

    /// The plan in words, one line per decision, as the golden `.plan` files show it.
    pub fn outline(&self) -> String {
        let f = &self.kernel.function;
        let mut out = String::new();
        for (n, (e, p)) in self.segments.entries.iter().zip(&self.entries).enumerate() {
            let what = match e {
                Entry::Single(_) => "one thread".to_string(),
                Entry::Fold(r) => format!("one thread folding {} partial(s)", r.len()),
                Entry::Grid { looped, .. } => {
                    let var = first_level(looped)
                        .and_then(|(_, v)| f.locals.get(v as usize))
                        .map_or("?", |l| l.name.as_str());
                    format!("grid over loop {var}")
                }
            };
            out.push_str(&format!("entry {n}: {what}\n"));
            if p.single {
                continue;
            }
            let c = self.caps;
            out.push_str(&format!(
                "  {} {}s per {}, {} gang iteration(s) per {}{}{}\n",
                p.block_threads,
                c.thread,
                c.block,
                p.gangs_per_block,
                c.block,
                if p.unrolled { ", unrolled by 4" } else { "" },
                if p.merges_per_block {
                    format!(", grid kept to the {}s the device holds at once", c.block)
                } else {
                    String::new()
                }
            ));
            if let Some(n) = p.array_rounds {
                out.push_str(&format!(
                    "  array reductions combined {n} elements a round: each warp's shuffles, then one {} per element over the warps\n",
                    c.thread
                ));
            }
            if let Some(pr) = p.privatized {
                let name = self
                    .kernel
                    .params
                    .get(pr.array as usize)
                    .map_or("?", |a| a.name.as_str());
                out.push_str(&format!(
                    "  atomic {:?} updates of `{name}` combined in the {}'s memory\n",
                    pr.op, c.block
                ));
            }
            for (var, arrays) in &p.versioned {
                let names: Vec<String> = arrays
                    .iter()
                    .map(|&a| {
                        let name = self
                            .kernel
                            .params
                            .get(a as usize)
                            .map_or("?", |p| p.name.as_str());
                        format!("`{name}`")
                    })
                    .collect();
                out.push_str(&format!(
                    "  loop {}: a fast version without the checks of {}\n",
                    f.locals.get(*var as usize).map_or("?", |l| l.name.as_str()),
                    names.join(", ")
                ));
            }
            if let Some(ph) = &p.phases {
                out.push_str("  gang iteration:\n");
                for line in ph.outline(f).lines() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
        }
        for a in &self.spilled.arrays {
            out.push_str(&format!(
                "spilled: `{}`, {} bytes per {}\n",
                f.locals[a.local as usize].name,
                a.bytes(),
                self.caps.thread
            ));
        }
        out.push_str("launches:\n");
        for line in self.segments.program.outline().lines() {
            out.push_str(&format!("  {line}\n"));
        }
        out
    }
}

/// The arrays (and fields) an `atomic` statement of `k` updates.
fn atomic_arrays(k: &Kernel) -> std::collections::BTreeSet<(ParamId, Option<FieldId>)> {
    let mut out = std::collections::BTreeSet::new();
    super::walk::for_each_stmt(&k.function.body, &mut |s| {
        if let Stmt::Atomic { array, field, .. } = s {
            out.insert((*array, *field));
        }
    });
    out
}

/// The source line and variable of a parallel loop's outermost level.
fn first_level(s: &Stmt) -> Option<(u32, LocalId)> {
    match s {
        Stmt::For { levels, .. } => levels.first().map(|l| (l.line, l.var)),
        _ => None,
    }
}

/// How one entry point runs.
#[derive(Clone, Debug)]
pub struct EntryPlan<'a> {
    /// On one thread (code between parallel loops, a fold of partials) rather than a grid.
    pub single: bool,
    /// Each iteration of the gang loop takes a block (or a warp), whose threads share its
    /// vector loops, in these steps; `None`: each iteration takes a thread.
    pub phases: Option<GangPhases<'a>>,
    /// The gang iterations are short vector loops (`vector_length(n)`, n at most 32) that each
    /// take a warp, or a block of 32 threads where the target has no warps to give
    /// ([`Caps::warp_lanes`]).
    pub short_vector: bool,
    /// Threads per block of this entry point.
    pub block_threads: u32,
    /// Gang iterations one block runs at once (a warp's worth each, or 1).
    pub gangs_per_block: u32,
    /// The array whose atomic updates each block combines in its own memory first.
    pub privatized: Option<Privatized>,
    /// Each block ends by merging its copy of an array, or its threads update one by
    /// compare-exchange loops: the grid keeps to the blocks the device holds at once.
    pub merges_per_block: bool,
    /// The grid-stride loop runs four iterations per trip while four remain (a thread per
    /// iteration, short straight-line body: [`unrolls_strided`]).
    pub unrolled: bool,
    /// The strided loops with a fast version (the grid loop, loops a block shares): each
    /// loop's variable and the arrays its fast version accesses unchecked
    /// ([`versioned_arrays`]).
    pub versioned: Vec<(LocalId, Vec<ParamId>)>,
    /// The variables of the loops a block's threads share that each thread runs written out
    /// ([`Caps::writes_out_short_loops`]): no loop, no fast version.
    pub written_out: Vec<LocalId>,
    /// How the block combines its threads' copies of each array reduction of the loop:
    /// `Some(n)`, in rounds of `n` elements, a warp's lanes, each warp's shuffles then one
    /// thread per element over the warps (two barriers a round); `None`, a tree in shared
    /// memory per element, where the target has no warps (or the loop no array reduction).
    pub array_rounds: Option<u32>,
}

impl<'a> EntryPlan<'a> {
    /// An entry point of one thread.
    pub fn single() -> EntryPlan<'a> {
        EntryPlan {
            single: true,
            phases: None,
            short_vector: false,
            block_threads: 1,
            gangs_per_block: 1,
            privatized: None,
            merges_per_block: false,
            unrolled: false,
            versioned: Vec::new(),
            written_out: Vec::new(),
            array_rounds: None,
        }
    }

    /// The arrays the fast version of the strided loop over `var` accesses unchecked (empty:
    /// the loop has one version).
    pub fn versioned(&self, var: LocalId) -> &[ParamId] {
        self.versioned
            .iter()
            .find(|(v, _)| *v == var)
            .map_or(&[], |(_, a)| a.as_slice())
    }

    /// The decisions for the grid entry running parallel loop `s` of `k` on a target of
    /// `caps`.
    pub fn of(k: &Kernel, s: &'a Stmt, caps: &Caps) -> EntryPlan<'a> {
        let mut phases = s.gang_phases(&k.function, caps.shared_array_bytes);
        let short_vector = phases.as_ref().is_some_and(|p| warp_per_iteration(k, p));
        let (block_threads, gangs_per_block) = match (short_vector, caps.warp_lanes) {
            (true, Some(lanes)) => {
                // A warp's shuffles leave a reduction's total in every lane.
                if let Some(p) = &mut phases {
                    p.reduce_into_every_thread();
                }
                (caps.threads, caps.threads / lanes)
            }
            (true, None) => (32, 1),
            (false, _) => (caps.threads, 1),
        };
        let flat = phases.is_none();
        let privatized = flat
            .then(|| super::privatize::privatized(k, s, caps.privatized_types))
            .flatten();
        let contended = flat
            && super::privatize::contended_by_cas(k, s, caps.privatized_types, &caps.update_by_cas);
        let unrolled =
            flat && matches!(s, Stmt::For { levels, body, .. } if unrolls_strided(levels, body));
        // Fast versions: of the grid loop where each iteration takes a thread, else of the
        // loops the block's threads share (not ragged ones, whose check before the loop would
        // cost more than the few checks it saves).
        let (mut versioned, mut written_out) = (Vec::new(), Vec::new());
        let mut version = |levels: &[LoopLevel], body: &[Stmt]| {
            let arrays = versioned_arrays(k, levels, body, caps);
            if !arrays.is_empty() {
                versioned.push((levels[0].var, arrays));
            }
        };
        // The threads taking a gang iteration's shared loops.
        let group = block_threads / gangs_per_block;
        match (&phases, s) {
            (None, Stmt::For { levels, body, .. }) => version(levels, body),
            (Some(p), _) => {
                for l in p.loops() {
                    let Stmt::For { levels, body, .. } = &*l.vector else {
                        continue;
                    };
                    if caps.writes_out_short_loops && short_literal(k, levels, group) {
                        written_out.push(levels[0].var);
                    } else if caps.versions_shared_loops && !l.ragged {
                        version(levels, body);
                    }
                }
            }
            _ => {}
        }
        let array_rounds = caps.warp_lanes.filter(|_| array_reductions(k, s) > 0);
        EntryPlan {
            array_rounds,
            single: false,
            phases,
            short_vector,
            block_threads,
            gangs_per_block,
            privatized,
            merges_per_block: privatized.is_some() || contended,
            unrolled,
            versioned,
            written_out,
        }
    }
}

/// The array reductions of parallel loop `s` (its own clause's, element-wise).
fn array_reductions(k: &Kernel, s: &Stmt) -> usize {
    match s {
        Stmt::For { reductions, .. } => reductions
            .iter()
            .filter(|r| {
                k.function
                    .locals
                    .get(r.local as usize)
                    .is_some_and(|l| l.len.is_some())
            })
            .count(),
        _ => 0,
    }
}

/// The most iterations per thread of a shared loop that is written out
/// ([`Caps::writes_out_short_loops`]): a tile's elements, a chunk's copy.
pub const WRITTEN_OUT_ROUNDS: u32 = 4;

/// Whether a shared loop over `levels` has one level and a literal trip count of at most
/// [`WRITTEN_OUT_ROUNDS`] rounds of `group` threads.
fn short_literal(k: &Kernel, levels: &[LoopLevel], group: u32) -> bool {
    matches!(levels, [lv] if matches!(k.function.exprs[lv.trips],
        super::Expr::Literal(super::Literal::Int(_, n))
            if (0..=i128::from(WRITTEN_OUT_ROUNDS * group)).contains(&n)))
}

/// Whether each gang iteration of `phases` takes a warp rather than a block: with
/// `vector_length(n)`, n at most 32, where no array of the iteration lives in shared memory
/// (the block's warps run different iterations, so they cannot share one copy).
pub fn warp_per_iteration(k: &Kernel, phases: &GangPhases<'_>) -> bool {
    k.vector_length.is_some_and(|v| v <= 32) && phases.shared_arrays.is_empty()
}

#[cfg(test)]
mod tests;
