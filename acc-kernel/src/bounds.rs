//! Proves, on the host before a launch, that every array access of a kernel is in bounds for
//! the launch's arguments: interval arithmetic over the integer expressions, with loop
//! variables ranging over their loops. A backend may then skip what only the bounds checks
//! need (docs/guide/regions.md: an out-of-range index panics at the launching call), such as waiting
//! for the kernel to read its status. The proof is conservative: a value it cannot bound (a
//! load, a float, a local assigned more than once, arithmetic that may wrap) makes it fail,
//! never succeed wrongly.

use super::args::{KernelArg, ScalarValue};
use super::{
    BinaryOp, Block, Expr, Handle, Kernel, Literal, LocalId, MathFn, ParamId, ParamKind, Scalar,
    Stmt, UnaryOp,
};

/// Whether every access of `kernel` (array parameters and private arrays) is in bounds when
/// it runs with `args`, whatever the values its loads read.
pub fn accesses_in_bounds(kernel: &Kernel, args: &[KernelArg<'_>]) -> bool {
    if kernel.unchecked {
        return true;
    }
    match Prepared::new(kernel) {
        Some(prepared) => prepared.prove(kernel, args, false).in_bounds,
        None => false,
    }
}

/// What a proof of `kernel` needs that does not depend on the launch's arguments: each
/// expression's type and how often each local is assigned. Made once per kernel, so that a
/// launch with new arguments (a time step's scalar) pays only for the walk, or, where an
/// earlier proof holds beyond its own arguments (`value`), for checking its guards.
pub struct Prepared {
    types: Vec<Scalar>,
    assignments: Vec<u32>,
    /// The walk, in order ([`tape`]).
    tape: tape::Tape,
    /// What a proof writes as it walks, kept between proofs so that one allocates nothing
    /// (a wavefront proves at every launch).
    scratch: std::sync::Mutex<Scratch>,
    /// Proofs that hold wherever their guards do.
    general: std::sync::Mutex<General>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("types", &self.types)
            .field("assignments", &self.assignments)
            .field("steps", &self.tape.steps.len())
            .finish_non_exhaustive()
    }
}

/// The flag of a stamp whose expression has no range.
const NONE: u32 = 1 << 31;

/// A proof's working memory: the environment, the ranges found so far (valid where stamped
/// with the current proof's number, so that none is cleared between proofs) and the
/// environments saved at the `if`s being walked.
#[derive(Default)]
struct Scratch {
    env: Vec<Option<Range<i128>>>,
    ranges: Vec<Range<i128>>,
    stamps: Vec<u32>,
    stamp: u32,
    saved: Vec<Vec<Option<Range<i128>>>>,
}

/// A kernel's proofs that hold beyond their own launch: each with whether it checked widths,
/// its guards and its verdict, the latest used first.
#[derive(Default)]
struct General {
    proofs: Vec<(bool, value::Guards, Proof)>,
    /// The launch's inputs by key, refilled at each launch.
    inputs: Vec<i128>,
    /// Symbolic walks made, and launches a kept proof answered.
    walks: u32,
    reused: u32,
    /// No more symbolic walks: the kernel's proofs are not affine in its inputs, or its
    /// launches keep needing new ones.
    off: bool,
}

/// General proofs a kernel keeps (a wavefront's bounds have a few shapes: growing, full,
/// shrinking diagonals).
const GENERAL_KEPT: usize = 8;

impl Prepared {
    /// The argument-independent part of `kernel`'s proofs; `None` where its expressions do
    /// not type (no proof can then succeed).
    pub fn new(kernel: &Kernel) -> Option<Prepared> {
        let types = super::validate::expr_types(kernel).ok()?;
        let mut assignments = vec![0u32; kernel.function.locals.len()];
        count_assignments(&kernel.function.body, &mut assignments);
        let tape = tape::Tape::new(kernel, &types);
        Some(Prepared {
            types,
            assignments,
            tape,
            scratch: Default::default(),
            general: std::sync::Mutex::new(General {
                // Keys are 16 bits: two per parameter.
                off: 2 * kernel.params.len() > Key::MAX as usize,
                ..Default::default()
            }),
        })
    }

