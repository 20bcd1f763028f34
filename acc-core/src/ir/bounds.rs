//! Proves, on the host before a launch, that every array access of a kernel is in bounds for
//! the launch's arguments: interval arithmetic over the integer expressions, with loop
//! variables ranging over their loops. A backend may then skip what only the bounds checks
//! need (DESIGN.md 4.2: an out-of-range index panics at the launching call), such as waiting
//! for the kernel to read its status. The proof is conservative: a value it cannot bound (a
//! load, a float, a local assigned more than once, arithmetic that may wrap) makes it fail,
//! never succeed wrongly.

use std::collections::HashMap;

use super::launch::{KernelArg, ScalarValue};
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
    let Ok(types) = super::validate::expr_types(kernel) else {
        return false;
    };
    let mut assignments = vec![0u32; kernel.function.locals.len()];
    count_assignments(&kernel.function.body, &mut assignments);
    let mut p = Prover {
        k: kernel,
        args,
        types,
        assignments,
        env: HashMap::new(),
        ranges: std::cell::RefCell::new(vec![None; kernel.function.exprs.len()]),
        widths: None,
    };
    p.block(&kernel.function.body)
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
    let Ok(types) = super::validate::expr_types(kernel) else {
        return Proof {
            in_bounds: kernel.unchecked,
            fits_32: false,
        };
    };
    let mut assignments = vec![0u32; kernel.function.locals.len()];
    count_assignments(&kernel.function.body, &mut assignments);
    let mut p = Prover {
        k: kernel,
        args,
        types,
        assignments,
        env: HashMap::new(),
        ranges: std::cell::RefCell::new(vec![None; kernel.function.exprs.len()]),
        widths: widths.then(|| std::cell::Cell::new(true)),
    };
    let in_bounds = p.block(&kernel.function.body);
    let fits = p.widths.as_ref().is_some_and(|w| w.get());
    Proof {
        in_bounds: in_bounds || kernel.unchecked,
        fits_32: in_bounds && fits,
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
type Range = (i128, i128);

struct Prover<'a, 'k> {
    k: &'k Kernel,
    args: &'a [KernelArg<'a>],
    types: Vec<Scalar>,
    assignments: Vec<u32>,
    /// Bounds of loop variables and of locals assigned once.
    env: HashMap<LocalId, Range>,
    /// The range of each expression, once computed ([`Prover::range`]).
    ranges: std::cell::RefCell<Vec<Option<Option<Range>>>>,
    /// Whether every `usize`/`isize` value seen so far fits 32 bits, where [`prove`] asks.
    widths: Option<std::cell::Cell<bool>>,
}

/// The values the 32-bit type standing for `t` holds in a narrowed kernel (`u32` for
/// `usize`, `i32` for `isize`); `None` for other types.
fn narrow_range(t: Scalar) -> Option<Range> {
    match t {
        Scalar::USize => Some((0, u32::MAX as i128)),
        Scalar::ISize => Some((i32::MIN as i128, i32::MAX as i128)),
        _ => None,
    }
}

