//! `cache` (3.3 section 2.10, 2.0 section 2.8): subarrays a loop's iterations read, staged in
//! the block's shared memory for the GPU backends.
//!
//! `acc::cache!(a[i - 1..i + 2])` at the top of a loop whose iterations a block's threads
//! share (a vector loop in a gang iteration, or a flat parallel loop) names a window that moves
//! with the loop's variable. The window of a run of consecutive iterations is one contiguous
//! stretch of `a`, so the block copies that stretch into shared memory once (adjacent threads
//! copying adjacent elements), synchronizes, and the iterations read their elements from the
//! copy instead of the array: each element fetched once per run rather than once per iteration
//! that reads it. [`stage`] rewrites the kernel so, before either backend lowers it, into loops
//! the gang plan ([`super::gang_phases`]) already runs:
//!
//! ```text
//! for i in s..s + n vector { cache(a[i + c..i + c + len]); body }
//! ```
//! becomes (in a gang iteration; a flat parallel loop becomes the gang loop over `t` itself)
//! ```text
//! for t in 0..ceil(n / R) {                                  // every thread in step
//!     for e in 0..R + len - 1 vector {                       // the copy
//!         if e < min(R, n - t * R) + len - 1 && s + t * R + c + e < a.len() {
//!             a_cache[e] = a[s + t * R + c + e]
//!         }
//!     }
//!     for q in 0..min(R, n - t * R) vector { i = s + t * R + q; body' }
//! }
//! ```
//! where `body'` reads `a_cache[q + d]` for each load of `a` at an index `d` elements into the
//! window (compared symbolically, [`super::affine`]); other loads of `a` read the array. Only
//! arrays the kernel never writes are staged (a copy must not go stale), and only where the
//! rewritten gang iteration still runs on a block; otherwise the directive stays a hint, and
//! ACC_INFO says why ([`Cache::outcome`]). Host and multicore run the host twin, where the
//! hint has no effect; results are the same on every device, since the copy holds the
//! array's values.

use std::collections::{HashMap, HashSet};

use super::affine::{forms_before, Affine, Forms};

mod reads;
mod shared;

use super::*;
use reads::{window_reads, Offset};

/// `acc::cache!(a[start..start + len])` at the top of the body of the loop whose (innermost)
/// variable is `loop_var`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cache {
    pub loop_var: LocalId,
    pub array: ParamId,
    /// The window's first index (an expression of the loop's variable and values from before
    /// the loop), `usize`.
    pub start: Handle<Expr>,
    /// The window's length, a constant.
    pub len: u32,
    /// The directive's line in the source.
    pub line: u32,
    /// What [`stage`] did with it.
    pub outcome: CacheOutcome,
}

/// What the GPU backends do with a [`Cache`] directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Not looked at yet.
    Pending,
    /// Staged through shared memory: the block copies `elements` elements of the array for
    /// each `round` consecutive iterations of the loop, and `reads` of the loop's loads read
    /// the copy.
    Staged {
        round: u32,
        elements: u32,
        reads: usize,
    },
    /// A hint the GPU backends do not act on, and why.
    Hint(String),
}

/// The longest window staged (longer ones would not fit the gang's shared arrays anyway).
const MAX_WINDOW: u32 = 1 << 16;

/// Iterations of a loop a block stages for at once, the first whose copies fit: two per thread
/// of a 256-thread block. Measured on an H100 (a 17-tap filter, a five-point stencil's centre
/// row, against the loops without `cache`): runs of 256 gained 12% and lost 5%, of 512 gained
/// 20% and 11%, of 1024 gained 20% and 1%.
const ROUNDS: [u32; 2] = [512, 256];