    /// [`prove`], for the kernel this was made of: by a kept proof whose guards hold for
    /// `args`, else by walking the kernel (symbolically while that keeps paying).
    pub fn prove(&self, kernel: &Kernel, args: &[KernelArg<'_>], widths: bool) -> Proof {
        let mut general = self.general.lock().unwrap_or_else(|e| e.into_inner());
        if general.off {
            drop(general);
            return self.prove_concrete(kernel, args, widths);
        }
        let g = &mut *general;
        g.inputs.clear();
        g.inputs.resize(2 * kernel.params.len(), 0);
        for (p, a) in args.iter().enumerate().take(kernel.params.len()) {
            if let Some(v) = scalar_input(a) {
                g.inputs[p] = v;
            } else if let Some(n) = array_len(kernel, args, p as ParamId) {
                g.inputs[kernel.params.len() + p] = n;
            }
        }
        let inputs = &g.inputs;
        if let Some(i) = g
            .proofs
            .iter()
            .position(|(w, guards, _)| *w == widths && guards.hold(inputs))
        {
            g.reused += 1;
            let kept = g.proofs.remove(i);
            let proof = kept.2;
            g.proofs.insert(0, kept);
            return proof;
        }
        g.walks += 1;
        let n = kernel.function.exprs.len();
        let fresh = (
            vec![None; kernel.function.locals.len()],
            vec![(value::Sym::int(0), value::Sym::int(0)); n],
            vec![0; n],
            1,
        );
        let mut p = self.prover::<value::Sym>(kernel, args, widths, fresh);
        let mut saved = Vec::new();
        let proof = p.verdict(kernel, &self.tape, &mut saved);
        match p.rec.guards() {
            Some(guards) => {
                g.proofs.truncate(GENERAL_KEPT - 1);
                g.proofs.insert(0, (widths, guards, proof));
            }
            None => g.off = true,
        }
        // Launches whose inputs keep leaving every kept proof's guards: walk plainly.
        if g.walks >= 32 && g.reused < 4 * g.walks {
            g.off = true;
        }
        proof
    }

    /// A prover for `args` over working memory `(env, ranges, stamps)` whose ranges are
    /// valid where stamped `stamp`.
    #[allow(clippy::type_complexity)]
    fn prover<'a, 'k, N: Num>(
        &'k self,
        kernel: &'k Kernel,
        args: &'a [KernelArg<'a>],
        widths: bool,
        (env, ranges, stamps, stamp): (Vec<Option<Range<N>>>, Vec<Range<N>>, Vec<u32>, u32),
    ) -> Prover<'a, 'k, N> {
        Prover {
            k: kernel,
            args,
            types: &self.types,
            assignments: &self.assignments,
            env: Env(env),
            ranges,
            stamps,
            stamp,
            widths: widths.then_some(true),
            rec: Record::default(),
        }
    }

    /// The proof by walking the kernel with plain values, in the kept working memory.
    fn prove_concrete(&self, kernel: &Kernel, args: &[KernelArg<'_>], widths: bool) -> Proof {
        let mut guard = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let scratch = &mut *guard;
        scratch.stamp += 1;
        if scratch.stamp >= NONE {
            // The stamps would run into the flag: start them again (no range is stamped 0).
            scratch.stamps.clear();
            scratch.stamp = 1;
        }
        scratch.ranges.resize(kernel.function.exprs.len(), (0, 0));
        scratch.stamps.resize(kernel.function.exprs.len(), 0);
        let mut env = std::mem::take(&mut scratch.env);
        env.clear();
        env.resize(kernel.function.locals.len(), None);
        let kept = (
            env,
            std::mem::take(&mut scratch.ranges),
            std::mem::take(&mut scratch.stamps),
            scratch.stamp,
        );
        let mut p = self.prover::<i128>(kernel, args, widths, kept);
        let proof = p.verdict(kernel, &self.tape, &mut scratch.saved);
        scratch.env = p.env.0;
        scratch.ranges = p.ranges;
        scratch.stamps = p.stamps;
        proof
    }
}

/// Whether a proof of `kernel` reads scalar parameter `p`'s value: integer parameters only
/// (a float or `bool` parameter bounds nothing), so a launch whose other scalars changed
/// keeps its proof.
pub fn proof_reads(kernel: &Kernel, p: ParamId) -> bool {
    matches!(
        kernel.params.get(p as usize).map(|p| &p.kind),
        Some(ParamKind::Scalar(t)) if t.is_int()
    )
}

/// What [`prove`] finds for a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// Every access is in bounds ([`accesses_in_bounds`]).
    pub in_bounds: bool,
    /// Besides, every `usize` and `isize` value the kernel computes (loop variables, indices,
    /// lengths, intermediate sums and products) lies within `u32` (every `isize` within
    /// `i32`), so that [`narrow::to_32`](super::narrow::to_32) computes the same values.
    pub fits_32: bool,
}

