//! How a kernel's code splits into entry points, and in what order the host launches them: the
//! part of the kernel plan every GPU backend shares, decided once here (the backends write each
//! [`Entry`] in their syntax; their runtimes launch what [`Program::run`] says).
//!
//! A region of parallel loops with only scalar assignments before them is one grid entry point
//! per loop, each thread running the assignments first (its prelude). Any other region is
//! *segmented*: its scalar locals live in a buffer between entry points, each run of other code
//! is an entry point of one thread (but for assignments only the next loop reads, which its
//! threads run as their prelude), and a grid loop's reductions into region locals are folded, in
//! block order, by an entry point of one thread after it (3.3 section 2.9.11).
//!
//! A sequential loop whose body holds parallel loops (a time loop: `for t in 0..steps { for i
//! .. }`) is driven by the host when its trip count is known there ([`host_loops`]): the entry
//! points of its body are launched once per iteration ([`Op::Repeat`]), every parallel loop
//! spread over the whole grid, instead of the loop running on one thread. The launches of one
//! iteration follow those of the one before on the device's queue, so each iteration sees what
//! the one before wrote, as on the host.

use std::collections::{BTreeSet, HashMap};

use super::args::{KernelArg, ReductionSlot};
use super::eval::{wrap, Eval};
use super::*;

pub mod host_loops;

/// A kernel split into entry points.
#[derive(Clone, Debug)]
pub struct Segments {
    /// Whether the region's scalar locals live in a buffer between entry points
    /// ([`Kernel::needs_segments`]).
    pub segmented: bool,
    /// The entry points, in the order they first run.
    pub entries: Vec<Entry>,
    /// The slots of the parallel loops' reductions (each with its entry point), in order.
    pub reductions: Vec<ReductionSlot>,
    /// The compute-level reductions whose result comes from a grid entry's partials (the
    /// others, [`super::args::sequential_reduction_slots`], come from the locals buffer).
    pub reduced_in_loops: BTreeSet<LocalId>,
    /// The host loops' variables the device reads, which each launch takes as arguments (in
    /// this order); entry points start by setting them from those arguments.
    pub host_vars: Vec<LocalId>,
    /// The order in which the host launches the entry points.
    pub program: Program,
}

/// An entry point.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// One thread runs these statements (code outside the parallel loops), with the region's
    /// scalar locals loaded from the locals buffer first and stored back last.
    Single(Vec<Stmt>),
    /// The grid runs the parallel loop `looped`, every thread first running the scalar
    /// assignments of `prelude` (in a segmented region, after loading the locals: assignments
    /// only this loop reads, `Split::take_prelude`); its reductions write their per-block
    /// partials to the given slots of [`Segments::reductions`].
    Grid {
        prelude: Vec<Stmt>,
        looped: Stmt,
        slots: Vec<usize>,
    },
    /// One thread folds the partials of these slots, in block order, into their locals
    /// (reductions into region locals, and those of loops a host loop repeats or a branch the
    /// host decides holds).
    Fold(Vec<(usize, Reduction)>),
}

impl Entry {
    /// Whether the entry runs on one thread.
    pub fn single(&self) -> bool {
        !matches!(self, Entry::Grid { .. })
    }
}

impl Segments {
    /// Splits `k` into entry points. `Err` names what no entry point can hold yet.
    pub fn new(k: &Kernel) -> Result<Segments, String> {
        let types = validate::expr_types(k).map_err(|e| format!("invalid kernel IR: {e}"))?;
        Segments::with_types(k, &types)
    }

    /// [`Segments::new`] of a kernel whose expression types the validator gave already
    /// ([`crate::plan::prepare`] computes them once).
    pub fn with_types(k: &Kernel, types: &[Scalar]) -> Result<Segments, String> {
        let segmented = k.needs_segments();
        let mut reads = HashMap::new();
        count_reads(&k.function, &k.function.body, &mut reads);
        let mut b = Split {
            host_vars: Vec::new(),
            reads,
            kernel: k,
            segmented,
            plan: host_loops::HostLoops::with_types(k, types.to_vec()),
            prelude: Vec::new(),
            entries: Vec::new(),
            reductions: Vec::new(),
            reduced_in_loops: BTreeSet::new(),
            pending: Vec::new(),
        };
        let mut ops = Vec::new();
        b.block(&k.function.body, &mut ops)?;
        b.flush(&mut ops);
        if b.entries.is_empty() {
            // A region with nothing to run still has an entry point (it may have a value).
            b.entries.push(Entry::Single(Vec::new()));
            ops.push(Op::Launch(0));
        }
        let program = Program {
            kernel: k.clone(),
            types: types.to_vec(),
            ops,
            host_vars: b.host_vars.clone(),
        };
        Ok(Segments {
            segmented,
            entries: b.entries,
            reductions: b.reductions,
            reduced_in_loops: b.reduced_in_loops,
            host_vars: b.host_vars,
            program,
        })
    }
}

