//! Integer index expressions as sums of terms with constant coefficients, so that two indices
//! can be compared symbolically: `a[j * m + i + 1]` is two elements after `a[j * m + i - 1]`
//! (what [`super::cache_staging`] needs to read a staged window in place of the array).
//!
//! A term is a local, a parameter, an array length, or a product of those (`j * m`), named by
//! its factors in order; products of sums are multiplied out, so `(j - 1) * m` is `j * m - m`. Locals assigned once, at the top
//! of a loop body, stand for what they were assigned ([`Affine::of`] with their forms), so
//! `let c = j * m + i; a[c - 1]` is seen through `c`. Index arithmetic wraps at the type's
//! width, so a difference computed here is the difference of the values the device computes
//! modulo 2^64: a small constant difference is exact.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::*;

/// `constant + sum(coefficient * term)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    pub terms: BTreeMap<String, i128>,
    pub constant: i128,
}

/// What [`Affine::of`] reads locals as: the forms of locals assigned once (by their
/// assignment's value), and the locals whose value is not one form at a given point (assigned
/// more than once, or in nested code), which no form may read.
#[derive(Clone, Debug, Default)]
pub struct Forms {
    pub known: HashMap<LocalId, Affine>,
    pub unstable: HashSet<LocalId>,
    /// Variables of the loops around the expression being read, each a term of its own
    /// (although their loops assign them): the caller knows their ranges.
    pub loop_vars: HashSet<LocalId>,
}

impl Affine {
    fn constant(c: i128) -> Affine {
        Affine {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    fn term(name: String) -> Affine {
        Affine {
            terms: BTreeMap::from([(name, 1)]),
            constant: 0,
        }
    }

    /// The constant it is, when it has no terms.
    pub fn as_constant(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.constant)
    }

    fn scaled(mut self, k: i128) -> Affine {
        for c in self.terms.values_mut() {
            *c *= k;
        }
        self.constant *= k;
        self.terms.retain(|_, c| *c != 0);
        self
    }

    fn plus(mut self, o: Affine) -> Affine {
        for (t, c) in o.terms {
            *self.terms.entry(t).or_insert(0) += c;
        }
        self.terms.retain(|_, c| *c != 0);
        self.constant += o.constant;
        self
    }

    /// `self - o`.
    pub fn minus(self, o: Affine) -> Affine {
        self.plus(o.scaled(-1))
    }

    /// `self * o`, multiplied out: each term a product of factors named in order.
    fn times(&self, o: &Affine) -> Option<Affine> {
        let with_constant = |a: &Affine| -> Vec<(Vec<String>, i128)> {
            let mut v: Vec<(Vec<String>, i128)> = a
                .terms
                .iter()
                .map(|(t, c)| (t.split('*').map(str::to_string).collect(), *c))
                .collect();
            v.push((Vec::new(), a.constant));
            v
        };
        let mut out = Affine::default();
        for (fa, ca) in with_constant(self) {
            for (fb, cb) in with_constant(o) {
                let c = ca.checked_mul(cb)?;
                if c == 0 {
                    continue;
                }
                let mut factors: Vec<String> = fa.iter().chain(&fb).cloned().collect();
                factors.sort();
                if factors.is_empty() {
                    out.constant += c;
                } else {
                    *out.terms.entry(factors.join("*")).or_insert(0) += c;
                }
            }
        }
        out.terms.retain(|_, c| *c != 0);
        Some(out)
    }

    /// `e` as an affine form of integer type `ty`'s arithmetic, or `None` where it reads an
    /// unstable local, memory, or anything but integer `+ - *`, same-width casts and values.
    /// `types` are the expressions' types ([`super::validate::expr_types`]).
    pub fn of(f: &Function, types: &[Scalar], e: Handle<Expr>, forms: &Forms) -> Option<Affine> {
        let ty = *types.get(e.index())?;
        if !ty.is_int() {
            return None;
        }
        Some(match &f.exprs[e] {
            Expr::Literal(Literal::Int(_, v)) => Affine::constant(*v),
            Expr::Local(l) if forms.loop_vars.contains(l) => Affine::term(format!("l{l}")),
            Expr::Local(l) => {
                if forms.unstable.contains(l) {
                    return None;
                }
                match forms.known.get(l) {
                    Some(form) => form.clone(),
                    None => Affine::term(format!("l{l}")),
                }
            }
            Expr::Param(p) => Affine::term(format!("p{p}")),
            Expr::Len(p) => Affine::term(format!("n{p}")),
            Expr::Cast(a, t) => {
                // A cast between integers of the same width keeps the bits.
                let from = *types.get(a.index())?;
                if !(from.is_int() && from.size() == t.size()) {
                    return None;
                }
                Affine::of(f, types, *a, forms)?
            }
            Expr::Binary(BinaryOp::Add, a, b) => {
                Affine::of(f, types, *a, forms)?.plus(Affine::of(f, types, *b, forms)?)
            }
            Expr::Binary(BinaryOp::Sub, a, b) => {
                Affine::of(f, types, *a, forms)?.minus(Affine::of(f, types, *b, forms)?)
            }
            Expr::Binary(BinaryOp::Mul, a, b) => {
                let (x, y) = (
                    Affine::of(f, types, *a, forms)?,
                    Affine::of(f, types, *b, forms)?,
                );
                match (x.as_constant(), y.as_constant()) {
                    (Some(k), _) => y.scaled(k),
                    (_, Some(k)) => x.scaled(k),
                    _ => x.times(&y)?,
                }
            }
            _ => return None,
        })
    }
}

/// The forms of the locals `body` assigns exactly once, at its top level, before statement
/// `at` (each by what it was assigned, read through the forms before it); the locals it
/// assigns otherwise are unstable. `outer` are forms known before the body.
pub fn forms_before(
    f: &Function,
    types: &[Scalar],
    body: &[Stmt],
    at: usize,
    outer: &Forms,
) -> Forms {
    let mut count: HashMap<LocalId, usize> = HashMap::new();
    walk::for_each_stmt(body, &mut |s| match s {
        Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } => {
            *count.entry(*local).or_insert(0) += 1;
        }
        Stmt::For {
            levels,
            reductions,
            private,
            ..
        } => {
            let set = levels
                .iter()
                .map(|lv| lv.var)
                .chain(reductions.iter().map(|r| r.local))
                .chain(private.iter().copied());
            for l in set {
                *count.entry(l).or_insert(0) += 2;
            }
        }
        Stmt::Atomic { op, old, new, .. } => {
            for l in old.iter().chain(new).copied().chain(op.combine_local()) {
                *count.entry(l).or_insert(0) += 2;
            }
        }
        _ => {}
    });
    let top: HashSet<LocalId> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::Assign { local, .. } => Some(*local),
            _ => None,
        })
        .collect();
    let mut forms = outer.clone();
    for (l, n) in &count {
        if *n > 1 || !top.contains(l) {
            forms.unstable.insert(*l);
        }
    }
    // Until its assignment, a once-assigned local holds a value from before the body (or an
    // earlier iteration's): unstable there too.
    let later: HashSet<LocalId> = body[at.min(body.len())..]
        .iter()
        .filter_map(|s| match s {
            Stmt::Assign { local, .. } => Some(*local),
            _ => None,
        })
        .collect();
    forms.unstable.extend(later);
    for s in &body[..at.min(body.len())] {
        if let Stmt::Assign { local, value } = s {
            if forms.unstable.contains(local) {
                continue;
            }
            match Affine::of(f, types, *value, &forms) {
                Some(form) => {
                    forms.known.insert(*local, form);
                }
                None => {
                    forms.unstable.insert(*local);
                }
            }
        }
    }
    forms
}