/// [`accesses_in_bounds`] and, where `widths` asks, whether the kernel's index values fit 31
/// bits, in one pass over the kernel (a launch pays for it).
pub fn prove(kernel: &Kernel, args: &[KernelArg<'_>], widths: bool) -> Proof {
    match Prepared::new(kernel) {
        Some(prepared) => prepared.prove(kernel, args, widths),
        None => Proof {
            in_bounds: kernel.unchecked,
            fits_32: false,
        },
    }
}

/// How many statements assign each local (loop variables count as assigned many times).
fn count_assignments(b: &Block, n: &mut [u32]) {
    fn bump(n: &mut [u32], l: LocalId, by: u32) {
        if let Some(c) = n.get_mut(l as usize) {
            *c = c.saturating_add(by);
        }
    }
    for s in b {
        match s {
            Stmt::Assign { local, .. } => bump(n, *local, 1),
            Stmt::AssignElem { .. } | Stmt::Store { .. } | Stmt::Break | Stmt::Continue => {}
            Stmt::Atomic { old, new, op, .. } => {
                for l in old
                    .iter()
                    .chain(new.iter())
                    .chain(op.combine_local().iter())
                {
                    bump(n, *l, 2);
                }
            }
            Stmt::If { accept, reject, .. } => {
                count_assignments(accept, n);
                count_assignments(reject, n);
            }
            Stmt::For {
                levels,
                reductions,
                private,
                body,
                ..
            } => {
                for l in levels
                    .iter()
                    .map(|l| l.var)
                    .chain(reductions.iter().map(|r| r.local))
                    .chain(private.iter().copied())
                {
                    bump(n, l, 2);
                }
                count_assignments(body, n);
            }
            Stmt::Loop { body } => count_assignments(body, n),
        }
    }
}

/// A closed interval of integer values.
type Range<N> = (N, N);

struct Prover<'a, 'k, N: Num> {
    k: &'k Kernel,
    args: &'a [KernelArg<'a>],
    types: &'k [Scalar],
    assignments: &'k [u32],
    /// Bounds of loop variables and of locals assigned once.
    env: Env<N>,
    /// The range of each expression walked so far ([`Step::Expr`](tape::Step::Expr)):
    /// valid where `stamps` holds `stamp` (`stamp | NONE`: known to have none).
    ranges: Vec<Range<N>>,
    stamps: Vec<u32>,
    stamp: u32,
    /// Whether every `usize`/`isize` value seen so far fits 32 bits, where [`prove`] asks.
    widths: Option<bool>,
    /// The comparisons decided ([`value::Record`]: recorded for [`value::Sym`] only).
    rec: Record,
}

/// The ranges of the locals a proof knows, by local.
struct Env<N>(Vec<Option<Range<N>>>);

impl<N: Num> Env<N> {
    fn get(&self, l: LocalId) -> Option<&Range<N>> {
        self.0.get(l as usize)?.as_ref()
    }
    fn insert(&mut self, l: LocalId, r: Range<N>) {
        if let Some(slot) = self.0.get_mut(l as usize) {
            *slot = Some(r);
        }
    }
    fn remove(&mut self, l: &LocalId) {
        if let Some(slot) = self.0.get_mut(*l as usize) {
            *slot = None;
        }
    }
}

/// The values the 32-bit type standing for `t` holds in a narrowed kernel (`u32` for
/// `usize`, `i32` for `isize`); `None` for other types.
fn narrow_range(t: Scalar) -> Option<(i128, i128)> {
    match t {
        Scalar::USize => Some((0, u32::MAX as i128)),
        Scalar::ISize => Some((i32::MIN as i128, i32::MAX as i128)),
        _ => None,
    }
}

/// The values integer type `t` holds.
fn type_range(t: Scalar) -> Option<(i128, i128)> {
    if !t.is_int() {
        return None;
    }
    let bits = t.size() * 8;
    Some(if t.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    })
}

/// The comparison that holds when `op` does not (`a < b` fails: `a >= b`).
fn negated(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Lt => BinaryOp::Ge,
        BinaryOp::Le => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::Le,
        BinaryOp::Ge => BinaryOp::Lt,
        BinaryOp::Eq => BinaryOp::Ne,
        BinaryOp::Ne => BinaryOp::Eq,
        _ => return None,
    })
}

