//! Which sequential loops of a region the host drives ([`super::Op::Repeat`]).
//!
//! A sequential loop at the region's top level (or in the body of such a loop) is driven by the
//! host when its body holds a parallel loop (or a loop or `if` the host drives) at its own top
//! level, nothing in its body leaves it
//! (`break`, `continue`), its variable is not assigned in its body, and its range (start, step
//! and trip count) is *host-known*: computed from the arguments, array lengths, literals and
//! host-known locals only. A local is host-known where the only assignment of it in the whole
//! kernel is a top-level one (of the region or of a host-driven loop's body) of a host-known
//! value before the loop, or where it is the variable of an enclosing host-driven loop. Every
//! other sequential loop runs on one thread as before, parallel loops inside it included.
//! Likewise an `if` at host level whose condition is host-known and a branch of which holds
//! parallel loops is decided by the host, which launches the chosen branch's entry points (a
//! time loop alternating its arrays: `if t % 2 == 0 { b = f(a) } else { a = f(b) }`).

use std::collections::{HashMap, HashSet};

use super::super::*;

/// The host-driven loops of a kernel (by loop variable), and what the split needs to know of
/// them.
#[derive(Clone, Debug, Default)]
pub struct HostLoops {
    /// How many statements of the kernel write each local.
    writes: HashMap<LocalId, usize>,
    /// Why a sequential loop at host level around parallel loops is not driven (`ACC_INFO`).
    why_not: HashMap<LocalId, String>,
    driven: HashSet<LocalId>,
    /// The `if`s the host decides, by their condition.
    ifs: HashSet<Handle<Expr>>,
    used: HashSet<LocalId>,
    folded: HashSet<LocalId>,
}

impl HostLoops {
    /// Decides which of `k`'s sequential loops the host drives.
    pub fn new(k: &Kernel) -> HostLoops {
        match validate::expr_types(k) {
            Ok(types) => HostLoops::with_types(k, types),
            Err(_) => HostLoops::default(),
        }
    }

    /// [`HostLoops::new`] with `k`'s expression types, from the validator.
    pub fn with_types(k: &Kernel, types: Vec<Scalar>) -> HostLoops {
        let mut writes: HashMap<LocalId, usize> = HashMap::new();
        let mut written = Vec::new();
        super::written_locals(&k.function.body, &mut written);
        for l in written {
            *writes.entry(l).or_default() += 1;
        }
        let mut a = Analysis {
            k,
            types,
            writes,
            known: HashSet::new(),
            driven: HashSet::new(),
            ifs: HashSet::new(),
            why_not: HashMap::new(),
        };
        a.block(&k.function.body);
        let mut read = HashSet::new();
        walk::for_each_stmt(&k.function.body, &mut |s| {
            for h in walk::stmt_exprs(s) {
                walk::locals_read(&k.function, h, &mut read);
            }
        });
        if let Some(r) = k.result {
            read.insert(r);
        }
        let used = read.intersection(&a.driven).copied().collect();
        // Compute-level reductions that a loop in a repeated body or in a branch the host
        // decides reduces fold on the device, wherever they are reduced: partials read once at
        // the end would hold only the last launch's, or a launch that did not happen.
        let mut folded = HashSet::new();
        walk::for_each_stmt(&k.function.body, &mut |s| {
            let bodies: Vec<&Block> = match s {
                Stmt::For {
                    levels,
                    schedule: None,
                    body,
                    ..
                } if levels.first().is_some_and(|l| a.driven.contains(&l.var)) => vec![body],
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } if a.ifs.contains(cond) => vec![accept, reject],
                _ => Vec::new(),
            };
            for b in bodies {
                walk::for_each_stmt(b, &mut |s| {
                    if let Stmt::For {
                        schedule: Some(_),
                        reductions,
                        ..
                    } = s
                    {
                        folded.extend(reductions.iter().map(|r| r.local));
                    }
                });
            }
        });
        HostLoops {
            writes: a.writes,
            why_not: a.why_not,
            driven: a.driven,
            ifs: a.ifs,
            used,
            folded,
        }
    }

    /// How many statements of the kernel write local `l` (assignments, loops, reductions,
    /// atomic captures).
    pub fn writes(&self, l: LocalId) -> usize {
        self.writes.get(&l).copied().unwrap_or(0)
    }

    /// Whether `s` is a loop the host drives.
    pub fn driven(&self, s: &Stmt) -> bool {
        match s {
            Stmt::For {
                levels,
                schedule: None,
                ..
            } => levels.first().is_some_and(|l| self.driven.contains(&l.var)),
            _ => false,
        }
    }

    /// Whether `s` is an `if` the host decides: at host level, its condition host-known, a
    /// branch holding parallel loops (`if t % 2 == 0 { a -> b } else { b -> a }`).
    pub fn decided(&self, s: &Stmt) -> bool {
        matches!(s, Stmt::If { cond, .. } if self.ifs.contains(cond))
    }

    /// Why the host does not drive the sequential loop of variable `v` at host level, whose
    /// body holds parallel loops (`None` for other loops).
    pub fn why_not(&self, v: LocalId) -> Option<&str> {
        self.why_not.get(&v).map(String::as_str)
    }

    /// Whether the code reads host loop variable `v` (else the device need not know it).
    pub fn var_used(&self, v: LocalId) -> bool {
        self.used.contains(&v)
    }

    /// Whether the loops reducing `local` fold their partials on the device (a repeated loop
    /// reduces it).
    pub fn folded(&self, local: LocalId) -> bool {
        self.folded.contains(&local)
    }

    /// The driven loops' variables.
    pub fn vars(&self) -> &HashSet<LocalId> {
        &self.driven
    }
}

