//! How a gang loop's iteration runs when a GPU block (workgroup) runs it: the plan every GPU
//! backend follows (3.3 sections 2.9.2 to 2.9.4). The analysis finds the shape, decides which
//! arrays live in shared memory and where the block synchronizes; an emitter only writes each
//! [`Step`] in its target's words.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};

use super::*;

mod sync;

use sync::{place_barriers, uniform_bounds};

/// How a block (workgroup) runs one iteration of a gang loop (3.3 sections 2.9.2 and 2.9.4):
/// [`Step`]s every thread of the block takes in the same order (statements every thread runs,
/// "gang-redundant"; loops whose iterations the threads share; sequential loops and `if`s
/// around those, whose trip counts and conditions are the same on every thread; barriers),
/// then statements that one thread runs ("vector-single"), which may read the shared loops'
/// reductions.
#[derive(Clone, Debug)]
pub struct GangPhases<'a> {
    /// What every thread of the block runs for one gang iteration, barriers included.
    pub steps: Vec<Step<'a>>,
    /// Statements after the last step, run by the block's first thread.
    pub post: Vec<&'a Stmt>,
    /// Arrays private to the gang iteration (declared in the gang loop's body or named in its
    /// `private`, 3.3 sections 2.5.13 and 2.9.10) that its vector loops use: the block holds
    /// one copy in shared (workgroup) memory, which all its threads read and write. The block
    /// synchronizes at the start of each iteration (the last one's readers are done) and
    /// wherever [`Step::Barrier`] says.
    pub shared_arrays: Vec<LocalId>,
}

/// One step of a gang iteration (see [`GangPhases`]).
#[derive(Clone, Debug)]
pub enum Step<'a> {
    /// A statement every thread runs: a scalar assignment, an element of a private array, the
    /// fill of an array.
    Redundant(&'a Stmt),
    /// The block's threads wait for each other, and see each other's writes.
    Barrier,
    /// A loop the block's threads share.
    Shared(SharedLoop<'a>),
    /// A sequential loop every thread runs (its bounds are the same on every thread), its
    /// body's steps in each iteration.
    Sequential {
        levels: &'a [LoopLevel],
        steps: Vec<Step<'a>>,
    },
    /// An `if` every thread decides alike (its condition is the same on every thread).
    If {
        cond: Handle<Expr>,
        accept: Vec<Step<'a>>,
        reject: Vec<Step<'a>>,
    },
}

/// A loop the block's threads share ([`Step::Shared`]).
#[derive(Clone, Debug)]
pub struct SharedLoop<'a> {
    /// The vector loop, a worker loop, or a worker loop over a vector loop as one collapsed
    /// nest (the vector level fastest, so adjacent threads take adjacent vector iterations).
    pub vector: Cow<'a, Stmt>,
    /// Its reductions into locals of the iteration (not the gang loop's own): combined across
    /// the block after the loop, every thread then holding the result, unless
    /// [`BlockReduction::first_thread_only`].
    pub block_reductions: Vec<BlockReduction>,
    /// Its bounds depend on values the iteration loaded from memory (a CSR row's extent):
    /// often short and uneven, so a backend should not unroll it (unrolled copies of a gather
    /// cost registers, and so blocks per multiprocessor, for iterations that are not there).
    pub ragged: bool,
}

impl SharedLoop<'_> {
    /// Whether the block's threads run the loop four iterations per trip while four remain
    /// ([`crate::unroll::unrolls_strided`]); never a ragged one, whose few iterations would
    /// not fill the unrolled copies.
    pub fn unrolled(&self) -> bool {
        !self.ragged
            && matches!(&*self.vector, Stmt::For { levels, body, .. } if crate::unroll::unrolls_strided(levels, body))
    }
}

/// A reduction of a shared loop into a local of the gang iteration.
#[derive(Clone, Copy, Debug)]
pub struct BlockReduction {
    pub reduction: Reduction,
    /// Only the block's first thread needs the result: the loop is the iteration's only one,
    /// the local is set afresh by every iteration and the gang loop does not reduce it, so only
    /// the code after the loop, on that thread, reads it. A backend may then combine it into
    /// that thread alone, without handing it back to every thread. Set for all of a loop's
    /// reductions or for none (never for a complex product).
    pub first_thread_only: bool,
}