/// `op` with its operands swapped (`a < b` is `b > a`).
fn mirrored(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        BinaryOp::Eq => BinaryOp::Eq,
        _ => return None,
    })
}

impl<N: Num> Prover<'_, '_, N> {
    /// Runs `tape` and says what it found.
    fn verdict(
        &mut self,
        kernel: &Kernel,
        tape: &tape::Tape,
        saved: &mut Vec<Vec<Option<Range<N>>>>,
    ) -> Proof {
        let in_bounds = self.run(tape, saved);
        let fits = self.widths == Some(true);
        Proof {
            in_bounds: in_bounds || kernel.unchecked,
            fits_32: in_bounds && fits,
        }
    }

    // Every decision on values goes through these, so that a symbolic proof records it.
    fn cmp(&mut self, a: &N, b: &N) -> std::cmp::Ordering {
        a.compare(b, &mut self.rec)
    }
    fn lt(&mut self, a: &N, b: &N) -> bool {
        self.cmp(a, b).is_lt()
    }
    fn le(&mut self, a: &N, b: &N) -> bool {
        self.cmp(a, b).is_le()
    }
    fn eq(&mut self, a: &N, b: &N) -> bool {
        self.cmp(a, b).is_eq()
    }
    fn min(&mut self, a: N, b: N) -> N {
        if self.le(&a, &b) {
            a
        } else {
            b
        }
    }
    fn max(&mut self, a: N, b: N) -> N {
        if self.le(&a, &b) {
            b
        } else {
            a
        }
    }
    /// The hull of `corners` (not empty).
    fn hull(&mut self, corners: &[N]) -> Range<N> {
        let (mut lo, mut hi) = (corners[0].clone(), corners[0].clone());
        for c in &corners[1..] {
            lo = self.min(lo, c.clone());
            hi = self.max(hi, c.clone());
        }
        (lo, hi)
    }
    /// Whether `(lo, hi)` lies within `(min, max)`.
    fn within(&mut self, r: &Range<N>, (min, max): (i128, i128)) -> bool {
        !self.lt(&r.0, &N::int(min)) && self.le(&r.1, &N::int(max))
    }

    /// The largest value of a loop over a range `start..end` or `start..=end` as the builder
    /// writes it (step 1, trips `select(start < end, (end - start) as usize, 0)`, plus 1 when
    /// inclusive): `end - 1` (`end`) at most.
    fn range_end(&self, lv: &super::LoopLevel) -> Option<N> {
        let e = &self.k.function.exprs;
        if !matches!(e[lv.step], Expr::Literal(Literal::Int(_, 1))) {
            return None;
        }
        let Expr::Select {
            cond,
            accept,
            reject,
        } = &e[lv.trips]
        else {
            return None;
        };
        if !matches!(e[*reject], Expr::Literal(Literal::Int(_, 0))) {
            return None;
        }
        let Expr::Binary(op @ (BinaryOp::Lt | BinaryOp::Le), a, b) = &e[*cond] else {
            return None;
        };
        let inclusive = *op == BinaryOp::Le;
        let count = match (&e[*accept], inclusive) {
            (Expr::Binary(BinaryOp::Add, c, one), true)
                if matches!(e[*one], Expr::Literal(Literal::Int(_, 1))) =>
            {
                *c
            }
            (_, false) => *accept,
            _ => return None,
        };
        let span = match &e[count] {
            Expr::Cast(x, _) => *x,
            _ => count,
        };
        let Expr::Binary(BinaryOp::Sub, b2, a2) = &e[span] else {
            return None;
        };
        let same = |x: Handle<Expr>, y: Handle<Expr>| {
            x == y
                || matches!((&e[x], &e[y]), (Expr::Local(p), Expr::Local(q)) if p == q && self.assignments.get(*p as usize) == Some(&1))
        };
        if !(same(*a, lv.start) && same(*a2, lv.start) && same(*b, *b2)) {
            return None;
        }
        let end = self.range(*b)?.1;
        Some(if inclusive { end } else { end.sub(&N::int(1)) })
    }

