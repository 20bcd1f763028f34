//! `tile` (3.3 section 2.9.8): a tiled nest of n loops runs as n tile loops around n element
//! loops. [`expand`] rewrites the IR so; backends lower what it gives. The tile loops take the
//! nest's gang level (and worker, when vector is present), the element loops its vector (or
//! worker) level, so that on a GPU a gang runs the elements of its tile on its threads.
//!
//! ```text
//! for i, j tile[8, 32] { body }
//! ```
//! becomes
//! ```text
//! for ti in 0..ceil(ni / 8), tj in 0..ceil(nj / 32) gang {
//!     for ei in 0..8, ej in 0..32 vector {
//!         if ti * 8 + ei < ni && tj * 32 + ej < nj {
//!             i = start_i + (ti * 8 + ei) * step_i;  j = ...;  body
//!         }
//!     }
//! }
//! ```
//! The levels' start, step and trip count are evaluated where they are used; a nest whose body
//! assigns a local they read runs untiled instead (as a collapsed nest: the same iterations).

use std::borrow::Cow;
use std::collections::HashSet;

use super::*;

/// The sizes `tile(*, ..)` stands for, in `tile(..)`'s order (innermost loop first): tiles of
/// 256 elements, as wide as possible along the innermost loop (32 x 8 for two loops, the rest
/// 1), one element per thread of a 256-thread block or workgroup.
pub fn default_sizes(n: usize) -> Vec<u32> {
    match n {
        0 => vec![],
        1 => vec![256],
        _ => {
            let mut v = vec![32, 8];
            v.resize(n, 1);
            v
        }
    }
}

/// How many tiles of `size` cover `trips` iterations.
pub fn tiles(trips: u64, size: u32) -> u64 {
    trips.div_ceil(u64::from(size.max(1)))
}

/// `k` with every tiled nest rewritten as tile loops around element loops; `k` itself when it
/// has none.
pub fn expand(k: &Kernel) -> Cow<'_, Kernel> {
    if !has_tile(&k.function.body) {
        return Cow::Borrowed(k);
    }
    let mut out = k.clone();
    let body = std::mem::take(&mut out.function.body);
    out.function.body = block(&mut out.function, body);
    Cow::Owned(out)
}

fn has_tile(b: &Block) -> bool {
    let mut found = false;
    walk::for_each_stmt(b, &mut |s| {
        found |= matches!(s, Stmt::For { tile, .. } if !tile.is_empty());
    });
    found
}

fn block(f: &mut Function, b: Block) -> Block {
    b.into_iter().map(|s| stmt(f, s)).collect()
}

fn stmt(f: &mut Function, s: Stmt) -> Stmt {
    match s {
        Stmt::If {
            cond,
            accept,
            reject,
        } => Stmt::If {
            cond,
            accept: block(f, accept),
            reject: block(f, reject),
        },
        Stmt::Loop { body } => Stmt::Loop {
            body: block(f, body),
        },
        Stmt::For {
            levels,
            schedule,
            reductions,
            private,
            tile,
            body,
        } => {
            let body = block(f, body);
            if tile.is_empty() || bounds_assigned(f, &levels, &body) {
                return Stmt::For {
                    levels,
                    schedule,
                    reductions,
                    private,
                    tile: Vec::new(),
                    body,
                };
            }
            tiled(f, levels, schedule, reductions, private, &tile, body)
        }
        other => other,
    }
}