struct Split<'k> {
    host_vars: Vec<LocalId>,
    /// How many statements of the kernel read each local.
    reads: HashMap<LocalId, usize>,
    kernel: &'k Kernel,
    segmented: bool,
    plan: host_loops::HostLoops,
    prelude: Vec<Stmt>,
    entries: Vec<Entry>,
    reductions: Vec<ReductionSlot>,
    reduced_in_loops: BTreeSet<LocalId>,
    /// Code outside the parallel loops not yet in an entry point.
    pending: Vec<Stmt>,
}

impl Split<'_> {
    fn flush(&mut self, ops: &mut Vec<Op>) {
        if !self.pending.is_empty() {
            ops.push(Op::Launch(self.entries.len()));
            self.entries
                .push(Entry::Single(std::mem::take(&mut self.pending)));
        }
    }

    fn block(&mut self, stmts: &[Stmt], ops: &mut Vec<Op>) -> Result<(), String> {
        for s in stmts {
            match s {
                Stmt::Assign { local, value } if !self.segmented => {
                    self.prelude.push(s.clone());
                    ops.push(Op::Set {
                        local: *local,
                        value: *value,
                    });
                }
                Stmt::For {
                    schedule: Some(_), ..
                } => {
                    let prelude = if self.segmented {
                        self.take_prelude(s)
                    } else {
                        self.prelude.clone()
                    };
                    self.flush(ops);
                    self.grid(prelude, s, ops)?;
                }
                Stmt::For { levels, body, .. } if self.plan.driven(s) => {
                    self.host_loop(&levels[0], body, ops)?;
                }
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } if self.plan.decided(s) => {
                    self.flush(ops);
                    let (mut yes, mut no) = (Vec::new(), Vec::new());
                    self.block(accept, &mut yes)?;
                    self.flush(&mut yes);
                    self.block(reject, &mut no)?;
                    self.flush(&mut no);
                    ops.push(Op::Branch {
                        cond: *cond,
                        accept: yes,
                        reject: no,
                    });
                }
                Stmt::Assign { local, value } => {
                    self.pending.push(s.clone());
                    ops.push(Op::Set {
                        local: *local,
                        value: *value,
                    });
                }
                other => {
                    self.pending.push(other.clone());
                    let mut written = Vec::new();
                    written_locals(std::slice::from_ref(other), &mut written);
                    if !written.is_empty() {
                        ops.push(Op::Forget(written));
                    }
                }
            }
        }
        Ok(())
    }

    /// The assignments at the end of the pending code that only parallel loop `s` reads: every
    /// thread of its grid runs them instead of one thread before it (a loop's bounds, `let n =
    /// ..` before it), saving a launch. Each is the only assignment of its local, reads no
    /// array and no gang index (the same value on every thread as on one), and no statement
    /// but these and the loop reads its local (a grid entry point does not store locals).
    fn take_prelude(&mut self, s: &Stmt) -> Vec<Stmt> {
        let mut within = HashMap::new();
        count_reads(&self.kernel.function, std::slice::from_ref(s), &mut within);
        let mut run = Vec::new();
        while let Some(Stmt::Assign { local, value }) = self.pending.last() {
            let (local, value) = (*local, *value);
            let f = &self.kernel.function;
            let movable = self.plan.writes(local) == 1
                && !self.plan.vars().contains(&local)
                && self.kernel.result != Some(local)
                && !self
                    .kernel
                    .reductions
                    .iter()
                    .any(|(r, _)| r.locals().any(|m| m == local))
                && f.locals[local as usize].len.is_none()
                && same_on_every_thread(f, value)
                && self.reads.get(&local).copied().unwrap_or(0)
                    == within.get(&local).copied().unwrap_or(0);
            if !movable {
                break;
            }
            let st = self.pending.pop().expect("the last pending statement");
            count_reads(f, std::slice::from_ref(&st), &mut within);
            run.push(st);
        }
        run.reverse();
        run
    }

    /// Drops the assignments at the end of the pending code whose locals only the range of host
    /// loop `lv` reads (its bounds, which the host computes itself: [`Op::Set`]).
    fn drop_host_only(&mut self, lv: &LoopLevel) {
        let mut within = HashMap::new();
        let f = &self.kernel.function;
        for h in [lv.start, lv.step, lv.trips] {
            let mut read = std::collections::HashSet::new();
            walk::locals_read(f, h, &mut read);
            for l in read {
                *within.entry(l).or_insert(0usize) += 1;
            }
        }
        // (The loop statement reads each of them once, whatever the number of its exprs.)
        for n in within.values_mut() {
            *n = 1;
        }
        while let Some(Stmt::Assign { local, value }) = self.pending.last() {
            let (local, value) = (*local, *value);
            let host_only = self.plan.writes(local) == 1
                && self.kernel.result != Some(local)
                && !self
                    .kernel
                    .reductions
                    .iter()
                    .any(|(r, _)| r.locals().any(|m| m == local))
                && f.locals[local as usize].len.is_none()
                && same_on_every_thread(f, value)
                && self.reads.get(&local).copied().unwrap_or(0)
                    == within.get(&local).copied().unwrap_or(0);
            if !host_only {
                break;
            }
            self.pending.pop();
        }
    }

    /// A grid entry point for parallel loop `s`, and the fold of its reductions into region
    /// locals after it.
    fn grid(&mut self, prelude: Vec<Stmt>, s: &Stmt, ops: &mut Vec<Op>) -> Result<(), String> {
        let Stmt::For {
            levels,
            reductions: reds,
            tile,
            ..
        } = s
        else {
            return Ok(());
        };
        let n = self.entries.len();
        let (mut slots, mut on_device) = (Vec::new(), Vec::new());
        for r in reds {
            let local = &self.kernel.function.locals[r.local as usize];
            // A compute-level reduction that a repeated loop reduces folds its partials on the
            // device after each launch, into the local whose final value is then the result.
            let into = self
                .kernel
                .reductions
                .iter()
                .find(|(kr, _)| kr.local == r.local)
                .map(|(_, p)| *p)
                .filter(|_| !self.plan.folded(r.local));
            if into.is_none() {
                if local.len.is_some() {
                    return Err(format!(
                        "an array reduction into `{}`, an array local to the region (not yet)",
                        local.name
                    ));
                }
                on_device.push((self.reductions.len(), *r));
            }
            slots.push(self.reductions.len());
            self.reductions.push(ReductionSlot {
                op: r.op,
                ty: local.ty,
                into,
                entry: Some(n),
                local_offset: 0,
                imag_offset: 0,
                // A complex product's partials are pairs of parts.
                len: if r.op == ReduceOp::ComplexMul {
                    2
                } else {
                    local.len.unwrap_or(1)
                },
            });
            if !self.plan.folded(r.local) {
                self.reduced_in_loops.insert(r.local);
            }
        }
        self.entries.push(Entry::Grid {
            prelude,
            looped: s.clone(),
            slots,
        });
        ops.push(Op::Grid {
            entry: n,
            trips: levels.iter().map(|l| l.trips).collect(),
            tile: tile.clone(),
        });
        if !on_device.is_empty() {
            ops.push(Op::Launch(self.entries.len()));
            self.entries.push(Entry::Fold(on_device));
        }
        let mut written = reds.iter().map(|r| r.local).collect();
        written_locals(std::slice::from_ref(s), &mut written);
        ops.push(Op::Forget(written));
        Ok(())
    }

    /// A sequential loop the host drives: its body's entry points once per iteration, each
    /// launch bringing the loop's variable where the device reads it ([`Segments::host_vars`]).
    fn host_loop(
        &mut self,
        lv: &LoopLevel,
        body: &[Stmt],
        ops: &mut Vec<Op>,
    ) -> Result<(), String> {
        if self.plan.var_used(lv.var) {
            self.host_vars.push(lv.var);
        }
        self.drop_host_only(lv);
        self.flush(ops);
        let mut inner = Vec::new();
        self.block(body, &mut inner)?;
        self.flush(&mut inner);
        ops.push(Op::Repeat {
            var: lv.var,
            start: lv.start,
            step: lv.step,
            trips: lv.trips,
            line: lv.line,
            body: inner,
        });
        Ok(())
    }
}