struct Analysis<'k> {
    k: &'k Kernel,
    types: Vec<Scalar>,
    writes: HashMap<LocalId, usize>,
    known: HashSet<LocalId>,
    driven: HashSet<LocalId>,
    ifs: HashSet<Handle<Expr>>,
    why_not: HashMap<LocalId, String>,
}

impl Analysis<'_> {
    fn block(&mut self, b: &[Stmt]) {
        for s in b {
            match s {
                Stmt::Assign { local, value }
                    if self.writes.get(local) == Some(&1) && self.host_known(*value) =>
                {
                    self.known.insert(*local);
                }
                Stmt::For {
                    levels,
                    schedule: None,
                    reductions,
                    private,
                    tile,
                    body,
                } if has_parallel_loop(body) => {
                    let lv = &levels[0];
                    let why = if levels.len() != 1 || !tile.is_empty() {
                        Some("it is a collapsed or tiled sequential nest")
                    } else if !reductions.is_empty() || !private.is_empty() {
                        Some("it has `reduction` or `private` clauses")
                    } else if self.writes.get(&lv.var) != Some(&1) {
                        Some("its variable is assigned in its body")
                    } else if ![lv.trips, lv.start, lv.step]
                        .iter()
                        .all(|h| self.host_known(*h))
                    {
                        Some("its range is not computed from the arguments and the assignments before it alone (it reads a value the device computes, or a local assigned more than once)")
                    } else if leaves(body) {
                        Some("`break` or `continue` may leave it")
                    } else if reduces_arrays(self.k, body) {
                        Some("a parallel loop in it reduces into an array")
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        self.why_not.insert(lv.var, why.to_string());
                        continue;
                    }
                    let (known, driven, ifs) =
                        (self.known.clone(), self.driven.clone(), self.ifs.clone());
                    self.known.insert(lv.var);
                    self.block(body);
                    if self.holds(body) {
                        self.driven.insert(lv.var);
                    } else {
                        (self.known, self.driven, self.ifs) = (known, driven, ifs);
                        self.why_not.insert(
                            lv.var,
                            "its parallel loops are not directly in its body (they are inside an `if` or a loop the host cannot decide)".into(),
                        );
                    }
                }
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } if self.host_known(*cond)
                    && !leaves(accept)
                    && !leaves(reject)
                    && !reduces_arrays(self.k, accept)
                    && !reduces_arrays(self.k, reject) =>
                {
                    let (known, driven, ifs) =
                        (self.known.clone(), self.driven.clone(), self.ifs.clone());
                    self.block(accept);
                    self.block(reject);
                    if self.holds(accept) || self.holds(reject) {
                        self.ifs.insert(*cond);
                        // (What a branch assigns is known after the `if` only where both
                        // branches assign it alike: forget it.)
                        self.known = known;
                    } else {
                        (self.known, self.driven, self.ifs) = (known, driven, ifs);
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether `b` has, at its top level, a parallel loop or a loop or `if` the host drives.
    fn holds(&self, b: &[Stmt]) -> bool {
        b.iter().any(|s| match s {
            Stmt::For {
                schedule: Some(_), ..
            } => true,
            Stmt::For {
                levels,
                schedule: None,
                ..
            } => levels.first().is_some_and(|l| self.driven.contains(&l.var)),
            Stmt::If { cond, .. } => self.ifs.contains(cond),
            _ => false,
        })
    }

    /// Whether the host can compute `h` from what it knows.
    fn host_known(&self, h: Handle<Expr>) -> bool {
        if self.types.get(h.index()).is_none_or(|t| t.is_float()) {
            return false;
        }
        match &self.k.function.exprs[h] {
            Expr::Literal(Literal::Int(..) | Literal::Bool(_)) | Expr::Len(_) => true,
            Expr::Param(p) => matches!(
                self.k.params.get(*p as usize).map(|p| &p.kind),
                Some(ParamKind::Scalar(t)) if !t.is_float()
            ),
            Expr::Local(l) => self.known.contains(l),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.host_known(*a),
            Expr::Binary(_, a, b) => self.host_known(*a) && self.host_known(*b),
            Expr::Math(MathFn::Min | MathFn::Max, args) => args.iter().all(|a| self.host_known(*a)),
            Expr::Select {
                cond,
                accept,
                reject,
            } => self.host_known(*cond) && self.host_known(*accept) && self.host_known(*reject),
            _ => false,
        }
    }
}

/// Whether `b` holds a parallel loop anywhere.
fn has_parallel_loop(b: &[Stmt]) -> bool {
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

/// Whether `b` has a `break` or `continue` of the loop whose body it is.
fn leaves(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::Break | Stmt::Continue => true,
        Stmt::If { accept, reject, .. } => leaves(accept) || leaves(reject),
        _ => false,
    })
}

/// Whether a parallel loop in `b` reduces into an array (which no fold entry holds yet).
fn reduces_arrays(k: &Kernel, b: &[Stmt]) -> bool {
    let mut found = false;
    walk::for_each_stmt(b, &mut |s| {
        if let Stmt::For {
            schedule: Some(_),
            reductions,
            ..
        } = s
        {
            found |= reductions
                .iter()
                .any(|r| k.function.locals[r.local as usize].len.is_some());
        }
    });
    found
}