/// The nest's tile loops around its element loops (see the module's documentation).
fn tiled(
    f: &mut Function,
    levels: Vec<LoopLevel>,
    schedule: Option<Schedule>,
    reductions: Vec<Reduction>,
    private: Vec<LocalId>,
    sizes: &[u32],
    body: Block,
) -> Stmt {
    let lit = |f: &mut Function, v: u32| {
        f.exprs
            .append(Expr::Literal(Literal::Int(Scalar::USize, i128::from(v))))
    };
    let (mut tile_levels, mut element_levels) = (Vec::new(), Vec::new());
    let (mut inside, mut set_vars) = (None, Vec::new());
    for (lv, &size) in levels.iter().zip(sizes) {
        let name = f.locals[lv.var as usize].name.clone();
        let var = |f: &mut Function, what: &str| {
            f.locals.push(Local {
                name: format!("{name}_{what}"),
                ty: Scalar::USize,
                len: None,
            });
            (f.locals.len() - 1) as LocalId
        };
        let (t, e) = (var(f, "tile"), var(f, "element"));
        let (zero, one, s) = (lit(f, 0), lit(f, 1), lit(f, size));
        // ceil(trips / size), without the overflow of (trips + size - 1) / size.
        let whole = f.exprs.append(Expr::Binary(BinaryOp::Div, lv.trips, s));
        let rest = f.exprs.append(Expr::Binary(BinaryOp::Rem, lv.trips, s));
        let partial = f.exprs.append(Expr::Binary(BinaryOp::Ne, rest, zero));
        let extra = f.exprs.append(Expr::Select {
            cond: partial,
            accept: one,
            reject: zero,
        });
        let count = f.exprs.append(Expr::Binary(BinaryOp::Add, whole, extra));
        tile_levels.push(LoopLevel {
            var: t,
            start: zero,
            step: one,
            trips: count,
            line: lv.line,
        });
        element_levels.push(LoopLevel {
            var: e,
            start: zero,
            step: one,
            trips: s,
            line: lv.line,
        });
        // The iteration: t * size + e, inside the nest when below its trip count.
        let (tv, ev) = (
            f.exprs.append(Expr::Local(t)),
            f.exprs.append(Expr::Local(e)),
        );
        let base = f.exprs.append(Expr::Binary(BinaryOp::Mul, tv, s));
        let k = f.exprs.append(Expr::Binary(BinaryOp::Add, base, ev));
        let within = f.exprs.append(Expr::Binary(BinaryOp::Lt, k, lv.trips));
        inside = Some(match inside {
            None => within,
            Some(c) => f.exprs.append(Expr::Binary(BinaryOp::And, c, within)),
        });
        let ty = f.locals[lv.var as usize].ty;
        let k = f.exprs.append(Expr::Cast(k, ty));
        let offset = f.exprs.append(Expr::Binary(BinaryOp::Mul, k, lv.step));
        let value = f
            .exprs
            .append(Expr::Binary(BinaryOp::Add, lv.start, offset));
        set_vars.push(Stmt::Assign {
            local: lv.var,
            value,
        });
    }
    // Adjacent threads take adjacent elements of the innermost element loop. Where every
    // store of the body is contiguous along another loop of the nest (a transpose,
    // `b[j * n + i] = a[i * n + j]`), that loop goes innermost instead: the stores are then
    // coalesced, and the strided loads of a tile share the cache lines the tile's other
    // threads bring in.
    if let Some(at) = store_contiguous_level(f, &levels, &body) {
        let last = element_levels.len() - 1;
        if at != last {
            let lv = element_levels.remove(at);
            element_levels.push(lv);
        }
    }
    let mut guarded = set_vars;
    guarded.extend(body);
    let element_body = vec![Stmt::If {
        cond: inside.expect("a nest has a level"),
        accept: guarded,
        reject: Vec::new(),
    }];
    // 3.3 section 2.9.8: gang goes to the tile loops; vector to the element loops; worker to
    // the element loops, or to the tile loops when vector is there too.
    let (outer, inner) = match schedule {
        None => (None, None),
        Some(s) => (
            Some(Schedule {
                gang: s.gang,
                worker: s.worker && s.vector,
                vector: false,
            }),
            (s.vector || s.worker).then_some(Schedule {
                gang: false,
                worker: s.worker && !s.vector,
                vector: s.vector,
            }),
        ),
    };
    Stmt::For {
        levels: tile_levels,
        schedule: outer,
        reductions: reductions.clone(),
        private: Vec::new(),
        tile: Vec::new(),
        body: vec![Stmt::For {
            levels: element_levels,
            schedule: inner,
            reductions,
            private,
            tile: Vec::new(),
            body: element_body,
        }],
    }
}

/// Whether `body` assigns a local that the levels' start, step or trip count read.
fn bounds_assigned(f: &Function, levels: &[LoopLevel], body: &Block) -> bool {
    let mut read = HashSet::new();
    for lv in levels {
        for h in [lv.start, lv.step, lv.trips] {
            walk::locals_read(f, h, &mut read);
        }
    }
    !read.is_empty() && walk::assigns(body, &|l| read.contains(&l))
}

/// The level of the nest along which every store of `body` is contiguous (its variable a plain
/// term of each store's index, no other level's is), when there is exactly one such level and
/// the body stores at all.
pub fn store_contiguous_level(f: &Function, levels: &[LoopLevel], body: &Block) -> Option<usize> {
    let mut indices = Vec::new();
    let mut other_writes = false;
    walk::for_each_stmt(body, &mut |s| match s {
        Stmt::Store { index, .. } => indices.push(*index),
        Stmt::Atomic { .. } => other_writes = true,
        _ => {}
    });
    if indices.is_empty() || other_writes {
        return None;
    }
    let unit: Vec<usize> = (0..levels.len())
        .filter(|&l| {
            indices
                .iter()
                .all(|&i| plain_term(f, i, levels[l].var) && levels.iter().enumerate().all(|(m, o)| m == l || !plain_term(f, i, o.var)))
        })
        .collect();
    match unit.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Whether `var` is a plain term of the sum `e` (`... + var + ...`, through casts), so that
/// consecutive values of `var` give consecutive values of `e`.
fn plain_term(f: &Function, e: Handle<Expr>, var: LocalId) -> bool {
    match &f.exprs[e] {
        Expr::Local(l) => *l == var,
        Expr::Cast(x, _) => plain_term(f, *x, var),
        Expr::Binary(BinaryOp::Add, a, b) => plain_term(f, *a, var) != plain_term(f, *b, var),
        Expr::Binary(BinaryOp::Sub, a, _) => plain_term(f, *a, var),
        _ => false,
    }
}