/// Adds to `out`, for each local, how many of the statements (nested ones included) read it.
fn count_reads(f: &Function, b: &[Stmt], out: &mut HashMap<LocalId, usize>) {
    walk::for_each_stmt(b, &mut |s| {
        let mut read = std::collections::HashSet::new();
        for h in walk::stmt_exprs(s) {
            walk::locals_read(f, h, &mut read);
        }
        if let Stmt::Atomic { op, .. } = s {
            read.extend(op.combine_local());
        }
        for l in read {
            *out.entry(l).or_insert(0) += 1;
        }
    });
}

/// Whether expression `h` has the same value on every thread of a grid as on one thread before
/// it: it reads no array (which the grid's loop may be writing) and no gang index.
fn same_on_every_thread(f: &Function, h: Handle<Expr>) -> bool {
    match &f.exprs[h] {
        Expr::Load { .. } | Expr::LocalElem { .. } | Expr::GangIndex => false,
        Expr::Literal(_) | Expr::Param(_) | Expr::Local(_) | Expr::Len(_) => true,
        Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => same_on_every_thread(f, *a),
        Expr::Binary(_, a, b) | Expr::NestedIndex { element: a, sub: b } => {
            same_on_every_thread(f, *a) && same_on_every_thread(f, *b)
        }
        Expr::Select {
            cond,
            accept,
            reject,
        } => [cond, accept, reject]
            .iter()
            .all(|h| same_on_every_thread(f, **h)),
        Expr::Math(_, args) => args.iter().all(|h| same_on_every_thread(f, *h)),
    }
}