impl<'a> GangPhases<'a> {
    /// Every shared loop of the iteration, in the order the steps hold them.
    pub fn loops(&self) -> Vec<&SharedLoop<'a>> {
        fn walk<'s, 'a>(steps: &'s [Step<'a>], out: &mut Vec<&'s SharedLoop<'a>>) {
            for s in steps {
                match s {
                    Step::Shared(l) => out.push(l),
                    Step::Sequential { steps, .. } => walk(steps, out),
                    Step::If { accept, reject, .. } => {
                        walk(accept, out);
                        walk(reject, out);
                    }
                    Step::Redundant(_) | Step::Barrier => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.steps, &mut out);
        out
    }

    /// Whether a shared loop's reductions combine into the first thread alone
    /// ([`BlockReduction::first_thread_only`]).
    pub fn first_thread_reductions(&self) -> bool {
        self.loops()
            .iter()
            .any(|l| l.block_reductions.iter().any(|r| r.first_thread_only))
    }

    /// Has every block reduction of the iteration combine into every thread (clears
    /// [`BlockReduction::first_thread_only`]): where each gang iteration takes a warp, whose
    /// shuffles leave the total in every lane anyway ([`crate::plan::EntryPlan::of`]).
    pub fn reduce_into_every_thread(&mut self) {
        for s in &mut self.steps {
            if let Step::Shared(l) = s {
                for r in &mut l.block_reductions {
                    r.first_thread_only = false;
                }
            }
        }
    }

    /// Whether the iteration needs the block to synchronize at all (a barrier, a block
    /// reduction, or code after the loops that reads their results).
    pub fn synchronizes(&self) -> bool {
        fn barriers(steps: &[Step]) -> bool {
            steps.iter().any(|s| match s {
                Step::Barrier => true,
                Step::Shared(l) => !l.block_reductions.is_empty(),
                Step::Sequential { steps, .. } => barriers(steps),
                Step::If { accept, reject, .. } => barriers(accept) || barriers(reject),
                Step::Redundant(_) => false,
            })
        }
        !self.post.is_empty() || !self.shared_arrays.is_empty() || barriers(&self.steps)
    }

    /// Whether the threads of the iteration may pass values to each other through an array
    /// parameter (device memory): one the steps both write and read. A backend whose barrier
    /// orders only the block's shared memory (WGSL's `workgroupBarrier`) then orders device
    /// memory at each barrier as well.
    pub fn exchanges_through_arrays(&self, f: &Function) -> bool {
        let (mut written, mut read) = (HashSet::new(), HashSet::new());
        sync::for_each_step_stmt(&self.steps, &mut |s, _| {
            walk::arrays_written(std::slice::from_ref(s), &mut written);
            walk::arrays_read(f, std::slice::from_ref(s), &mut read);
        });
        for s in &self.post {
            walk::arrays_read(f, std::slice::from_ref(*s), &mut read);
        }
        written.intersection(&read).next().is_some()
    }

    /// The steps as an outline, one line each (for golden files and dumps): `barrier`,
    /// `shared <vars>` with its block reductions, `sequential <vars>` and `if` with their
    /// steps indented, `redundant` for a run of statements every thread runs, and `first
    /// thread` for the code after the steps.
    pub fn outline(&self, f: &Function) -> String {
        fn vars(f: &Function, levels: &[LoopLevel]) -> String {
            let names: Vec<&str> = levels
                .iter()
                .map(|l| f.locals[l.var as usize].name.as_str())
                .collect();
            names.join(", ")
        }
        fn go(f: &Function, steps: &[Step], depth: usize, out: &mut String) {
            let pad = "  ".repeat(depth);
            let mut redundant = 0;
            let flush = |n: &mut usize, out: &mut String| {
                if *n > 0 {
                    out.push_str(&format!("{pad}redundant: {n} statement(s)\n"));
                    *n = 0;
                }
            };
            for s in steps {
                match s {
                    Step::Redundant(_) => redundant += 1,
                    Step::Barrier => {
                        flush(&mut redundant, out);
                        out.push_str(&format!("{pad}barrier\n"));
                    }
                    Step::Shared(l) => {
                        flush(&mut redundant, out);
                        let Stmt::For { levels, .. } = &*l.vector else {
                            continue;
                        };
                        let reds: Vec<String> = l
                            .block_reductions
                            .iter()
                            .map(|r| {
                                format!(
                                    "{}{}",
                                    f.locals[r.reduction.local as usize].name,
                                    if r.first_thread_only {
                                        " (first thread)"
                                    } else {
                                        ""
                                    }
                                )
                            })
                            .collect();
                        let reds = if reds.is_empty() {
                            String::new()
                        } else {
                            format!(", reducing {}", reds.join(", "))
                        };
                        let unrolled = if l.unrolled() { ", unrolled by 4" } else { "" };
                        out.push_str(&format!(
                            "{pad}shared loop {}{reds}{unrolled}\n",
                            vars(f, levels)
                        ));
                    }
                    Step::Sequential { levels, steps } => {
                        flush(&mut redundant, out);
                        out.push_str(&format!("{pad}sequential loop {}:\n", vars(f, levels)));
                        go(f, steps, depth + 1, out);
                    }
                    Step::If { accept, reject, .. } => {
                        flush(&mut redundant, out);
                        out.push_str(&format!("{pad}if:\n"));
                        go(f, accept, depth + 1, out);
                        out.push_str(&format!("{pad}else:\n"));
                        go(f, reject, depth + 1, out);
                    }
                }
            }
            flush(&mut redundant, out);
        }
        let mut out = String::new();
        go(f, &self.steps, 0, &mut out);
        if !self.post.is_empty() {
            out.push_str(&format!("first thread: {} statement(s)\n", self.post.len()));
        }
        out
    }

    /// Whether the steps hold a sequential loop or an `if` around shared loops.
    pub fn nested(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::Sequential { .. } | Step::If { .. }))
    }
}