    /// Runs `tape`: whether every access is in bounds. `saved`: spare room for the
    /// environments saved at `if`s.
    fn run(&mut self, tape: &tape::Tape, saved: &mut Vec<Vec<Option<Range<N>>>>) -> bool {
        use tape::Step;
        let mut depth = 0;
        let mut pc = 0;
        while let Some(step) = tape.steps.get(pc) {
            pc += 1;
            match step {
                Step::Expr(h) => {
                    if !self.expr(*h) {
                        return false;
                    }
                }
                Step::Assign { local, value } => {
                    if self.assignments.get(*local as usize) == Some(&1) {
                        if let Some(r) = self.range(*value) {
                            self.env.insert(*local, r);
                        }
                    } else {
                        // A local assigned more than once (a loop's variable the body
                        // changes, `for mut j in ..`) holds no range from here on.
                        self.env.remove(local);
                    }
                }
                Step::Store { array, index } => {
                    if !self.in_bounds(*array, *index) {
                        return false;
                    }
                }
                Step::StorePrivate { local, index } => {
                    if !self.private_in_bounds(*local, *index) {
                        return false;
                    }
                }
                Step::Save => {
                    if saved.len() <= depth {
                        saved.push(Vec::new());
                    }
                    saved[depth].clone_from(&self.env.0);
                    depth += 1;
                }
                // Each branch knows its condition's outcome (`if j > 0 { a[j - 1] }`); a
                // branch whose condition no value in the ranges meets never runs (the first
                // run of a loop that has none: `if run < trips / R` with fewer than R trips).
                Step::Refine { cond, holds, skip } => {
                    self.refine(*cond, *holds);
                    if self.unreachable() {
                        pc = *skip;
                    }
                }
                Step::Restore => self.env.0.clone_from(&saved[depth - 1]),
                Step::Drop => {
                    depth -= 1;
                    self.env.0.clone_from(&saved[depth]);
                }
                Step::Level { level: lv, skip } => {
                    let (Some(start), Some(step), Some(trips)) = (
                        self.range(lv.start),
                        self.range(lv.step),
                        self.range(lv.trips),
                    ) else {
                        return false;
                    };
                    if self.le(&trips.1, &N::int(0)) {
                        // The body never runs.
                        pc = *skip;
                        continue;
                    }
                    // start + k * step for k in 0..trips: the extremes are at the corners.
                    let last = trips.1.sub(&N::int(1));
                    let (Some(a), Some(b)) = (step.0.mul(&last), step.1.mul(&last)) else {
                        return false;
                    };
                    let mut var = self.hull(&[
                        start.0.clone(),
                        start.1.clone(),
                        start.0.add(&a),
                        start.0.add(&b),
                        start.1.add(&a),
                        start.1.add(&b),
                    ]);
                    // `start..end`: below `end` whatever the start (intervals alone lose that
                    // the trip count shrinks as the start grows: `for i in k + 1..n`).
                    if let Some(end) = self.range_end(lv) {
                        var.1 = self.min(var.1, end);
                    }
                    if self.widths == Some(true) {
                        let ty = self.k.function.locals[lv.var as usize].ty;
                        if narrow_range(ty).is_some_and(|r| !self.within(&var, r)) {
                            self.widths = Some(false);
                        }
                    }
                    self.env.insert(lv.var, var);
                }
            }
        }
        true
    }

    /// Whether a refinement left a local without values: the code it guards never runs.
    fn unreachable(&mut self) -> bool {
        for i in 0..self.env.0.len() {
            if let Some((lo, hi)) = &self.env.0[i] {
                let (lo, hi) = (lo.clone(), hi.clone());
                if self.lt(&hi, &lo) {
                    return true;
                }
            }
        }
        false
    }

    /// Narrows the ranges of locals in the environment to what condition `cond` being `holds`
    /// implies: comparisons of a local (plus a constant) with a bounded value, and `&&` when
    /// it holds (`||` when it does not).
    fn refine(&mut self, cond: Handle<Expr>, holds: bool) {
        let e = &self.k.function.exprs[cond];
        match e {
            Expr::Binary(BinaryOp::And, a, b) if holds => {
                let (a, b) = (*a, *b);
                self.refine(a, true);
                self.refine(b, true);
            }
            Expr::Binary(BinaryOp::Or, a, b) if !holds => {
                let (a, b) = (*a, *b);
                self.refine(a, false);
                self.refine(b, false);
            }
            Expr::Unary(UnaryOp::Not, a) => {
                let a = *a;
                self.refine(a, !holds)
            }
            Expr::Binary(op, a, b) if op.is_comparison() => {
                let (a, b) = (*a, *b);
                // The comparison as it holds: `x op y`.
                let op = if holds { Some(*op) } else { negated(*op) };
                let Some(op) = op else { return };
                self.bound(a, op, b);
                if let Some(m) = mirrored(op) {
                    self.bound(b, m, a);
                }
            }
            _ => {}
        }
    }