/// The values integer type `t` holds.
fn type_range(t: Scalar) -> Option<Range> {
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

/// The hull of `corners`.
fn hull(corners: &[i128]) -> Range {
    let lo = corners.iter().copied().min().unwrap_or(0);
    let hi = corners.iter().copied().max().unwrap_or(0);
    (lo, hi)
}

impl Prover<'_, '_> {
    fn block(&mut self, b: &Block) -> bool {
        b.iter().all(|s| self.stmt(s))
    }

    /// The largest value of a loop over a range `start..end` or `start..=end` as the builder
    /// writes it (step 1, trips `select(start < end, (end - start) as usize, 0)`, plus 1 when
    /// inclusive): `end - 1` (`end`) at most.
    fn range_end(&self, lv: &super::LoopLevel) -> Option<i128> {
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
        Some(if inclusive { end } else { end - 1 })
    }

    fn stmt(&mut self, s: &Stmt) -> bool {
        match s {
            Stmt::Assign { local, value } => {
                if !self.accesses(*value) {
                    return false;
                }
                if self.assignments.get(*local as usize) == Some(&1) {
                    if let Some(r) = self.range(*value) {
                        self.env.insert(*local, r);
                    }
                } else {
                    // A local assigned more than once (a loop's variable the body changes,
                    // `for mut j in ..`) holds no range from here on.
                    self.env.remove(local);
                }
                true
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } => {
                self.accesses(*index)
                    && self.accesses(*value)
                    && self.private_in_bounds(*local, *index)
            }
            Stmt::Store {
                array,
                index,
                value,
                ..
            } => self.accesses(*index) && self.accesses(*value) && self.in_bounds(*array, *index),
            Stmt::Atomic {
                array,
                index,
                value,
                ..
            } => self.accesses(*index) && self.accesses(*value) && self.in_bounds(*array, *index),
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                if !self.accesses(*cond) {
                    return false;
                }
                // Each branch knows its condition's outcome (`if j > 0 { a[j - 1] }`); a
                // branch whose condition no value in the ranges meets never runs (the first
                // run of a loop that has none: `if run < trips / R` with fewer than R trips).
                let saved = self.env.clone();
                self.refine(*cond, true);
                let ok = self.unreachable() || self.block(accept);
                self.env = saved.clone();
                self.refine(*cond, false);
                let ok = ok && (self.unreachable() || self.block(reject));
                self.env = saved;
                ok
            }
            Stmt::For { levels, body, .. } => {
                for lv in levels {
                    if !(self.accesses(lv.start)
                        && self.accesses(lv.step)
                        && self.accesses(lv.trips))
                    {
                        return false;
                    }
                    let (Some(start), Some(step), Some(trips)) = (
                        self.range(lv.start),
                        self.range(lv.step),
                        self.range(lv.trips),
                    ) else {
                        return false;
                    };
                    if trips.1 <= 0 {
                        // The body never runs.
                        return true;
                    }
                    // start + k * step for k in 0..trips: the extremes are at the corners.
                    let last = trips.1 - 1;
                    let (Some(a), Some(b)) = (step.0.checked_mul(last), step.1.checked_mul(last))
                    else {
                        return false;
                    };
                    let mut var = hull(&[
                        start.0,
                        start.1,
                        start.0 + a,
                        start.0 + b,
                        start.1 + a,
                        start.1 + b,
                    ]);
                    // `start..end`: below `end` whatever the start (intervals alone lose that
                    // the trip count shrinks as the start grows: `for i in k + 1..n`).
                    if let Some(end) = self.range_end(lv) {
                        var.1 = var.1.min(end);
                    }
                    if let Some(w) = &self.widths {
                        let ty = self.k.function.locals[lv.var as usize].ty;
                        if narrow_range(ty).is_some_and(|(min, max)| var.0 < min || var.1 > max) {
                            w.set(false);
                        }
                    }
                    self.env.insert(lv.var, var);
                }
                self.block(body)
            }
            Stmt::Loop { body } => self.block(body),
            Stmt::Break | Stmt::Continue => true,
        }
    }

    /// Whether a refinement left a local without values: the code it guards never runs.
    fn unreachable(&self) -> bool {
        self.env.values().any(|&(lo, hi)| lo > hi)
    }

    /// Narrows the ranges of locals in the environment to what condition `cond` being `holds`
    /// implies: comparisons of a local (plus a constant) with a bounded value, and `&&` when
    /// it holds (`||` when it does not).
    fn refine(&mut self, cond: Handle<Expr>, holds: bool) {
        let e = &self.k.function.exprs[cond];
        match e {
            Expr::Binary(BinaryOp::And, a, b) if holds => {
                self.refine(*a, true);
                self.refine(*b, true);
            }
            Expr::Binary(BinaryOp::Or, a, b) if !holds => {
                self.refine(*a, false);
                self.refine(*b, false);
            }
            Expr::Unary(UnaryOp::Not, a) => self.refine(*a, !holds),
            Expr::Binary(op, a, b) if op.is_comparison() => {
                // The comparison as it holds: `x op y`.
                let op = if holds { Some(*op) } else { negated(*op) };
                let Some(op) = op else { return };
                self.bound(*a, op, *b);
                if let Some(m) = mirrored(op) {
                    self.bound(*b, m, *a);
                }
            }
            _ => {}
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
        let (Some(&(lo, hi)), Some((ylo, yhi))) = (self.env.get(&local), self.range(y)) else {
            return;
        };
        // `local + c` as the device computes it is `local + c` only where it does not wrap
        // (`b.wrapping_add(1) == 0` holds for `b = 255`): otherwise nothing follows.
        if c != 0 {
            let Some((min, max)) = self.types.get(x.index()).and_then(|t| type_range(*t)) else {
                return;
            };
            if lo + c < min || hi + c > max {
                return;
            }
        }
        // local + c op y: local op y - c.
        let (lo, hi) = match op {
            BinaryOp::Lt => (lo, hi.min(yhi - c - 1)),
            BinaryOp::Le => (lo, hi.min(yhi - c)),
            BinaryOp::Gt => (lo.max(ylo - c + 1), hi),
            BinaryOp::Ge => (lo.max(ylo - c), hi),
            BinaryOp::Eq => (lo.max(ylo - c), hi.min(yhi - c)),
            _ => return,
        };
        self.env.insert(local, (lo, hi));
    }

    /// Whether `usize` expression `h` lies within `u32`, and `isize` within `i32` (other
    /// types: true), so that 32-bit arithmetic computes it exactly.
    fn fits_32(&self, h: Handle<Expr>) -> bool {
        match self.types.get(h.index()) {
            Some(&t @ (Scalar::USize | Scalar::ISize)) => self.range(h).is_some_and(|(lo, hi)| {
                narrow_range(t).is_some_and(|(min, max)| lo >= min && hi <= max)
            }),
            _ => true,
        }
    }

    /// Whether every access inside expression `h` is in bounds (and, when checking widths,
    /// every `usize` value in it fits 32 bits).
    fn accesses(&self, h: Handle<Expr>) -> bool {
        if let Some(w) = &self.widths {
            if w.get() && !self.fits_32(h) {
                w.set(false);
            }
        }
        match &self.k.function.exprs[h] {
            Expr::Load { array, index, .. } => {
                self.accesses(*index) && self.in_bounds(*array, *index)
            }
            Expr::LocalElem { local, index } => {
                self.accesses(*index) && self.private_in_bounds(*local, *index)
            }
            Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => self.accesses(*a),
            Expr::Binary(_, a, b) => self.accesses(*a) && self.accesses(*b),
            Expr::Select {
                cond,
                accept,
                reject,
            } => self.accesses(*cond) && self.accesses(*accept) && self.accesses(*reject),
            Expr::Math(_, args) => args.iter().all(|a| self.accesses(*a)),
            Expr::Literal(_) | Expr::Param(_) | Expr::Local(_) | Expr::Len(_) | Expr::GangIndex => {
                true
            }
        }
    }

    fn in_bounds(&self, array: ParamId, index: Handle<Expr>) -> bool {
        match (self.len(array), self.range(index)) {
            (Some(n), Some((lo, hi))) => lo >= 0 && hi < n,
            _ => false,
        }
    }

    fn private_in_bounds(&self, local: LocalId, index: Handle<Expr>) -> bool {
        match (
            self.k
                .function
                .locals
                .get(local as usize)
                .and_then(|l| l.len),
            self.range(index),
        ) {
            (Some(n), Some((lo, hi))) => lo >= 0 && hi < n as i128,
            _ => false,
        }
    }

    /// The length of array parameter `a` in this launch.
    fn len(&self, a: ParamId) -> Option<i128> {
        let ParamKind::Array { elem, .. } = self.k.params.get(a as usize)?.kind else {
            return None;
        };
        let bytes = match self.args.get(a as usize)? {
            KernelArg::Read(d) => d.len(),
            KernelArg::Write(d) => d.len(),
            KernelArg::Scalar(_) => return None,
        };
        Some((bytes / elem.size().max(1) as usize) as i128)
    }

    /// Bounds of integer expression `h`, within its type (`None` where it may wrap or is not
    /// known).
    fn range(&self, h: Handle<Expr>) -> Option<Range> {
        // Each expression appears once in the kernel, so its range is the same whenever the
        // walk asks (the environment it reads is the one at its place): computed once, the
        // walk stays linear in the kernel's size (a launch pays for it).
        if let Some(r) = self.ranges.borrow().get(h.index()).copied().flatten() {
            return r;
        }
        let r = self.range_uncached(h);
        if let Some(slot) = self.ranges.borrow_mut().get_mut(h.index()) {
            *slot = Some(r);
        }
        r
    }

    fn range_uncached(&self, h: Handle<Expr>) -> Option<Range> {
        let ty = *self.types.get(h.index())?;
        let r = match &self.k.function.exprs[h] {
            Expr::Literal(Literal::Int(_, v)) => (*v, *v),
            Expr::Literal(_) => return None,
            Expr::Param(p) => {
                let v = match self.args.get(*p as usize)? {
                    KernelArg::Scalar(v) => match *v {
                        ScalarValue::I32(x) => x as i128,
                        ScalarValue::U32(x) => x as i128,
                        ScalarValue::I64(x) | ScalarValue::ISize(x) => x as i128,
                        ScalarValue::U64(x) | ScalarValue::USize(x) => x as i128,
                        ScalarValue::Bool(_) | ScalarValue::F32(_) | ScalarValue::F64(_) => {
                            return None
                        }
                    },
                    _ => return None,
                };
                (v, v)
            }
            Expr::Len(a) => {
                let n = self.len(*a)?;
                (n, n)
            }
            Expr::Local(l) => *self.env.get(l)?,
            // A value read from memory: anything its type holds (`keys[i] % n` is below `n`).
            Expr::Load { .. } => type_range(ty)?,
            Expr::Cast(a, _) => self.range(*a)?,
            Expr::Unary(UnaryOp::Neg, a) => {
                let (lo, hi) = self.range(*a)?;
                (-hi, -lo)
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.range(*a)?, self.range(*b)?);
                match op {
                    BinaryOp::Add => (x.0 + y.0, x.1 + y.1),
                    BinaryOp::Sub => (x.0 - y.1, x.1 - y.0),
                    BinaryOp::Mul => {
                        let c = [
                            x.0.checked_mul(y.0)?,
                            x.0.checked_mul(y.1)?,
                            x.1.checked_mul(y.0)?,
                            x.1.checked_mul(y.1)?,
                        ];
                        hull(&c)
                    }
                    BinaryOp::Div if x.0 >= 0 && y.0 > 0 => (x.0 / y.1, x.1 / y.0),
                    BinaryOp::Rem if x.0 >= 0 && y.0 > 0 => (0, x.1.min(y.1 - 1)),
                    BinaryOp::Shl if y.0 == y.1 && (0..64).contains(&y.0) => {
                        (x.0.checked_shl(y.0 as u32)?, x.1.checked_shl(y.0 as u32)?)
                    }
                    BinaryOp::Shr if y.0 == y.1 && (0..64).contains(&y.0) && x.0 >= 0 => {
                        (x.0 >> y.0, x.1 >> y.0)
                    }
                    BinaryOp::BitAnd if x.0 >= 0 && y.0 >= 0 => (0, x.1.min(y.1)),
                    _ => return None,
                }
            }
            Expr::Math(f @ (MathFn::Min | MathFn::Max), args) if args.len() == 2 => {
                let (x, y) = (self.range(args[0])?, self.range(args[1])?);
                if *f == MathFn::Min {
                    (x.0.min(y.0), x.1.min(y.1))
                } else {
                    (x.0.max(y.0), x.1.max(y.1))
                }
            }
            Expr::Select { accept, reject, .. } => {
                let (x, y) = (self.range(*accept)?, self.range(*reject)?);
                (x.0.min(y.0), x.1.max(y.1))
            }
            _ => return None,
        };
        // Arithmetic that may leave the type would wrap on the device.
        let (lo, hi) = type_range(ty)?;
        (r.0 >= lo && r.1 <= hi).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::KernelBuilder;
    use crate::ir::samples::{saxpy, GRID};

    fn bytes(v: &[f32]) -> &[u8] {
        // SAFETY: f32 is plain data.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
    }

    #[test]
    fn saxpy_over_its_own_length_is_in_bounds() {
        let (x, mut y) = (vec![0f32; 100], vec![0f32; 100]);
        let mut ys = y.clone();
        let k = saxpy(Scalar::F32);
        let args = [
            KernelArg::Scalar(ScalarValue::F32(2.0)),
            KernelArg::Read(bytes(&x)),
            KernelArg::Write(unsafe_bytes_mut(&mut y)),
        ];
        assert!(accesses_in_bounds(&k, &args));
        // `x` shorter than `y`: `x[i]` may be out of range.
        let short = vec![0f32; 99];
        let args = [
            KernelArg::Scalar(ScalarValue::F32(2.0)),
            KernelArg::Read(bytes(&short)),
            KernelArg::Write(unsafe_bytes_mut(&mut ys)),
        ];
        assert!(!accesses_in_bounds(&k, &args));
    }

    #[test]
    fn loops_starting_at_a_variable_stay_below_their_end() {
        // `for k in 0..n { for i in k + 1..n { for j in k..n { m[i * n + j] .. m[k * n + j] } } }`:
        // in bounds exactly when `m` has n * n elements.
        let k = crate::ir::samples::eliminate();
        for (len, ok) in [(16 * 16, true), (16 * 16 - 1, false)] {
            let mut m = vec![0u8; 8 * len];
            let args = [
                KernelArg::Write(&mut m),
                KernelArg::Scalar(ScalarValue::USize(16)),
            ];
            assert_eq!(accesses_in_bounds(&k, &args), ok, "{len} elements");
        }
    }

    fn unsafe_bytes_mut(v: &mut [f32]) -> &mut [u8] {
        // SAFETY: f32 is plain data, valid for any bits.
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
    }

    /// `for j in 1..n-1 { for i in 1..m-1 { a[j*m+i] = b[j*m+i-1] } }` (collapsed).
    fn stencil(offset: i128) -> Kernel {
        let mut b = KernelBuilder::new("stencil");
        let n = b.param_scalar("n", Scalar::USize);
        let m = b.param_scalar("m", Scalar::USize);
        let a = b.param_array("a", Scalar::F32, true);
        let src = b.param_array("b", Scalar::F32, false);
        let one = b.lit_int(1, None);
        let step = b.lit_int(1, None);
        let n1 = b.binary(BinaryOp::Sub, n, one);
        let one = b.lit_int(1, None);
        let trips_j = b.binary(BinaryOp::Sub, n1, one);
        let one = b.lit_int(1, None);
        let m1 = b.binary(BinaryOp::Sub, m, one);
        let one = b.lit_int(1, None);
        let trips_i = b.binary(BinaryOp::Sub, m1, one);
        let (s1, s2, step2) = (b.lit_int(1, None), b.lit_int(1, None), b.lit_int(1, None));
        b.for_(
            &[
                ("j", Some(Scalar::USize), s1, step, trips_j),
                ("i", Some(Scalar::USize), s2, step2, trips_i),
            ],
            GRID,
            &[],
            &[],
            |b, v| {
                let (j, i) = (b.get(v[0]), b.get(v[1]));
                let m = b.param_scalar_value(1);
                let jm = b.binary(BinaryOp::Mul, j, m);
                let k = b.binary(BinaryOp::Add, jm, i);
                let o = b.lit_int(offset, None);
                let ko = b.binary(BinaryOp::Add, k, o);
                let x = b.load(src, ko);
                let (j, i) = (b.get(v[0]), b.get(v[1]));
                let m = b.param_scalar_value(1);
                let jm = b.binary(BinaryOp::Mul, j, m);
                let k = b.binary(BinaryOp::Add, jm, i);
                b.store(a, k, x);
            },
        );
        b.finish().expect("valid IR")
    }

    /// `for j in 0..n { b[j] = if j > 0 { a[j - 1] } else { a[j] } + if j + 1 < n { a[j + 1] }
    /// else { 0 } }`, the neighbours of a boundary guarded by branches.
    fn neighbours(strict: bool) -> Kernel {
        let mut b = KernelBuilder::new("neighbours");
        let n = b.param_scalar("n", Scalar::USize);
        let a = b.param_array("a", Scalar::F32, false);
        let out = b.param_array("b", Scalar::F32, true);
        let zero = b.lit_int(0, None);
        b.for_range(
            "j",
            Some(Scalar::USize),
            zero,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let left = b.local("left", Some(Scalar::F32), None);
                let j = b.get(v[0]);
                let zero = b.lit_int(0, None);
                // `j >= 0` proves nothing about `j - 1`.
                let cond = b.binary(if strict { BinaryOp::Gt } else { BinaryOp::Ge }, j, zero);
                b.if_(
                    cond,
                    |b| {
                        let j = b.get(v[0]);
                        let one = b.lit_int(1, None);
                        let k = b.binary(BinaryOp::Sub, j, one);
                        let x = b.load(a, k);
                        b.set(left, x);
                    },
                    |b| {
                        let j = b.get(v[0]);
                        let x = b.load(a, j);
                        b.set(left, x);
                    },
                );
                let j = b.get(v[0]);
                let one = b.lit_int(1, None);
                let k = b.binary(BinaryOp::Add, j, one);
                let n = b.param_scalar_value(0);
                let cond = b.binary(BinaryOp::Lt, k, n);
                b.if_(
                    cond,
                    |b| {
                        let j = b.get(v[0]);
                        let one = b.lit_int(1, None);
                        let k = b.binary(BinaryOp::Add, j, one);
                        let x = b.load(a, k);
                        let l = b.get(left);
                        let s = b.binary(BinaryOp::Add, l, x);
                        let j = b.get(v[0]);
                        b.store(out, j, s);
                    },
                    |_| {},
                );
            },
        );
        b.finish().expect("valid IR")
    }

    /// `for i in 0..n { out[i] = (i + big) as f32 }`: in bounds whatever `big` is; its
    /// `usize` values fit 32 bits only for a small `big`.
    #[test]
    fn index_values_fit_32_bits_only_where_every_usize_does() {
        let mut b = KernelBuilder::new("offsets");
        let n = b.param_scalar("n", Scalar::USize);
        let _ = b.param_scalar("big", Scalar::USize);
        let out = b.param_array("out", Scalar::F32, true);
        let zero = b.lit_int(0, None);
        b.for_range(
            "i",
            Some(Scalar::USize),
            zero,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let i = b.get(v[0]);
                let big = b.param_scalar_value(1);
                let s = b.binary(BinaryOp::Add, i, big);
                let x = b.cast(s, Scalar::F32);
                let i = b.get(v[0]);
                b.store(out, i, x);
            },
        );
        let k = b.finish().expect("valid IR");
        let n = 64usize;
        for (big, fits) in [(5u64, true), (1u64 << 40, false)] {
            let mut out = vec![0f32; n];
            let args = [
                KernelArg::Scalar(ScalarValue::USize(n as u64)),
                KernelArg::Scalar(ScalarValue::USize(big)),
                KernelArg::Write(unsafe_bytes_mut(&mut out)),
            ];
            let proof = prove(&k, &args, true);
            assert!(proof.in_bounds, "big {big}");
            assert_eq!(proof.fits_32, fits, "big {big}");
        }
    }

    /// `for i in 0..n { out[keys[i] as usize % m] = 1.0 }`: a loaded key is any `u32`, and
    /// the remainder bounds the index whatever it is.
    #[test]
    fn a_remainder_of_a_loaded_value_is_in_bounds() {
        let mut b = KernelBuilder::new("bins");
        let n = b.param_scalar("n", Scalar::USize);
        let _ = b.param_scalar("m", Scalar::USize);
        let keys = b.param_array("keys", Scalar::U32, false);
        let out = b.param_array("out", Scalar::F32, true);
        let zero = b.lit_int(0, None);
        b.for_range(
            "i",
            Some(Scalar::USize),
            zero,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let i = b.get(v[0]);
                let key = b.load(keys, i);
                let key = b.cast(key, Scalar::USize);
                let m = b.param_scalar_value(1);
                let bin = b.binary(BinaryOp::Rem, key, m);
                let one = b.lit_float(1.0, Some(Scalar::F32));
                b.store(out, bin, one);
            },
        );
        let k = b.finish().expect("valid IR");
        let keys = vec![0u32; 100];
        let mut out = vec![0f32; 16];
        let key_bytes: &[u8] = unsafe {
            std::slice::from_raw_parts(keys.as_ptr().cast(), std::mem::size_of_val(&keys[..]))
        };
        for (m, ok) in [(16u64, true), (17, false)] {
            let args = [
                KernelArg::Scalar(ScalarValue::USize(100)),
                KernelArg::Scalar(ScalarValue::USize(m)),
                KernelArg::Read(key_bytes),
                KernelArg::Write(unsafe_bytes_mut(&mut out)),
            ];
            let proof = prove(&k, &args, true);
            assert_eq!(proof.in_bounds, ok, "m {m}");
            // A key may be any u32: its usize copy fits 32 bits.
            assert_eq!(proof.fits_32, ok, "m {m}");
        }
    }

    /// `for j in 0..n { j = j * 2; a[j] = 0 }` (`for mut j`): the variable leaves the loop's
    /// range, and the access is not proven.
    #[test]
    fn a_loop_variable_the_body_changes_has_no_range() {
        let mut b = KernelBuilder::new("doubled");
        let n = b.param_scalar("n", Scalar::USize);
        let a = b.param_array("a", Scalar::F32, true);
        let zero = b.lit_int(0, None);
        b.for_range(
            "j",
            Some(Scalar::USize),
            zero,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let j = b.get(v[0]);
                let two = b.lit_int(2, None);
                let d = b.binary(BinaryOp::Mul, j, two);
                b.set(v[0], d);
                let j = b.get(v[0]);
                let z = b.lit_float(0.0, None);
                b.store(a, j, z);
            },
        );
        let k = b.finish().expect("valid IR");
        let mut out = vec![0f32; 40];
        let args = [
            KernelArg::Scalar(ScalarValue::USize(40)),
            KernelArg::Write(unsafe_bytes_mut(&mut out)),
        ];
        assert!(!accesses_in_bounds(&k, &args));
    }

    /// `for i in 0..n { let b = bytes[i]; if b + 1 == 0 { out[i + n] = 1 } }` on `u8`: the sum
    /// wraps for `b = 255`, so the branch runs, and its access is not proven.
    #[test]
    fn a_comparison_that_wraps_narrows_nothing() {
        let mut b = KernelBuilder::new("wraps");
        let n = b.param_scalar("n", Scalar::USize);
        let bytes = b.param_array("bytes", Scalar::U8, false);
        let out = b.param_array("out", Scalar::F32, true);
        let zero = b.lit_int(0, None);
        b.for_range(
            "i",
            Some(Scalar::USize),
            zero,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let i = b.get(v[0]);
                let x = b.load(bytes, i);
                let byte = b.local("b", Some(Scalar::U8), Some(x));
                let bv = b.get(byte);
                let one = b.lit_int(1, None);
                let sum = b.binary(BinaryOp::Add, bv, one);
                let zero = b.lit_int(0, None);
                let wrapped = b.binary(BinaryOp::Eq, sum, zero);
                b.if_(
                    wrapped,
                    |b| {
                        let i = b.get(v[0]);
                        let at = b.binary(BinaryOp::Add, i, n);
                        let z = b.lit_float(1.0, None);
                        b.store(out, at, z);
                    },
                    |_| {},
                );
            },
        );
        let k = b.finish().expect("valid IR");
        let bytes_in = vec![255u8; 10];
        let mut o = vec![0f32; 10];
        let args = [
            KernelArg::Scalar(ScalarValue::USize(10)),
            KernelArg::Read(&bytes_in),
            KernelArg::Write(unsafe_bytes_mut(&mut o)),
        ];
        assert!(!accesses_in_bounds(&k, &args));
    }

    /// `for i in 0..n { if i >= limit { a[i + 1000] = 0 } }`: with `limit` at least `n` the
    /// branch never runs, and its access is not held against the launch.
    #[test]
    fn a_branch_no_iteration_takes_is_not_checked() {
        let mut b = KernelBuilder::new("dead");
        let n = b.param_scalar("n", Scalar::USize);
        let limit = b.param_scalar("limit", Scalar::USize);
        let a = b.param_array("a", Scalar::F32, true);
        let zero = b.lit_int(0, None);
        b.for_range(
            "i",
            Some(Scalar::USize),
            zero,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let i = b.get(v[0]);
                let far = b.binary(BinaryOp::Ge, i, limit);
                b.if_(
                    far,
                    |b| {
                        let i = b.get(v[0]);
                        let k = b.lit_int(1000, None);
                        let at = b.binary(BinaryOp::Add, i, k);
                        let z = b.lit_float(0.0, None);
                        b.store(a, at, z);
                    },
                    |_| {},
                );
            },
        );
        let k = b.finish().expect("valid IR");
        for (limit, ok) in [(40u64, true), (39, false)] {
            let mut out = vec![0f32; 40];
            let args = [
                KernelArg::Scalar(ScalarValue::USize(40)),
                KernelArg::Scalar(ScalarValue::USize(limit)),
                KernelArg::Write(unsafe_bytes_mut(&mut out)),
            ];
            assert_eq!(accesses_in_bounds(&k, &args), ok, "limit {limit}");
        }
    }

    #[test]
    fn branch_conditions_bound_the_accesses_they_guard() {
        let n = 40usize;
        let src = vec![0f32; n];
        for (strict, ok) in [(true, true), (false, false)] {
            let mut out = vec![0f32; n];
            let args = [
                KernelArg::Scalar(ScalarValue::USize(n as u64)),
                KernelArg::Read(bytes(&src)),
                KernelArg::Write(unsafe_bytes_mut(&mut out)),
            ];
            assert_eq!(
                accesses_in_bounds(&neighbours(strict), &args),
                ok,
                "strict {strict}"
            );
        }
    }

    #[test]
    fn a_collapsed_stencil_is_proven_and_one_past_the_end_is_not() {
        let (n, m) = (30usize, 20usize);
        let src = vec![0f32; n * m];
        let mut a = vec![0f32; n * m];
        // Reads b[j*m + i + k]: the largest index is (n-2)*m + (m-2) + k.
        for (k, ok) in [(0, true), (m as i128 + 1, true), (m as i128 + 2, false)] {
            let args = [
                KernelArg::Scalar(ScalarValue::USize(n as u64)),
                KernelArg::Scalar(ScalarValue::USize(m as u64)),
                KernelArg::Write(unsafe_bytes_mut(&mut a)),
                KernelArg::Read(bytes(&src)),
            ];
            assert_eq!(accesses_in_bounds(&stencil(k), &args), ok, "offset {k}");
        }
    }
}