impl Stmt {
    /// A parallel loop whose iterations a block (workgroup) can run as [`GangPhases`]: a body
    /// of statements every thread may run (assignments), vector loops, and sequential loops
    /// and `if`s around vector loops, then optionally more code. `None` where the body has
    /// another shape (see [`Stmt::gang_phases_or_why`]).
    pub fn gang_phases<'a>(&'a self, f: &Function, shared_bytes: u32) -> Option<GangPhases<'a>> {
        self.gang_phases_or_why(f, shared_bytes).ok()
    }

    /// [`Stmt::gang_phases`], or why the loop's iterations do not each take a block (for
    /// ACC_INFO): the statements beside the vector loops must be assignments (of scalars that
    /// are not reduced, or of elements of private arrays) or loops and `if`s of those; a
    /// sequential loop or `if` around vector loops must have the same bounds or condition on
    /// every thread; the loops untiled; the code after the last vector loop free of parallel
    /// loops and of `break` and `continue` out of the gang loop; and the gang's arrays that the
    /// loops use must fit [`GangPhases::shared_arrays`]' rules and the target's `shared_bytes`
    /// ([`crate::plan::Caps::shared_array_bytes`]).
    pub fn gang_phases_or_why<'a>(
        &'a self,
        f: &Function,
        shared_bytes: u32,
    ) -> Result<GangPhases<'a>, String> {
        let Stmt::For {
            schedule: Some(_),
            body,
            reductions,
            private,
            tile,
            ..
        } = self
        else {
            return Err("not a parallel loop".into());
        };
        if !tile.is_empty() {
            // A tiled nest is expanded first (`tile::expand`): its tile loops are the gang loop.
            return Err("a tiled nest".into());
        }
        let last = body
            .iter()
            .rposition(holds_shared_loop)
            .ok_or("no vector loop in the gang loop's body")?;
        let (phased, post) = body.split_at(last + 1);
        let reduced = |l: &LocalId| reductions.iter().any(|r| r.locals().any(|m| m == *l));
        let steps = steps_of(phased, f, &reduced)?;
        // Code after the last loop runs on one thread: it may not leave the gang loop (the
        // block's threads must all reach its barriers), nor hold a parallel loop.
        let mut nested = false;
        walk::for_each_stmt(post, &mut |s| {
            nested |= matches!(
                s,
                Stmt::For {
                    schedule: Some(_),
                    ..
                }
            );
        });
        if nested {
            return Err("a parallel loop follows the vector loop in the gang loop's body".into());
        }
        if leaves_loop(post) {
            return Err(
                "code after the vector loop leaves the gang loop (`break`/`continue`)".into(),
            );
        }
        let mut phases = GangPhases {
            steps,
            post: post.iter().collect(),
            shared_arrays: Vec::new(),
        };
        phases.shared_arrays = shared_arrays(&phases, f, private, shared_bytes)?;
        uniform_bounds(&phases, f)?;
        let mut phases = share_fills(phases, f);
        first_thread_reductions(&mut phases);
        mark_ragged(&mut phases, f);
        let shared = phases.shared_arrays.clone();
        let mut dirty = false;
        let post_follows = !phases.post.is_empty();
        let written = sync::shared_loop_writes(&phases.steps);
        let hazards = sync::Hazards {
            shared: &shared,
            written: &written,
            f,
        };
        let mut steps = place_barriers(
            std::mem::take(&mut phases.steps),
            hazards,
            &mut dirty,
            true,
            post_follows,
        );
        if !shared.is_empty() {
            // The last iteration's threads are done with the gang's shared arrays.
            steps.insert(0, Step::Barrier);
        }
        phases.steps = steps;
        Ok(phases)
    }
}