/// Rewrites `k` so that the loops [`Cache`] directives top read their windows from shared
/// memory where they can (see the module's documentation), within `shared_bytes`
/// ([`crate::plan::Caps::shared_array_bytes`]), and records each directive's [`CacheOutcome`].
pub fn stage(k: &mut Kernel, shared_bytes: u32) {
    if k.caches.is_empty() {
        return;
    }
    let Ok(types) = super::validate::expr_types(k) else {
        for c in &mut k.caches {
            c.outcome = CacheOutcome::Hint("the kernel's types are not known".into());
        }
        return;
    };
    let mut written = HashSet::new();
    walk::arrays_written(&k.function.body, &mut written);
    let mut cx = Cx {
        caches: std::mem::take(&mut k.caches),
        params: &k.params,
        types,
        written,
        warp_gangs: k.vector_length.is_some_and(|v| v <= 32),
        shared_bytes,
        used_outside: HashMap::new(),
    };
    let hinted: HashSet<LocalId> = cx.caches.iter().map(|c| c.loop_var).collect();
    used_outside(
        &k.function,
        &k.function.body,
        &hinted,
        &mut Vec::new(),
        &mut cx.used_outside,
    );
    let mut f = std::mem::take(&mut k.function);
    let body = std::mem::take(&mut f.body);
    f.body = cx.block(&mut f, body, None);
    if cx
        .caches
        .iter()
        .any(|c| matches!(c.outcome, CacheOutcome::Staged { .. }))
    {
        // The rewrite used some expressions in several places; each must appear once.
        let mut body = std::mem::take(&mut f.body);
        walk::unshare(&mut f, &mut body, &mut HashSet::new());
        f.body = body;
    }
    for c in &mut cx.caches {
        if c.outcome == CacheOutcome::Pending {
            c.outcome = CacheOutcome::Hint(
                "its loop is not one whose iterations a block's threads share (a vector loop in a gang loop, or a parallel loop of one level)"
                    .into(),
            );
        }
    }
    k.caches = cx.caches;
    k.function = f;
}

struct Cx<'k> {
    caches: Vec<Cache>,
    params: &'k [Param],
    /// The original expressions' types.
    types: Vec<Scalar>,
    /// The arrays the kernel writes.
    written: HashSet<ParamId>,
    /// `vector_length(n)`, n <= 32: a warp per gang iteration, which has no shared memory of
    /// its own.
    warp_gangs: bool,
    /// The target's shared memory for a block's arrays.
    shared_bytes: u32,
    /// For each loop a directive tops (by its variable), the locals the kernel uses outside
    /// its body (its reductions included): a copy of the body keeps those.
    used_outside: HashMap<LocalId, HashSet<LocalId>>,
}

struct Plan {
    /// The directives staged (indices into `Cx::caches`), each with its array's element type.
    staged: Vec<(usize, Scalar)>,
    reads: WindowReads,
    round: u32,
}

/// The loads read from a copy: (load, directive index in `staged`, where in the window).
type WindowReads = HashMap<Handle<Expr>, (usize, Offset)>;