    /// Whether condition `c` holds for every value its operands' ranges allow (`Some(true)`),
    /// for none (`Some(false)`), or neither: comparisons, `&&`, `!`.
    fn decide(&mut self, c: Handle<Expr>) -> Option<bool> {
        let (op, a, b) = match &self.k.function.exprs[c] {
            Expr::Unary(UnaryOp::Not, a) => {
                let a = *a;
                return self.decide(a).map(|v| !v);
            }
            Expr::Binary(op, a, b) => (*op, *a, *b),
            _ => return None,
        };
        if op == BinaryOp::And {
            return match (self.decide(a)?, self.decide(b)?) {
                (true, true) => Some(true),
                _ => Some(false),
            };
        }
        // `x < y` (strict) or `x <= y`.
        let (x, y, strict) = match op {
            BinaryOp::Lt => (a, b, true),
            BinaryOp::Le => (a, b, false),
            BinaryOp::Gt => (b, a, true),
            BinaryOp::Ge => (b, a, false),
            _ => return None,
        };
        let ((xlo, xhi), (ylo, yhi)) = (self.range(x)?, self.range(y)?);
        if strict {
            if self.lt(&xhi, &ylo) {
                Some(true)
            } else if self.le(&yhi, &xlo) {
                Some(false)
            } else {
                None
            }
        } else if self.le(&xhi, &ylo) {
            Some(true)
        } else if self.lt(&yhi, &xlo) {
            Some(false)
        } else {
            None
        }
    }

    /// Narrows `x` (a local plus a constant) given `x op y` for a bounded `y`.
    fn bound(&mut self, x: Handle<Expr>, op: BinaryOp, y: Handle<Expr>) {
        let (local, c) = match &self.k.function.exprs[x] {
            Expr::Local(l) => (*l, 0),
            Expr::Binary(BinaryOp::Add, a, b) => {
                match (&self.k.function.exprs[*a], &self.k.function.exprs[*b]) {
                    (Expr::Local(l), Expr::Literal(Literal::Int(_, v))) => (*l, *v),
                    (Expr::Literal(Literal::Int(_, v)), Expr::Local(l)) => (*l, *v),
                    _ => return,
                }
            }
            _ => return,
        };
        let (Some((lo, hi)), Some((ylo, yhi))) = (self.env.get(local).cloned(), self.range(y))
        else {
            return;
        };
        let c = N::int(c);
        // `local + c` as the device computes it is `local + c` only where it does not wrap
        // (`b.wrapping_add(1) == 0` holds for `b = 255`): otherwise nothing follows.
        if c.value() != 0 {
            let Some(t) = self.types.get(x.index()).and_then(|t| type_range(*t)) else {
                return;
            };
            if !self.within(&(lo.add(&c), hi.add(&c)), t) {
                return;
            }
        }
        let one = N::int(1);
        // local + c op y: local op y - c.
        let (lo, hi) = match op {
            BinaryOp::Lt => {
                let h = self.min(hi, yhi.sub(&c).sub(&one));
                (lo, h)
            }
            BinaryOp::Le => {
                let h = self.min(hi, yhi.sub(&c));
                (lo, h)
            }
            BinaryOp::Gt => {
                let l = self.max(lo, ylo.sub(&c).add(&one));
                (l, hi)
            }
            BinaryOp::Ge => {
                let l = self.max(lo, ylo.sub(&c));
                (l, hi)
            }
            BinaryOp::Eq => {
                let l = self.max(lo, ylo.sub(&c));
                let h = self.min(hi, yhi.sub(&c));
                (l, h)
            }
            // `i != 0` with `i` from 0: from 1 (`if i == 0 || j == 0 { .. } else { a[i - 1] }`).
            BinaryOp::Ne if self.eq(&ylo, &yhi) => {
                let v = ylo.sub(&c);
                if self.eq(&v, &lo) {
                    (lo.add(&one), hi)
                } else if self.eq(&v, &hi) {
                    (lo, hi.sub(&one))
                } else {
                    return;
                }
            }
            _ => return,
        };
        self.env.insert(local, (lo, hi));
    }