/// Adds the scalar locals the statements may write to `out`.
fn written_locals(b: &[Stmt], out: &mut Vec<LocalId>) {
    walk::for_each_stmt(b, &mut |s| match s {
        Stmt::Assign { local, .. } => out.push(*local),
        Stmt::For {
            levels, reductions, ..
        } => {
            out.extend(levels.iter().map(|l| l.var));
            out.extend(reductions.iter().map(|r| r.local));
        }
        Stmt::Atomic { old, new, op, .. } => out.extend(
            old.iter()
                .chain(new.iter())
                .chain(op.combine_local().iter()),
        ),
        _ => {}
    });
}

/// The order in which the host launches a kernel's entry points, with what it keeps track of
/// to size each grid and to count the host loops' iterations.
#[derive(Clone, Debug)]
pub struct Program {
    kernel: Kernel,
    types: Vec<Scalar>,
    ops: Vec<Op>,
    host_vars: Vec<LocalId>,
}

/// What [`Program::run`] calls for each launch: entry point, iteration count, host values; its
/// error type is the runtime's, which holds a [`HostValueError`].
pub type LaunchFn<'a, E> = dyn FnMut(usize, Option<u64>, &[i128]) -> Result<(), E> + 'a;

/// A value the host computes to drive a [`Program`] (a branch's condition, a host loop's range)
/// could not be computed: an overflow or a division by zero. The message says where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostValueError(pub String);

impl std::fmt::Display for HostValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HostValueError {}

/// One step of a [`Program`].
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Launch a one-thread entry point.
    Launch(usize),
    /// Launch a grid entry point, whose loop has these trip counts (of each collapsed level)
    /// and tile sizes.
    Grid {
        entry: usize,
        trips: Vec<Handle<Expr>>,
        tile: Vec<u32>,
    },
    /// The device sets `local` to `value`: the host computes it too where it can.
    Set { local: LocalId, value: Handle<Expr> },
    /// The device may change these locals in ways the host does not follow.
    Forget(Vec<LocalId>),
    /// An `if` the host decides: the launches of the branch `cond` picks.
    Branch {
        cond: Handle<Expr>,
        accept: Vec<Op>,
        reject: Vec<Op>,
    },
    /// A host loop: `body` once per iteration, `var` taking `start + k * step`.
    Repeat {
        var: LocalId,
        start: Handle<Expr>,
        step: Handle<Expr>,
        trips: Handle<Expr>,
        line: u32,
        body: Vec<Op>,
    },
}

impl Program {
    /// Its steps.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The launches as an outline, one line each (for golden files and dumps): `entry N
    /// (one thread)`, `entry N (grid)`, and `repeat <var>` with the launches of each
    /// iteration indented.
    pub fn outline(&self) -> String {
        fn lines(p: &Program, ops: &[Op], depth: usize, out: &mut String) {
            let pad = "  ".repeat(depth);
            for op in ops {
                match op {
                    Op::Launch(e) => out.push_str(&format!("{pad}entry {e} (one thread)\n")),
                    Op::Grid { entry, .. } => out.push_str(&format!("{pad}entry {entry} (grid)\n")),
                    Op::Repeat { var, body, .. } => {
                        let name = &p.kernel.function.locals[*var as usize].name;
                        out.push_str(&format!("{pad}repeat `{name}`:\n"));
                        lines(p, body, depth + 1, out);
                    }
                    Op::Branch { accept, reject, .. } => {
                        out.push_str(&format!("{pad}if:\n"));
                        lines(p, accept, depth + 1, out);
                        out.push_str(&format!("{pad}else:\n"));
                        lines(p, reject, depth + 1, out);
                    }
                    Op::Set { .. } | Op::Forget(_) => {}
                }
            }
        }
        let mut out = String::new();
        lines(self, &self.ops, 0, &mut out);
        out
    }