impl Cx<'_> {
    fn hinted(&self, var: LocalId) -> bool {
        self.caches.iter().any(|c| c.loop_var == var)
    }

    /// `b` rewritten; `gang`: the new arrays of the enclosing gang loop, inside one.
    fn block(
        &mut self,
        f: &mut Function,
        b: Vec<Stmt>,
        mut gang: Option<&mut Vec<LocalId>>,
    ) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(b.len());
        for s in b {
            out.push(self.stmt(f, s, gang.as_deref_mut()));
        }
        out
    }

    fn stmt(&mut self, f: &mut Function, s: Stmt, gang: Option<&mut Vec<LocalId>>) -> Stmt {
        match s {
            Stmt::For {
                schedule: Some(sched),
                levels,
                reductions,
                private,
                tile,
                body,
            } => {
                let s = Stmt::For {
                    schedule: Some(sched.clone()),
                    levels,
                    reductions,
                    private,
                    tile,
                    body,
                };
                let (hinted, nested) = match &s {
                    Stmt::For { levels, body, .. } => (
                        levels.last().is_some_and(|l| self.hinted(l.var)),
                        holds_parallel_loop(body),
                    ),
                    _ => unreachable!(),
                };
                match gang {
                    // A vector loop of a gang iteration.
                    Some(arrays) if hinted && !sched.gang => match self.shared(f, &s, false) {
                        Some((staged, new)) => {
                            arrays.extend(new);
                            staged
                        }
                        None => s,
                    },
                    Some(_) => s,
                    // A flat parallel loop: it becomes a gang loop over runs of iterations.
                    None if hinted && !nested => self.flat(f, s),
                    None if sched.gang => self.gang_loop(f, s),
                    None => s,
                }
            }
            Stmt::For {
                schedule: None,
                levels,
                reductions,
                private,
                tile,
                body,
            } => Stmt::For {
                body: self.block(f, body, gang),
                schedule: None,
                levels,
                reductions,
                private,
                tile,
            },
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let mut gang = gang;
                let accept = self.block(f, accept, gang.as_deref_mut());
                let reject = self.block(f, reject, gang);
                Stmt::If {
                    cond,
                    accept,
                    reject,
                }
            }
            Stmt::Loop { body } => Stmt::Loop {
                body: self.block(f, body, gang),
            },
            other => other,
        }
    }

    /// A gang loop: its vector loops staged, kept only where its iterations still run on a
    /// block ([`Stmt::gang_phases`]).
    fn gang_loop(&mut self, f: &mut Function, s: Stmt) -> Stmt {
        let Stmt::For {
            levels,
            schedule,
            reductions,
            mut private,
            tile,
            body,
        } = s.clone()
        else {
            return s;
        };
        if !tile.is_empty() {
            return s;
        }
        let before: Vec<CacheOutcome> = self.caches.iter().map(|c| c.outcome.clone()).collect();
        let mut arrays = Vec::new();
        let body = self.block(f, body, Some(&mut arrays));
        if arrays.is_empty() {
            return s;
        }
        private.extend(arrays);
        let staged = Stmt::For {
            levels,
            schedule,
            reductions,
            private,
            tile,
            body,
        };
        match staged.gang_phases_or_why(f, self.shared_bytes) {
            Ok(_) => staged,
            Err(why) => {
                self.revert(&before, &why);
                s
            }
        }
    }

    /// A flat parallel loop of one level: a gang loop over runs of its iterations, each run's
    /// windows staged, where its iterations then run on a block.
    fn flat(&mut self, f: &mut Function, s: Stmt) -> Stmt {
        let before: Vec<CacheOutcome> = self.caches.iter().map(|c| c.outcome.clone()).collect();
        let Some((staged, _)) = self.shared(f, &s, true) else {
            return s;
        };
        match staged.gang_phases_or_why(f, self.shared_bytes) {
            Ok(_) => staged,
            Err(why) => {
                self.revert(&before, &why);
                s
            }
        }
    }

    /// Directives staged since `before` become hints again, with `why`.
    fn revert(&mut self, before: &[CacheOutcome], why: &str) {
        for (c, b) in self.caches.iter_mut().zip(before) {
            if matches!(c.outcome, CacheOutcome::Staged { .. }) && *b == CacheOutcome::Pending {
                c.outcome = CacheOutcome::Hint(format!(
                    "staged, its loop's gang iteration would not run on a block: {why}"
                ));
            }
        }
    }

    /// Which of the directives on loop `s` can be staged, and which loads read the copies.
    fn plan(&mut self, f: &Function, s: &Stmt) -> Option<Plan> {
        let (lv, body) = self.stageable_loop(f, s)?;
        let var = lv.var;
        let start_forms = forms_before(f, &self.types, body, 0, &Default::default());
        let mut staged = Vec::new();
        for n in 0..self.caches.len() {
            let c = &self.caches[n];
            if c.loop_var != var || c.outcome != CacheOutcome::Pending {
                continue;
            }
            match self.window_start(f, c, var, &start_forms) {
                Ok((elem, lo)) => staged.push((n, elem, lo)),
                Err(why) => self.caches[n].outcome = CacheOutcome::Hint(why),
            }
        }
        if staged.is_empty() {
            return None;
        }
        let (reads, counts) = self.window_loads(f, body, &staged);
        let (kept, renumbered) = self.drop_unread(staged, reads, &counts);
        if kept.is_empty() {
            return None;
        }
        let round = self.round(&kept)?;
        Some(Plan {
            staged: kept,
            reads: renumbered,
            round,
        })
    }

    /// The level and body of loop `s`, where it is one whose directives may be staged: a loop
    /// of one level, not tiled, stepping by 1, in a gang iteration with shared memory of its
    /// own. Otherwise its directives become hints, saying why.
    fn stageable_loop<'s>(
        &mut self,
        f: &Function,
        s: &'s Stmt,
    ) -> Option<(&'s LoopLevel, &'s Block)> {
        let Stmt::For {
            levels, tile, body, ..
        } = s
        else {
            return None;
        };
        let [lv] = levels.as_slice() else {
            self.hint_all(levels.last()?.var, "its loop is a collapsed nest");
            return None;
        };
        let var = lv.var;
        let why = if !tile.is_empty() {
            Some("its loop is tiled")
        } else if !matches!(f.exprs[lv.step], Expr::Literal(Literal::Int(_, 1))) {
            Some("its loop does not step by 1")
        } else if self.warp_gangs {
            Some("`vector_length` of at most 32 gives each gang iteration a warp, without shared memory of its own")
        } else {
            None
        };
        if let Some(why) = why {
            self.hint_all(var, why);
            return None;
        }
        Some((lv, body))
    }

    /// The element type of directive `c`'s array and its window's start as an affine form
    /// (`start_forms`: the forms of locals at the top of the loop of `var`), where the
    /// directive can be staged; else why not.
    fn window_start(
        &self,
        f: &Function,
        c: &Cache,
        var: LocalId,
        start_forms: &Forms,
    ) -> Result<(Scalar, Affine), String> {
        let elem = match self.params.get(c.array as usize).map(|p| &p.kind) {
            Some(ParamKind::Array {
                elem: Elem::Scalar(t),
                ..
            }) if *t != Scalar::Bool => *t,
            _ => {
                return Err(
                    "its array's elements are not numbers (structs and `bool` stay in device memory)".into(),
                );
            }
        };
        if self.written.contains(&c.array) {
            return Err("the region writes the array, so a copy could go stale".into());
        }
        let Some(lo) = Affine::of(f, &self.types, c.start, start_forms) else {
            return Err(
                "its start is not a sum of the loop's variable and values from before the loop"
                    .into(),
            );
        };
        if c.len > MAX_WINDOW {
            return Err(format!(
                "a window longer than {MAX_WINDOW} elements would not fit shared memory"
            ));
        }
        if c.len < 2 {
            return Err(
                "a window of one element is read by one iteration only, so a copy would save no reads"
                    .into(),
            );
        }
        let v = format!("l{var}");
        let moves_once = lo.terms.get(&v) == Some(&1)
            && lo
                .terms
                .keys()
                .all(|t| t == &v || !t.split('*').any(|x| x == v));
        if !moves_once {
            return Err("its start does not move with the loop's variable (`a[i + c..]`)".into());
        }
        Ok((elem, lo))
    }

    /// The loads of the loop's body each window of `staged` holds, with where in it, and the
    /// number of loads of each.
    fn window_loads(
        &self,
        f: &Function,
        body: &Block,
        staged: &[(usize, Scalar, Affine)],
    ) -> (WindowReads, Vec<usize>) {
        // The loads of the staged arrays at an index inside the window: a constant into it, or
        // that plus multiples of the variables of sequential loops around the load whose
        // ranges keep it inside (a filter's taps, `a[i + k - 8]` for `k` in `0..17`).
        let mut reads = HashMap::new();
        let mut counts = vec![0usize; staged.len()];
        for at in 0..body.len() {
            let forms = forms_before(f, &self.types, body, at, &Default::default());
            let windows: Vec<(ParamId, &Affine, u32)> = staged
                .iter()
                .map(|(n, _, lo)| (self.caches[*n].array, lo, self.caches[*n].len))
                .collect();
            let mut found = Vec::new();
            window_reads(
                f,
                &self.types,
                std::slice::from_ref(&body[at]),
                &forms,
                &HashMap::new(),
                &windows,
                &mut found,
            );
            for (h, at_staged, offset) in found {
                counts[at_staged] += 1;
                reads.insert(h, (at_staged, offset));
            }
        }
        (reads, counts)
    }

    /// The directives of `staged` that some load reads (with their element types) and the reads
    /// of those, renumbered over them; the others become hints.
    fn drop_unread(
        &mut self,
        staged: Vec<(usize, Scalar, Affine)>,
        reads: WindowReads,
        counts: &[usize],
    ) -> (Vec<(usize, Scalar)>, WindowReads) {
        // Directives none of whose loads match stay hints; the reads are renumbered over the
        // rest.
        let mut kept = Vec::new();
        let mut order = Vec::new();
        for (at_staged, (n, elem, _)) in staged.into_iter().enumerate() {
            if counts[at_staged] == 0 {
                self.caches[n].outcome = CacheOutcome::Hint(
                    "no load of the array in the loop's body is at an index inside the window"
                        .into(),
                );
                continue;
            }
            order.push(at_staged);
            kept.push((n, elem));
        }
        let renumbered: WindowReads = reads
            .into_iter()
            .filter_map(|(h, (at_staged, d))| {
                let pos = order.iter().position(|&x| x == at_staged)?;
                Some((h, (pos, d)))
            })
            .collect();
        (kept, renumbered)
    }

    /// The run of iterations the copies of directives `kept` are for; `None`, the directives
    /// hints, where even the shortest would not fit.
    fn round(&mut self, kept: &[(usize, Scalar)]) -> Option<u32> {
        // The largest run whose copies fit the gang's shared arrays.
        let bytes = |round: u32| -> u32 {
            kept.iter()
                .map(|&(n, t)| (round + self.caches[n].len - 1) * t.size().max(4))
                .sum()
        };
        let Some(round) = ROUNDS.into_iter().find(|&r| bytes(r) <= self.shared_bytes) else {
            for &(n, _) in kept {
                self.caches[n].outcome = CacheOutcome::Hint(format!(
                "its copies would take more than the {} bytes of shared memory a block's arrays may hold",
                self.shared_bytes
            ));
            }
            return None;
        };
        Some(round)
    }

    fn hint_all(&mut self, var: LocalId, why: &str) {
        for c in &mut self.caches {
            if c.loop_var == var && c.outcome == CacheOutcome::Pending {
                c.outcome = CacheOutcome::Hint(why.into());
            }
        }
    }
}