    /// Whether `usize` expression `h` lies within `u32`, and `isize` within `i32` (other
    /// types: true), so that 32-bit arithmetic computes it exactly.
    fn fits_32(&mut self, h: Handle<Expr>) -> bool {
        match self.types.get(h.index()) {
            Some(&t @ (Scalar::USize | Scalar::ISize)) => match (self.range(h), narrow_range(t)) {
                (Some(r), Some(n)) => self.within(&r, n),
                _ => false,
            },
            _ => true,
        }
    }

    /// Walks expression `h` (its operands walked already): records its range; whether it is
    /// a read in bounds (and, when checking widths, fits 32 bits where it is a `usize`).
    fn expr(&mut self, h: Handle<Expr>) -> bool {
        let r = self.range_uncached(h);
        if let Some(stamp) = self.stamps.get_mut(h.index()) {
            *stamp = match r {
                Some(r) => {
                    self.ranges[h.index()] = r;
                    self.stamp
                }
                None => self.stamp | NONE,
            };
        }
        if self.widths == Some(true) && !self.fits_32(h) {
            self.widths = Some(false);
        }
        match &self.k.function.exprs[h] {
            Expr::Load { array, index, .. } => self.in_bounds(*array, *index),
            Expr::LocalElem { local, index } => self.private_in_bounds(*local, *index),
            _ => true,
        }
    }

    fn in_bounds(&mut self, array: ParamId, index: Handle<Expr>) -> bool {
        // An element of a nested array (`boxes[l].nei[k]`): left to the device's checks.
        if matches!(self.k.function.exprs[index], Expr::NestedIndex { .. }) {
            return false;
        }
        match (self.len(array), self.range(index)) {
            (Some(n), Some((lo, hi))) => !self.lt(&lo, &N::int(0)) && self.lt(&hi, &n),
            _ => false,
        }
    }

    fn private_in_bounds(&mut self, local: LocalId, index: Handle<Expr>) -> bool {
        match (
            self.k
                .function
                .locals
                .get(local as usize)
                .and_then(|l| l.len),
            self.range(index),
        ) {
            (Some(n), Some((lo, hi))) => {
                !self.lt(&lo, &N::int(0)) && self.lt(&hi, &N::int(n as i128))
            }
            _ => false,
        }
    }

    /// The length of array parameter `a` in this launch (input `params + a` of the proof).
    fn len(&self, a: ParamId) -> Option<N> {
        let n = array_len(self.k, self.args, a)?;
        Some(N::input(length_key(self.k, a)?, n))
    }

    /// Bounds of integer expression `h`, within its type (`None` where it may wrap or is not
    /// known), as the walk found them when it passed `h` (each expression appears once in
    /// the kernel, so that is the environment at its place); `None` for one not walked yet.
    fn range(&self, h: Handle<Expr>) -> Option<Range<N>> {
        match self.stamps.get(h.index()) {
            Some(&s) if s == self.stamp => self.ranges.get(h.index()).cloned(),
            _ => None,
        }
    }