    /// How many host values each launch takes ([`Segments::host_vars`]).
    pub fn host_vars(&self) -> usize {
        self.host_vars.len()
    }

    /// Host value `n`'s variable: its name and type.
    pub fn host_var(&self, n: usize) -> Option<(&str, Scalar)> {
        let l = self
            .kernel
            .function
            .locals
            .get(*self.host_vars.get(n)? as usize)?;
        Some((&l.name, l.ty))
    }

    /// Whether it repeats launches (has a host loop).
    pub fn repeats(&self) -> bool {
        self.ops.iter().any(|o| matches!(o, Op::Repeat { .. }))
    }

    /// Calls `launch(entry, iterations, host values)` for each launch with these arguments, in
    /// order: `iterations` is a grid entry's iteration count where the host knows it (a hint
    /// for sizing its grid), `None` otherwise and for one-thread entries; the host values are
    /// those of [`Segments::host_vars`] at that launch (wrapped to their types; 0 before their
    /// loop starts, the last value after it). Stops at the first error `launch` gives; an error too where a host loop's trip
    /// count cannot be computed.
    pub fn run<E: From<HostValueError>>(
        &self,
        args: &[KernelArg<'_>],
        launch: &mut LaunchFn<'_, E>,
    ) -> Result<(), E> {
        let mut env = Eval {
            k: &self.kernel,
            args,
            types: &self.types,
            locals: super::eval::Locals::new(self.kernel.function.locals.len()),
        };
        let mut values = vec![0i128; self.host_vars.len()];
        self.steps(&self.ops, &mut env, &mut values, launch)
    }

    fn steps<E: From<HostValueError>>(
        &self,
        ops: &[Op],
        env: &mut Eval<'_, '_>,
        values: &mut Vec<i128>,
        launch: &mut LaunchFn<'_, E>,
    ) -> Result<(), E> {
        for op in ops {
            match op {
                Op::Launch(e) => launch(*e, None, values)?,
                Op::Grid { entry, trips, tile } => {
                    let mut total = Some(1u64);
                    for (i, t) in trips.iter().enumerate() {
                        let t = env.expr(*t).and_then(|t| u64::try_from(t).ok());
                        let t =
                            t.map(|t| tile.get(i).map_or(t, |&s| t.div_ceil(u64::from(s.max(1)))));
                        total = total.zip(t).and_then(|(a, b)| a.checked_mul(b));
                    }
                    launch(*entry, total, values)?;
                }
                Op::Set { local, value } => match env.expr(*value) {
                    Some(v) => {
                        env.locals.insert(*local, v);
                    }
                    None => {
                        env.locals.remove(local);
                    }
                },
                Op::Forget(ls) => {
                    for l in ls {
                        env.locals.remove(l);
                    }
                }
                Op::Branch {
                    cond,
                    accept,
                    reject,
                } => {
                    let taken = env.expr(*cond).ok_or_else(|| {
                        HostValueError(format!(
                            "a condition in `{}` could not be computed on the host (an overflow or a division by zero)",
                            self.kernel.name
                        ))
                    })?;
                    let branch = if taken != 0 { accept } else { reject };
                    self.steps(branch, env, values, launch)?;
                }
                Op::Repeat {
                    var,
                    start,
                    step,
                    trips,
                    line,
                    body,
                } => {
                    let unknown = || {
                        HostValueError(format!(
                            "the sequential loop at line {line} of `{}`: its range could not be computed on the host (an overflow or a division by zero)",
                            self.kernel.name
                        ))
                    };
                    let n = env.expr(*trips).ok_or_else(unknown)?;
                    let (first, step) = (
                        env.expr(*start).ok_or_else(unknown)?,
                        env.expr(*step).ok_or_else(unknown)?,
                    );
                    let ty = self.kernel.function.locals[*var as usize].ty;
                    let slot = self.host_vars.iter().position(|v| v == var);
                    for k in 0..n.max(0) {
                        let v = wrap(ty, first.wrapping_add(k.wrapping_mul(step)));
                        env.locals.insert(*var, v);
                        if let Some(at) = slot {
                            values[at] = v;
                        }
                        self.steps(body, env, values, launch)?;
                    }
                    env.locals.remove(var);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