/// The value of `e` where it is a constant given `forms` (literals, locals whose form is a
/// constant, integer arithmetic, comparisons, selects and integer casts that keep the value):
/// a loop's trip count computed from constant bounds.
pub fn constant(f: &Function, types: &[Scalar], e: Handle<Expr>, forms: &Forms) -> Option<i128> {
    let c = |h: Handle<Expr>| constant(f, types, h, forms);
    Some(match &f.exprs[e] {
        Expr::Literal(Literal::Int(_, v)) => *v,
        Expr::Literal(Literal::Bool(b)) => i128::from(*b),
        Expr::Local(_) => Affine::of(f, types, e, forms)?.as_constant()?,
        Expr::Cast(a, t) if t.is_int() => {
            let v = c(*a)?;
            let bits = t.size() * 8;
            let (lo, hi) = if t.is_signed() {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if !(lo..=hi).contains(&v) {
                return None;
            }
            v
        }
        Expr::Binary(op, a, b) => {
            let (x, y) = (c(*a)?, c(*b)?);
            match op {
                BinaryOp::Add => x.checked_add(y)?,
                BinaryOp::Sub => x.checked_sub(y)?,
                BinaryOp::Mul => x.checked_mul(y)?,
                BinaryOp::Lt => i128::from(x < y),
                BinaryOp::Le => i128::from(x <= y),
                BinaryOp::Gt => i128::from(x > y),
                BinaryOp::Ge => i128::from(x >= y),
                BinaryOp::Eq => i128::from(x == y),
                BinaryOp::Ne => i128::from(x != y),
                _ => return None,
            }
        }
        Expr::Select {
            cond,
            accept,
            reject,
        } => {
            if c(*cond)? != 0 {
                c(*accept)?
            } else {
                c(*reject)?
            }
        }
        _ => return None,
    })
}