    fn range_uncached(&mut self, h: Handle<Expr>) -> Option<Range<N>> {
        let ty = *self.types.get(h.index())?;
        let int = |(lo, hi): (i128, i128)| (N::int(lo), N::int(hi));
        let r = match &self.k.function.exprs[h] {
            Expr::Literal(Literal::Int(_, v)) => int((*v, *v)),
            Expr::Literal(_) => return None,
            Expr::Param(p) => {
                let v = scalar_input(self.args.get(*p as usize)?)?;
                let v = N::input(Key::try_from(*p).ok()?, v);
                (v.clone(), v)
            }
            Expr::Len(a) => {
                let n = self.len(*a)?;
                (n.clone(), n)
            }
            Expr::Local(l) => self.env.get(*l)?.clone(),
            // A value read from memory: anything its type holds (`keys[i] % n` is below `n`).
            Expr::Load { .. } => int(type_range(ty)?),
            Expr::Cast(a, _) => self.range(*a)?,
            Expr::Unary(UnaryOp::Neg, a) => {
                let (lo, hi) = self.range(*a)?;
                (hi.neg(), lo.neg())
            }
            Expr::Binary(op, a, b) => {
                let (op, a, b) = (*op, *a, *b);
                let (x, y) = (self.range(a)?, self.range(b)?);
                let zero = N::int(0);
                match op {
                    BinaryOp::Add => (x.0.add(&y.0), x.1.add(&y.1)),
                    BinaryOp::Sub => (x.0.sub(&y.1), x.1.sub(&y.0)),
                    BinaryOp::Mul => {
                        let c = [
                            x.0.mul(&y.0)?,
                            x.0.mul(&y.1)?,
                            x.1.mul(&y.0)?,
                            x.1.mul(&y.1)?,
                        ];
                        self.hull(&c)
                    }
                    BinaryOp::Div if !self.lt(&x.0, &zero) && self.lt(&zero, &y.0) => {
                        (x.0.div(&y.1), x.1.div(&y.0))
                    }
                    BinaryOp::Rem if !self.lt(&x.0, &zero) && self.lt(&zero, &y.0) => {
                        let h = self.min(x.1, y.1.sub(&N::int(1)));
                        (zero, h)
                    }
                    BinaryOp::Shl | BinaryOp::Shr => {
                        // By a known amount below 64 only.
                        let k = y.0.value();
                        if !(0..64).contains(&k)
                            || !self.eq(&y.0, &N::int(k))
                            || !self.eq(&y.1, &N::int(k))
                        {
                            return None;
                        }
                        if op == BinaryOp::Shl {
                            (x.0.shl(k as u32)?, x.1.shl(k as u32)?)
                        } else if !self.lt(&x.0, &zero) {
                            (x.0.shr(k as u32), x.1.shr(k as u32))
                        } else {
                            return None;
                        }
                    }
                    BinaryOp::BitAnd if !self.lt(&x.0, &zero) && !self.lt(&y.0, &zero) => {
                        let h = self.min(x.1, y.1);
                        (zero, h)
                    }
                    _ => return None,
                }
            }
            Expr::Math(f @ (MathFn::Min | MathFn::Max), args) if args.len() == 2 => {
                let (f, a, b) = (*f, args[0], args[1]);
                let (x, y) = (self.range(a)?, self.range(b)?);
                if f == MathFn::Min {
                    (self.min(x.0, y.0), self.min(x.1, y.1))
                } else {
                    (self.max(x.0, y.0), self.max(x.1, y.1))
                }
            }
            // A condition the operands' ranges decide takes one arm (`if j < n { i * n + j }
            // else { usize::MAX }`, an `ndarray` index checked per axis).
            Expr::Select {
                cond,
                accept,
                reject,
            } => {
                let (c, a, b) = (*cond, *accept, *reject);
                match self.decide(c) {
                    Some(true) => self.range(a)?,
                    Some(false) => self.range(b)?,
                    None => {
                        let (x, y) = (self.range(a)?, self.range(b)?);
                        (self.min(x.0, y.0), self.max(x.1, y.1))
                    }
                }
            }
            _ => return None,
        };
        // Arithmetic that may leave the type would wrap on the device.
        let t = type_range(ty)?;
        self.within(&r, t).then_some(r)
    }
}

/// The value of an integer scalar argument.
fn scalar_input(a: &KernelArg<'_>) -> Option<i128> {
    match a {
        KernelArg::Scalar(v) => match *v {
            ScalarValue::I32(x) => Some(x as i128),
            ScalarValue::U32(x) => Some(x as i128),
            ScalarValue::I64(x) | ScalarValue::ISize(x) => Some(x as i128),
            ScalarValue::U64(x) | ScalarValue::USize(x) => Some(x as i128),
            ScalarValue::Bool(_) | ScalarValue::F32(_) | ScalarValue::F64(_) => None,
        },
        _ => None,
    }
}

/// The length (in elements) of array parameter `a` in a launch with `args`.
fn array_len(k: &Kernel, args: &[KernelArg<'_>], a: ParamId) -> Option<i128> {
    let ParamKind::Array { elem, .. } = k.params.get(a as usize)?.kind else {
        return None;
    };
    let bytes = match args.get(a as usize)? {
        KernelArg::Read(d) => d.len(),
        KernelArg::Write(d) => d.len(),
        KernelArg::Scalar(_) => return None,
    };
    Some((bytes / elem.size().max(1) as usize) as i128)
}

/// The proof's input key of array parameter `a`'s length.
fn length_key(k: &Kernel, a: ParamId) -> Option<Key> {
    Key::try_from(k.params.len() + a as usize).ok()
}

mod tape;
mod value;

use value::{Key, Num, Record};

#[cfg(test)]
mod tests;