/// Records, for each loop of `hinted` (by variable), the locals `b` uses outside its body:
/// `inside` holds the hinted loops around `b`.
fn used_outside(
    f: &Function,
    b: &[Stmt],
    hinted: &HashSet<LocalId>,
    inside: &mut Vec<LocalId>,
    out: &mut HashMap<LocalId, HashSet<LocalId>>,
) {
    for s in b {
        let mut used = HashSet::new();
        for h in walk::stmt_exprs(s) {
            walk::locals_read(f, h, &mut used);
        }
        match s {
            Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } => {
                used.insert(*local);
            }
            Stmt::Atomic { op, old, new, .. } => {
                used.extend(old.iter().chain(new.iter()).copied());
                used.extend(op.combine_local());
            }
            Stmt::For {
                levels, reductions, ..
            } => {
                used.extend(levels.iter().map(|l| l.var));
                // A loop's reductions combine into locals after it.
                used.extend(reductions.iter().map(|r| r.local));
            }
            _ => {}
        }
        for &h in hinted {
            if !inside.contains(&h) {
                out.entry(h).or_default().extend(used.iter().copied());
            }
        }
        match s {
            Stmt::If { accept, reject, .. } => {
                used_outside(f, accept, hinted, inside, out);
                used_outside(f, reject, hinted, inside, out);
            }
            Stmt::For { levels, body, .. } => {
                let own = levels.last().map(|l| l.var).filter(|v| hinted.contains(v));
                if let Some(v) = own {
                    inside.push(v);
                }
                used_outside(f, body, hinted, inside, out);
                if own.is_some() {
                    inside.pop();
                }
            }
            Stmt::Loop { body } => used_outside(f, body, hinted, inside, out),
            _ => {}
        }
    }
}

/// Whether `b` holds a parallel loop.
fn holds_parallel_loop(b: &[Stmt]) -> bool {
    let mut found = false;
    walk::for_each_stmt(b, &mut |s| {
        found |= matches!(
            s,
            Stmt::For {
                schedule: Some(_),
                ..
            }
        );
    });
    found
}

#[cfg(test)]
mod tests;