const NOT_ASSIGNMENTS: &str =
    "code other than assignments comes beside a vector loop in the gang loop's body";

/// Whether `s` is, or holds through sequential loops and `if`s, a loop the block's threads
/// share.
fn holds_shared_loop(s: &Stmt) -> bool {
    is_vector_loop(s)
        || match s {
            Stmt::For {
                schedule: None,
                body,
                ..
            }
            | Stmt::Loop { body } => body.iter().any(holds_shared_loop),
            Stmt::If { accept, reject, .. } => {
                accept.iter().any(holds_shared_loop) || reject.iter().any(holds_shared_loop)
            }
            _ => false,
        }
}

/// Whether every thread may run `s` (its effect is the same run once or by every thread):
/// assignments of locals the gang loop does not reduce, and loops and `if`s of those.
fn redundant(s: &Stmt, reduced: &dyn Fn(&LocalId) -> bool, in_loop: bool) -> bool {
    match s {
        Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } => !reduced(local),
        Stmt::If { accept, reject, .. } => accept
            .iter()
            .chain(reject)
            .all(|s| redundant(s, reduced, in_loop)),
        Stmt::For {
            schedule: None,
            reductions,
            tile,
            body,
            ..
        } if reductions.is_empty() && tile.is_empty() => {
            body.iter().all(|s| redundant(s, reduced, true))
        }
        Stmt::Loop { body } => body.iter().all(|s| redundant(s, reduced, true)),
        Stmt::Break | Stmt::Continue => in_loop,
        _ => false,
    }
}

/// The steps of `b`, a stretch of a gang loop's body that holds shared loops (see
/// [`Stmt::gang_phases_or_why`]), before barriers are placed.
fn steps_of<'a>(
    b: &'a [Stmt],
    f: &Function,
    reduced: &dyn Fn(&LocalId) -> bool,
) -> Result<Vec<Step<'a>>, String> {
    let mut out = Vec::new();
    for s in b {
        if is_vector_loop(s) {
            let mut before = Vec::new();
            let (vector, block_reductions) = shared_loop(s, f, &mut before, reduced);
            // The block trees combine scalars; an array's elements would each need one.
            if let Some(r) = block_reductions
                .iter()
                .find(|r| f.locals[r.local as usize].len.is_some())
            {
                return Err(format!(
                    "the vector loop reduces `{}`, an array, element-wise",
                    f.locals[r.local as usize].name
                ));
            }
            out.extend(before.into_iter().map(Step::Redundant));
            out.push(Step::Shared(SharedLoop {
                vector,
                block_reductions: block_reductions
                    .into_iter()
                    .map(|reduction| BlockReduction {
                        reduction,
                        first_thread_only: false,
                    })
                    .collect(),
                ragged: false,
            }));
            continue;
        }
        match s {
            Stmt::For {
                schedule: None,
                levels,
                body,
                reductions,
                tile,
                ..
            } if holds_shared_loop(s) => {
                if !reductions.is_empty() || !tile.is_empty() {
                    return Err(NOT_ASSIGNMENTS.into());
                }
                out.push(Step::Sequential {
                    levels,
                    steps: steps_of(body, f, reduced)?,
                });
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } if holds_shared_loop(s) => out.push(Step::If {
                cond: *cond,
                accept: steps_of(accept, f, reduced)?,
                reject: steps_of(reject, f, reduced)?,
            }),
            Stmt::Loop { .. } if holds_shared_loop(s) => {
                return Err(
                    "a vector loop is inside a `loop` or `while` of the gang loop's body (only `for` loops and `if`s may hold one)"
                        .into(),
                )
            }
            _ if redundant(s, reduced, false) => out.push(Step::Redundant(s)),
            _ => return Err(NOT_ASSIGNMENTS.into()),
        }
    }
    Ok(out)
}

