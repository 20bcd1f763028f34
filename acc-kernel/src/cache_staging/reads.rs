//! Which loads of a loop read inside a `cache` window, and where: the matching of index forms
//! [`super::stage`] substitutes the copy's reads by.

use std::collections::HashMap;

use super::super::affine::{constant, Affine, Forms};
use super::super::*;

/// Where a load reads in its window: `constant + sum(coefficient * loop variable)`, every value
/// of it inside the window.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Offset {
    pub(super) constant: u32,
    pub(super) terms: Vec<(LocalId, u32)>,
}

/// The loads in `b` of the windows' arrays at an index inside their window (see [`Offset`]):
/// (load, window, offset). `ranges` are the sequential loops around `b` whose variables have
/// constant ranges (first and last value).
pub(super) fn window_reads(
    f: &Function,
    types: &[Scalar],
    b: &[Stmt],
    forms: &Forms,
    ranges: &HashMap<LocalId, (i128, i128)>,
    windows: &[(ParamId, &Affine, u32)],
    out: &mut Vec<(Handle<Expr>, usize, Offset)>,
) {
    for s in b {
        let mut loads = Vec::new();
        for h in walk::stmt_exprs(s) {
            loads_in(f, h, &mut loads);
        }
        for h in loads {
            let Expr::Load {
                array,
                field: None,
                index,
            } = f.exprs[h]
            else {
                continue;
            };
            let Some(ix) = Affine::of(f, types, index, forms) else {
                continue;
            };
            for (w, &(a, lo, len)) in windows.iter().enumerate() {
                if a != array {
                    continue;
                }
                if let Some(offset) = inside(&ix.clone().minus(lo.clone()), ranges, len) {
                    out.push((h, w, offset));
                    break;
                }
            }
        }
        match s {
            Stmt::If { accept, reject, .. } => {
                window_reads(f, types, accept, forms, ranges, windows, out);
                window_reads(f, types, reject, forms, ranges, windows, out);
            }
            Stmt::For {
                schedule: None,
                levels,
                body,
                ..
            } => {
                let mut ranges = ranges.clone();
                let mut forms = forms.clone();
                for lv in levels {
                    // A variable the body assigns (`for mut k in ..`) leaves its range.
                    if walk::assigns(body, &|l| l == lv.var) {
                        continue;
                    }
                    forms.loop_vars.insert(lv.var);
                    let range = (|| {
                        let first = constant(f, types, lv.start, &forms)?;
                        let step = constant(f, types, lv.step, &forms)?;
                        let trips = constant(f, types, lv.trips, &forms)?;
                        (trips > 0 && step > 0).then(|| (first, first + (trips - 1) * step))
                    })();
                    if let Some(r) = range {
                        ranges.insert(lv.var, r);
                    }
                }
                window_reads(f, types, body, &forms, &ranges, windows, out);
            }
            Stmt::Loop { body } => window_reads(f, types, body, forms, ranges, windows, out),
            _ => {}
        }
    }
}

/// `d` (an index minus its window's start) as an [`Offset`] when every value it takes is
/// inside a window of `len`: a constant, plus loop variables of known ranges with positive
/// coefficients.
fn inside(d: &Affine, ranges: &HashMap<LocalId, (i128, i128)>, len: u32) -> Option<Offset> {
    let (mut lo, mut hi) = (d.constant, d.constant);
    let mut terms = Vec::new();
    for (t, &c) in &d.terms {
        let var: LocalId = t.strip_prefix('l')?.parse().ok()?;
        let &(first, last) = ranges.get(&var)?;
        if c <= 0 || first < 0 {
            return None;
        }
        lo += c * first;
        hi += c * last;
        terms.push((var, u32::try_from(c).ok()?));
    }
    // The offset is built as the constant plus the terms, each non-negative.
    (lo >= 0 && hi < i128::from(len) && d.constant >= 0).then_some(Offset {
        constant: d.constant as u32,
        terms,
    })
}

/// The loads `h` makes (those of a select's arms included: a read of a staged copy is safe
/// wherever the window's read was).
fn loads_in(f: &Function, h: Handle<Expr>, out: &mut Vec<Handle<Expr>>) {
    if matches!(f.exprs[h], Expr::Load { .. }) {
        out.push(h);
    }
    for x in walk::operands(&f.exprs[h]) {
        loads_in(f, x, out);
    }
}