/// Marks [`BlockReduction::first_thread_only`] where it holds: the iteration's one shared loop,
/// directly in the gang loop's body, reducing into a local the statements before it set.
fn first_thread_reductions(p: &mut GangPhases) {
    if p.loops().len() != 1 {
        return;
    }
    let mut assigned = Vec::new();
    for s in &mut p.steps {
        match s {
            Step::Redundant(Stmt::Assign { local, .. }) => assigned.push(*local),
            Step::Shared(l) => {
                // All of the loop's reductions or none: one into every thread after one into the
                // first thread alone (which ends without a barrier) would reuse the slots the
                // first thread may still be reading. A complex product reduces into every thread.
                let all = l.block_reductions.iter().all(|r| {
                    assigned.contains(&r.reduction.local) && r.reduction.op != ReduceOp::ComplexMul
                });
                for r in &mut l.block_reductions {
                    r.first_thread_only = all;
                }
            }
            _ => {}
        }
    }
}

/// Sets [`SharedLoop::ragged`]: the loops whose bounds read what the iteration's statements
/// loaded from memory, directly or through the locals they set.
fn mark_ragged(p: &mut GangPhases, f: &Function) {
    /// Whether `h` reads memory, directly or through a local in `loaded`.
    fn loads(f: &Function, h: Handle<Expr>, loaded: &HashSet<LocalId>) -> bool {
        match &f.exprs[h] {
            Expr::Load { .. } => true,
            Expr::Local(l) => loaded.contains(l),
            Expr::LocalElem { local, index } => loaded.contains(local) || loads(f, *index, loaded),
            Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => loads(f, *a, loaded),
            Expr::Binary(_, a, b) | Expr::NestedIndex { element: a, sub: b } => {
                loads(f, *a, loaded) || loads(f, *b, loaded)
            }
            Expr::Select {
                cond,
                accept,
                reject,
            } => [cond, accept, reject].iter().any(|x| loads(f, **x, loaded)),
            Expr::Math(_, args) => args.iter().any(|a| loads(f, *a, loaded)),
            Expr::Literal(_) | Expr::Param(_) | Expr::Len(_) | Expr::GangIndex => false,
        }
    }
    let mut stmts = Vec::new();
    redundant_stmts(&p.steps, &mut stmts);
    let mut loaded = HashSet::new();
    loop {
        let before = loaded.len();
        for s in &stmts {
            if let Stmt::Assign { local, value } = s {
                if loads(f, *value, &loaded) {
                    loaded.insert(*local);
                }
            }
        }
        if loaded.len() == before {
            break;
        }
    }
    fn mark(steps: &mut [Step], f: &Function, loaded: &HashSet<LocalId>) {
        for s in steps {
            match s {
                Step::Shared(l) => {
                    if let Stmt::For { levels, .. } = &*l.vector {
                        l.ragged = levels
                            .iter()
                            .any(|lv| [lv.start, lv.trips].iter().any(|&h| loads(f, h, loaded)));
                    }
                }
                Step::Sequential { steps, .. } => mark(steps, f, loaded),
                Step::If { accept, reject, .. } => {
                    mark(accept, f, loaded);
                    mark(reject, f, loaded);
                }
                Step::Redundant(_) | Step::Barrier => {}
            }
        }
    }
    mark(&mut p.steps, f, &loaded);
}

/// How an index expression changes as a loop's variable grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Growth {
    /// It does not read the variable or anything that changes with it.
    Constant,
    /// It never decreases (`v / 32`).
    Monotone,
    /// It grows strictly (`v`, `v * 33 + c`, `v + v / 32`).
    Strict,
    /// Anything else.
    Unknown,
}

/// How `e` grows with `var`, where `changing` holds the locals assigned in the loop's body
/// (values that may differ between iterations). Integer arithmetic is taken without
/// overflow, as indices within a private array that fits a block's shared memory are.
fn increasing(f: &Function, e: Handle<Expr>, var: LocalId, changing: &HashSet<LocalId>) -> Growth {
    use Growth::*;
    let positive =
        |h: Handle<Expr>| matches!(f.exprs[h], Expr::Literal(Literal::Int(_, v)) if v > 0);
    match &f.exprs[e] {
        Expr::Local(l) if *l == var => Strict,
        Expr::Cast(x, t) if t.is_int() && t.size() >= 4 => increasing(f, *x, var, changing),
        Expr::Binary(BinaryOp::Add, a, b) => {
            match (
                increasing(f, *a, var, changing),
                increasing(f, *b, var, changing),
            ) {
                (Unknown, _) | (_, Unknown) => Unknown,
                (Strict, _) | (_, Strict) => Strict,
                (Monotone, _) | (_, Monotone) => Monotone,
                _ => Constant,
            }
        }
        Expr::Binary(BinaryOp::Sub, a, b) => match increasing(f, *b, var, changing) {
            Constant => increasing(f, *a, var, changing),
            _ => Unknown,
        },
        Expr::Binary(BinaryOp::Mul, a, b) if positive(*b) => increasing(f, *a, var, changing),
        Expr::Binary(BinaryOp::Mul, a, b) if positive(*a) => increasing(f, *b, var, changing),
        Expr::Binary(BinaryOp::Div, a, b) if positive(*b) => match increasing(f, *a, var, changing)
        {
            Strict | Monotone => Monotone,
            g => g,
        },
        _ => {
            let mut read = HashSet::new();
            walk::locals_read(f, e, &mut read);
            if read.contains(&var) || read.iter().any(|l| changing.contains(l)) {
                Unknown
            } else {
                Constant
            }
        }
    }
}

/// The array a fill loop sets (`let t = [v; n]` of a long array, see
/// [`KernelBuilder::fill`](super::builder::KernelBuilder::fill)): a sequential loop whose body
/// only sets the element its variable indexes (or that loop made a vector loop by
/// [`Stmt::gang_phases`]).
pub fn fill_of(f: &Function, s: &Stmt) -> Option<LocalId> {
    match s {
        Stmt::For {
            levels,
            schedule:
                None
                | Some(Schedule {
                    gang: false,
                    worker: false,
                    vector: true,
                }),
            reductions,
            tile,
            body,
            ..
        } if reductions.is_empty() && tile.is_empty() => match (levels.as_slice(), body.as_slice())
        {
            (
                [lv],
                [Stmt::AssignElem {
                    local,
                    index,
                    value,
                }],
            ) if f.exprs[*index] == Expr::Local(lv.var) && {
                let mut read = HashSet::new();
                walk::locals_read(f, *value, &mut read);
                !read.contains(&lv.var) && !read.contains(local)
            } =>
            {
                Some(*local)
            }
            _ => None,
        },
        _ => None,
    }
}

/// `p` with the fills of its shared arrays among the redundant statements made loops of their
/// own that the block's threads share (each thread setting its elements), rather than every
/// thread setting every element.
fn share_fills<'a>(mut p: GangPhases<'a>, f: &Function) -> GangPhases<'a> {
    fn go<'a>(steps: Vec<Step<'a>>, f: &Function, shared: &[LocalId]) -> Vec<Step<'a>> {
        steps
            .into_iter()
            .map(|s| match s {
                Step::Redundant(
                    st @ Stmt::For {
                        levels,
                        reductions,
                        private,
                        tile,
                        body,
                        ..
                    },
                ) if fill_of(f, st).is_some_and(|l| shared.contains(&l)) => {
                    Step::Shared(SharedLoop {
                        vector: Cow::Owned(Stmt::For {
                            levels: levels.clone(),
                            schedule: Some(Schedule {
                                gang: false,
                                worker: false,
                                vector: true,
                            }),
                            reductions: reductions.clone(),
                            private: private.clone(),
                            tile: tile.clone(),
                            body: body.clone(),
                        }),
                        block_reductions: Vec::new(),
                        ragged: false,
                    })
                }
                Step::Sequential { levels, steps } => Step::Sequential {
                    levels,
                    steps: go(steps, f, shared),
                },
                Step::If {
                    cond,
                    accept,
                    reject,
                } => Step::If {
                    cond,
                    accept: go(accept, f, shared),
                    reject: go(reject, f, shared),
                },
                other => other,
            })
            .collect()
    }
    let shared = p.shared_arrays.clone();
    p.steps = go(std::mem::take(&mut p.steps), f, &shared);
    p
}

/// The redundant statements of `steps`, at every depth.
fn redundant_stmts<'s>(steps: &'s [Step], out: &mut Vec<&'s Stmt>) {
    for s in steps {
        match s {
            Step::Redundant(st) => out.push(st),
            Step::Sequential { steps, .. } => redundant_stmts(steps, out),
            Step::If { accept, reject, .. } => {
                redundant_stmts(accept, out);
                redundant_stmts(reject, out);
            }
            Step::Shared(_) | Step::Barrier => {}
        }
    }
}

/// The arrays of the gang iteration its vector loops share (see [`GangPhases::shared_arrays`]),
/// or why the iteration cannot run on a block: an array that a loop writes other than at
/// elements of its own iterations (two threads could write one element), that one loop shares
/// and another makes private, or arrays beyond the target's `shared_bytes`.
fn shared_arrays(
    p: &GangPhases,
    f: &Function,
    gang_private: &[LocalId],
    shared_bytes: u32,
) -> Result<Vec<LocalId>, String> {
    // The iteration's own arrays: set by its gang-redundant code or private to the gang loop.
    let mut own: BTreeSet<LocalId> = gang_private
        .iter()
        .copied()
        .filter(|l| f.locals[*l as usize].len.is_some())
        .collect();
    let mut outside = Vec::new();
    redundant_stmts(&p.steps, &mut outside);
    outside.extend(p.post.iter().copied());
    for s in outside {
        walk::for_each_stmt(std::slice::from_ref(s), &mut |s| {
            if let Stmt::AssignElem { local, .. } = s {
                own.insert(*local);
            }
        });
    }
    let name = |l: LocalId| f.locals[l as usize].name.clone();
    let (mut shared, mut kept) = (BTreeSet::new(), BTreeSet::new());
    for l in p.loops() {
        let Stmt::For {
            levels,
            private,
            reductions,
            body,
            ..
        } = &*l.vector
        else {
            continue;
        };
        for l in walk::arrays_used(f, body) {
            if !own.contains(&l) {
                continue; // declared in the loop's body: each thread's own
            }
            if private.contains(&l) || reductions.iter().any(|r| r.local == l) {
                kept.insert(l);
                continue;
            }
            // Each iteration may write only elements no other iteration writes: an index that
            // grows strictly with the loop's variable, whatever else it reads is the same for
            // every iteration.
            // (The variables of loops inside it change within an iteration too.)
            let mut changing: HashSet<LocalId> = HashSet::new();
            walk::for_each_stmt(body, &mut |s| match s {
                Stmt::Assign { local, .. } => {
                    changing.insert(*local);
                }
                Stmt::For { levels, .. } => changing.extend(levels.iter().map(|lv| lv.var)),
                Stmt::Atomic { old, new, .. } => changing.extend(old.iter().chain(new)),
                _ => {}
            });
            let mut distinct = true;
            walk::for_each_stmt(body, &mut |s| {
                if let Stmt::AssignElem { local, index, .. } = s {
                    if *local == l {
                        distinct &= matches!(levels.as_slice(), [lv] if increasing(f, *index, lv.var, &changing) == Growth::Strict);
                    }
                }
            });
            if !distinct {
                return Err(format!(
                    "the gang's array `{}` is written by a vector loop at elements that do not follow its iterations",
                    name(l)
                ));
            }
            shared.insert(l);
        }
    }
    if let Some(l) = shared.intersection(&kept).next() {
        return Err(format!(
            "the gang's array `{}` is shared by one vector loop and private to another",
            name(*l)
        ));
    }
    let bytes: u32 = shared
        .iter()
        .map(|&l| {
            let local = &f.locals[l as usize];
            local.ty.size().max(4) * local.len.unwrap_or(0)
        })
        .sum();
    if bytes > shared_bytes {
        return Err(format!(
            "the gang's arrays its vector loops share take {bytes} bytes, more than the {shared_bytes} a block may hold in shared memory"
        ));
    }
    Ok(shared.into_iter().collect())
}

/// A vector (or worker) loop, untiled, that a block's threads may share.
fn is_vector_loop(s: &Stmt) -> bool {
    matches!(s, Stmt::For { schedule: Some(inner), tile, .. } if (inner.vector || inner.worker) && tile.is_empty())
}

/// The loop the block's threads share for `s` (a worker loop over a vector loop collapsed,
/// its invariant assignments moved to `before`), with its reductions into locals of the
/// iteration (those the gang loop does not reduce).
fn shared_loop<'a>(
    s: &'a Stmt,
    f: &Function,
    before: &mut Vec<&'a Stmt>,
    reduced: &dyn Fn(&LocalId) -> bool,
) -> (Cow<'a, Stmt>, Vec<Reduction>) {
    let vector = match worker_over_vector(s, f) {
        Some((nest, invariant)) => {
            // Assignments of the worker body that do not change with its iterations (the
            // vector loop's bounds among them) run before the nest, with the gang's.
            before.extend(invariant);
            Cow::Owned(nest)
        }
        None => Cow::Borrowed(s),
    };
    let block_reductions = match &*vector {
        Stmt::For { reductions, .. } => reductions
            .iter()
            .filter(|r| !reduced(&r.local))
            .copied()
            .collect(),
        _ => Vec::new(),
    };
    (vector, block_reductions)
}

/// A worker loop whose body is scalar assignments then a vector loop whose bounds depend on
/// neither, as one collapsed nest of the two levels (the assignments repeated per vector
/// iteration, as they compute the same values): the block's threads then share both levels,
/// adjacent threads taking adjacent vector iterations (3.3 sections 2.9.3 and 2.9.4). `None`
/// for other shapes.
fn worker_over_vector<'a>(s: &'a Stmt, f: &Function) -> Option<(Stmt, Vec<&'a Stmt>)> {
    let Stmt::For {
        levels: wl,
        schedule: Some(ws),
        reductions: wr,
        private: wp,
        tile: wt,
        body: wb,
    } = s
    else {
        return None;
    };
    if ws.vector || !ws.worker || !wt.is_empty() {
        return None;
    }
    let (last, pre) = wb.split_last()?;
    let Stmt::For {
        levels: vl,
        schedule: Some(vs),
        reductions: vr,
        private: vp,
        tile: vt,
        body: vb,
    } = last
    else {
        return None;
    };
    if !vs.vector || !vt.is_empty() || !pre.iter().all(|s| matches!(s, Stmt::Assign { .. })) {
        return None;
    }
    // What changes from one worker iteration to the next: its variables, and the locals the
    // assignments compute from them (a trip count hoisted from the range is not one of them).
    let mut varying: Vec<LocalId> = wl.iter().map(|l| l.var).collect();
    let (mut per_iteration, mut invariant) = (Vec::new(), Vec::new());
    for s in pre {
        if let Stmt::Assign { local, value } = s {
            let mut read = HashSet::new();
            walk::locals_read(f, *value, &mut read);
            // A local assigned twice in the body, one that reads itself (an accumulation) and
            // a reduced one are taken as changing too.
            let reduced = wr.iter().chain(vr).any(|r| r.locals().any(|m| m == *local));
            if read.iter().any(|l| varying.contains(l))
                || read.contains(local)
                || reduced
                || pre
                    .iter()
                    .filter(|t| matches!(t, Stmt::Assign { local: l, .. } if l == local))
                    .count()
                    > 1
            {
                varying.push(*local);
                per_iteration.push(s.clone());
            } else {
                invariant.push(s);
            }
        }
    }
    if !bounds_independent(f, vl, &varying) {
        return None;
    }
    let nest = Stmt::For {
        levels: wl.iter().chain(vl).cloned().collect(),
        schedule: Some(Schedule {
            gang: false,
            worker: true,
            vector: true,
        }),
        reductions: wr
            .iter()
            .chain(vr.iter().filter(|r| !wr.iter().any(|w| w.local == r.local)))
            .copied()
            .collect(),
        private: wp.iter().chain(vp).copied().collect(),
        tile: Vec::new(),
        body: per_iteration
            .into_iter()
            .chain(vb.iter().cloned())
            .collect(),
    };
    Some((nest, invariant))
}

/// Whether the bounds of `levels` read none of `locals` (a rectangular nest).
pub fn bounds_independent(f: &Function, levels: &[LoopLevel], locals: &[LocalId]) -> bool {
    let mut read = HashSet::new();
    for lv in levels {
        for h in [lv.start, lv.step, lv.trips] {
            walk::locals_read(f, h, &mut read);
        }
    }
    !locals.iter().any(|l| read.contains(l))
}

/// Whether `b` has a `break` or `continue` that is not inside one of its own loops.
fn leaves_loop(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::Break | Stmt::Continue => true,
        Stmt::If { accept, reject, .. } => leaves_loop(accept) || leaves_loop(reject),
        _ => false,
    })
}
