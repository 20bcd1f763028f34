//! Tiles whose elements each run a sequential loop over data the tile's other elements read
//! too: a matrix product's `k` loop, `s += a[i * n + k] * b[k * n + j]`. Without help every
//! element reads its row of `a` and column of `b` from global memory, the tile's threads
//! fetching the same values again and again. [`chunked`] rewrites the tile's body so that its
//! block runs the loop a chunk of iterations at a time: first the block copies the chunk's part
//! of each such array into shared memory (adjacent threads along the array's contiguous
//! direction), then every element runs the chunk's iterations reading the copies, its running
//! values (the loop's accumulators) kept from chunk to chunk in an array of the tile, one
//! element each. The plan ([`super::super::gang_phases`]) puts a barrier after the copy and
//! after the computation, as CUDA's shared-memory matrix product does.
//!
//! ```text
//! for i, j tile[16, 16] { s = 0; for k in 0..n { s += a[i * n + k] * b[k * n + j] } c[i * n + j] = s }
//! ```
//! becomes, for each tile (`e` an element of the tile, `inside` its guard):
//! ```text
//! for e (vector) { if inside { i, j = ..; s = 0; s_carry[e] = s } }
//! for c in 0..ceil(n / 16) {                    // every thread of the block, in step
//!     base = c * 16; len = min(16, n - base)
//!     for e (vector) { a_tile[..] = a[row of the tile, k in the chunk]; b_tile[..] = b[..] }
//!     for e (vector) { if inside { i, j = ..; s = s_carry[e];
//!                      for kk in 0..len { k = base + kk; s += a_tile[ei][kk] * b_tile[kk][ej] }
//!                      s_carry[e] = s } }
//! }
//! for e (vector) { if inside { i, j = ..; s = s_carry[e]; c[i * n + j] = s } }
//! ```

use std::collections::{HashMap, HashSet};

use super::*;

/// What [`chunked`] made of a tile's body.
pub(super) struct Chunked {
    /// The tile loop's new body.
    pub body: Block,
    /// The tile's arrays (copies of the chunks, accumulators), private to the tile's gang
    /// iteration: shared by its block.
    pub arrays: Vec<LocalId>,
    /// The arrays whose reads go through the copies, and the chunk's length, for ACC_INFO.
    pub staged: Vec<ParamId>,
    pub chunk: u32,
    /// The inner loop's variable.
    pub var: LocalId,
}

/// A load the chunks stage: where it is in the body, what it reads, and along which level of
/// the nest its index runs (`None`: it depends on the inner loop alone).
struct Staged {
    /// The array's name, for the copy's.
    name: String,
    load: Handle<Expr>,
    array: ParamId,
    field: Option<FieldId>,
    index: Handle<Expr>,
    ty: Scalar,
    level: Option<usize>,
    /// Whether the index is contiguous along the inner loop (else along the level).
    along_inner: bool,
}

/// What [`plan`] found in a tile's body: its parts, the loads to stage, the running values to
/// keep and the chunk's length.
pub(super) struct Plan<'b> {
    hoisted: Vec<Stmt>,
    before: Vec<Stmt>,
    inner_level: &'b LoopLevel,
    inner_body: &'b [Stmt],
    after: &'b [Stmt],
    staged: Vec<Staged>,
    carried: Vec<LocalId>,
    chunk: u32,
}

impl Plan<'_> {
    /// The inner loop's trip count where it is a constant (literal bounds, through the
    /// statements before the loop that set them).
    pub(super) fn constant_trips(&self, f: &Function) -> Option<i128> {
        fn value(f: &Function, h: Handle<Expr>, env: &HashMap<LocalId, i128>) -> Option<i128> {
            match &f.exprs[h] {
                Expr::Literal(Literal::Int(_, v)) => Some(*v),
                Expr::Local(l) => env.get(l).copied(),
                Expr::Cast(x, t) if t.is_int() => value(f, *x, env),
                Expr::Binary(op, a, b) => {
                    let (a, b) = (value(f, *a, env)?, value(f, *b, env)?);
                    match op {
                        BinaryOp::Add => a.checked_add(b),
                        BinaryOp::Sub => a.checked_sub(b),
                        BinaryOp::Mul => a.checked_mul(b),
                        BinaryOp::Div if b != 0 => Some(a / b),
                        BinaryOp::Lt => Some((a < b) as i128),
                        BinaryOp::Le => Some((a <= b) as i128),
                        BinaryOp::Gt => Some((a > b) as i128),
                        BinaryOp::Ge => Some((a >= b) as i128),
                        _ => None,
                    }
                }
                Expr::Select {
                    cond,
                    accept,
                    reject,
                } => {
                    if value(f, *cond, env)? != 0 {
                        value(f, *accept, env)
                    } else {
                        value(f, *reject, env)
                    }
                }
                _ => None,
            }
        }
        let mut env = HashMap::new();
        for s in &self.hoisted {
            if let Stmt::Assign { local, value: v } = s {
                if let Some(c) = value(f, *v, &env) {
                    env.insert(*local, c);
                }
            }
        }
        value(f, self.inner_level.trips, &env)
    }

    /// Whether a staged load is the same for every element (it depends on the inner loop's
    /// variable alone): what makes chunks worth it for a tile of one level.
    pub(super) fn shares_reads(&self) -> bool {
        self.staged.iter().any(|s| s.level.is_none())
    }
}

/// The tile's body rewritten to run its inner sequential loop in chunks staged through shared
/// memory (see the module's documentation), or `None` where [`plan`] finds it does not apply.
#[allow(clippy::too_many_arguments)]
pub(super) fn chunked(
    k: &Kernel,
    f: &mut Function,
    levels: &[LoopLevel],
    sizes: &[u32],
    tiles: &[LocalId],
    elements: &[LocalId],
    fastest: usize,
    inner: &Option<Schedule>,
    body: &Block,
) -> Option<Chunked> {
    let plan = plan(k, f, levels, sizes, body)?;
    if levels.len() == 1 && !plan.shares_reads() {
        return None;
    }
    let Plan {
        hoisted,
        before,
        inner_level,
        inner_body,
        after,
        staged,
        carried,
        chunk,
    } = plan;
    Some(build(
        f,
        Parts {
            levels,
            sizes,
            tiles,
            elements,
            fastest,
            inner,
            hoisted: &hoisted,
            before: &before,
            inner_level,
            inner_body,
            after,
        },
        staged,
        carried,
        chunk,
    ))
}

/// Whether and how a tile's body runs its inner loop in chunks: a tile of one or two levels
/// whose body is assignments of scalars, one sequential loop of one level whose bounds are the
/// same for every element and whose body assigns scalars only, then code without parallel
/// loops; the loop must read an array the kernel does not write at an index made of its
/// variable, at most one of the nest's variables and values the body does not assign (in a
/// tile of one level, which no other element shares, only where the index runs along the
/// loop, as threads reading it directly would not be adjacent); and the copies and
/// accumulators must fit [`SHARED_ARRAY_BYTES`](super::super::gang_phases::SHARED_ARRAY_BYTES).
pub(super) fn plan<'b>(
    k: &Kernel,
    f: &Function,
    levels: &[LoopLevel],
    sizes: &[u32],
    body: &'b Block,
) -> Option<Plan<'b>> {
    if !(1..=2).contains(&levels.len()) {
        return None;
    }
    // The shape: assignments, the loop, the rest.
    let at = body.iter().position(|s| matches!(s, Stmt::For { .. }))?;
    let (before, rest) = body.split_at(at);
    let (inner_loop, after) = rest.split_first()?;
    let Stmt::For {
        levels: kl,
        schedule: None,
        reductions,
        private,
        tile,
        body: kb,
    } = inner_loop
    else {
        return None;
    };
    let [kl] = kl.as_slice() else { return None };
    if !reductions.is_empty() || !private.is_empty() || !tile.is_empty() {
        return None;
    }
    let scalar_assign = |s: &Stmt| matches!(s, Stmt::Assign { .. });
    if !before.iter().all(scalar_assign) || !kb.iter().all(scalar_assign) {
        return None;
    }
    let (mut array_writes, mut parallel) = (false, false);
    walk::for_each_stmt(body, &mut |s| {
        array_writes |= matches!(s, Stmt::AssignElem { .. });
        parallel |= matches!(
            s,
            Stmt::For {
                schedule: Some(_),
                ..
            }
        );
    });
    if array_writes || parallel {
        return None;
    }
    // What changes from element to element (or from one of the loop's iterations to the
    // next): the nest's variables, what the loop or the code after it assigns, what is
    // assigned twice, and what is computed from any of those. The rest of what the
    // statements before the loop assign (a range's hoisted bounds) is the same for every
    // element: the block computes it once, before everything else. The loop's bounds may read
    // only that.
    let vars: Vec<LocalId> = levels.iter().map(|l| l.var).collect();
    let mut varying: HashSet<LocalId> = vars.iter().copied().collect();
    let mut count: HashMap<LocalId, usize> = HashMap::new();
    walk::for_each_stmt(body, &mut |s| match s {
        Stmt::Assign { local, .. } => *count.entry(*local).or_default() += 1,
        Stmt::For { levels, .. } => varying.extend(levels.iter().map(|l| l.var)),
        Stmt::Atomic { old, new, .. } => varying.extend(old.iter().chain(new)),
        _ => {}
    });
    walk::for_each_stmt(kb, &mut |s| {
        if let Stmt::Assign { local, .. } = s {
            varying.insert(*local);
        }
    });
    walk::for_each_stmt(after, &mut |s| {
        if let Stmt::Assign { local, .. } = s {
            varying.insert(*local);
        }
    });
    varying.extend(count.iter().filter(|(_, &n)| n > 1).map(|(&l, _)| l));
    loop {
        let before_count = varying.len();
        for s in before {
            if let Stmt::Assign { local, value } = s {
                let mut r = HashSet::new();
                walk::locals_read(f, *value, &mut r);
                if r.iter().any(|l| varying.contains(l)) {
                    varying.insert(*local);
                }
            }
        }
        if varying.len() == before_count {
            break;
        }
    }
    let (hoisted, before): (Vec<Stmt>, Vec<Stmt>) = before
        .iter()
        .cloned()
        .partition(|s| matches!(s, Stmt::Assign { local, .. } if !varying.contains(local)));
    let reads = |h: Handle<Expr>| {
        let mut r = HashSet::new();
        walk::locals_read(f, h, &mut r);
        r
    };
    if [kl.start, kl.step, kl.trips]
        .iter()
        .any(|&h| reads(h).iter().any(|l| varying.contains(l)))
    {
        return None;
    }
    // The loads to stage.
    let mut written = HashSet::new();
    walk::for_each_stmt(&k.function.body, &mut |s| match s {
        Stmt::Store { array, .. } | Stmt::Atomic { array, .. } => {
            written.insert(*array);
        }
        _ => {}
    });
    let mut loads = Vec::new();
    for s in kb {
        if let Stmt::Assign { value, .. } = s {
            unconditional_loads(f, *value, &mut loads);
        }
    }
    let mut staged: Vec<Staged> = Vec::new();
    for h in loads {
        let Expr::Load {
            array,
            field,
            index,
        } = f.exprs[h].clone()
        else {
            continue;
        };
        // An element of a nested array (`boxes[l].nei[k]`) is not staged.
        let Some(access) = k.access(array, field).filter(|a| a.nested.is_none()) else {
            continue;
        };
        if written.contains(&array) || access.ty == Scalar::Bool {
            continue;
        }
        let r = reads(index);
        if !r.contains(&kl.var)
            || r.iter()
                .any(|l| *l != kl.var && !vars.contains(l) && varying.contains(l))
        {
            continue;
        }
        let levels_read: Vec<usize> = (0..vars.len()).filter(|&l| r.contains(&vars[l])).collect();
        let level = match levels_read.as_slice() {
            [] => None,
            [l] => Some(*l),
            _ => continue,
        };
        let along_inner = match level {
            Some(l) => plain_term(f, index, kl.var) && !plain_term(f, index, vars[l]),
            None => true,
        };
        if level.is_some() && vars.len() == 1 && !along_inner {
            continue;
        }
        staged.push(Staged {
            name: k.params[array as usize].name.clone(),
            load: h,
            array,
            field,
            index,
            ty: access.ty,
            level,
            along_inner,
        });
    }
    if staged.is_empty() {
        return None;
    }
    // The running values each element keeps from chunk to chunk: what the statements before
    // the loop assign and the loop or the rest read; what the loop reads before it assigns it
    // in an iteration (a sum), and what it assigns and the rest reads. A value the loop sets
    // before reading it in every iteration (a temporary) is its thread's own.
    let reads_of = |b: &[Stmt]| {
        let mut r = HashSet::new();
        walk::for_each_stmt(b, &mut |s| {
            for h in walk::stmt_exprs(s) {
                walk::locals_read(f, h, &mut r);
            }
        });
        r
    };
    let (read_in_loop, read_after) = (reads_of(kb), reads_of(after));
    let assigned_in_loop: HashSet<LocalId> = kb
        .iter()
        .filter_map(|s| match s {
            Stmt::Assign { local, .. } => Some(*local),
            _ => None,
        })
        .collect();
    let mut set = HashSet::new();
    let mut read_first = HashSet::new();
    for s in kb {
        if let Stmt::Assign { local, value } = s {
            for l in reads(*value) {
                if assigned_in_loop.contains(&l) && !set.contains(&l) {
                    read_first.insert(l);
                }
            }
            set.insert(*local);
        }
    }
    let mut carried: Vec<LocalId> = Vec::new();
    for s in before.iter().chain(kb) {
        let Stmt::Assign { local, .. } = s else {
            continue;
        };
        let in_loop = assigned_in_loop.contains(local);
        let keep = *local != kl.var
            && (read_after.contains(local)
                || if in_loop {
                    read_first.contains(local)
                } else {
                    read_in_loop.contains(local)
                });
        if keep && !carried.contains(local) {
            carried.push(*local);
        }
    }
    // The chunk: twice the tile's longer side, at most 32 (fewer barriers and copies per
    // iteration, each thread copying a few elements); a whole block's worth for a tile of one
    // level (its copies are of reads every element shares); shorter where they would not fit.
    let elements_count: u32 = sizes.iter().product();
    let bytes = |chunk: u32| -> u32 {
        let copies: u32 = staged
            .iter()
            .map(|s| {
                let words = match s.level {
                    Some(l) => sizes[l] * chunk,
                    None => chunk,
                };
                words * s.ty.size().max(4)
            })
            .sum();
        let carries: u32 = carried
            .iter()
            .map(|&l| elements_count * f.locals[l as usize].ty.size().max(4))
            .sum();
        copies + carries
    };
    let longest = sizes.iter().copied().max().unwrap_or(1);
    let mut chunk = if sizes.len() == 1 {
        longest
    } else {
        (2 * longest).clamp(4, 32)
    };
    while bytes(chunk) > super::super::gang_phases::SHARED_ARRAY_BYTES {
        if chunk <= 4 {
            return None;
        }
        chunk /= 2;
    }
    Some(Plan {
        hoisted,
        before,
        inner_level: kl,
        inner_body: kb,
        after,
        staged,
        carried,
        chunk,
    })
}

/// The pieces of the tile [`build`] puts together.
struct Parts<'b> {
    levels: &'b [LoopLevel],
    sizes: &'b [u32],
    tiles: &'b [LocalId],
    elements: &'b [LocalId],
    fastest: usize,
    inner: &'b Option<Schedule>,
    /// The statements before the loop that compute the same for every element.
    hoisted: &'b [Stmt],
    before: &'b [Stmt],
    inner_level: &'b LoopLevel,
    inner_body: &'b [Stmt],
    after: &'b [Stmt],
}

fn binary(f: &mut Function, op: BinaryOp, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
    f.exprs.append(Expr::Binary(op, a, b))
}

fn local(f: &mut Function, l: LocalId) -> Handle<Expr> {
    f.exprs.append(Expr::Local(l))
}

/// A new array local of the tile.
fn new_array(f: &mut Function, name: String, ty: Scalar, len: u32) -> LocalId {
    f.locals.push(Local {
        name,
        ty,
        len: Some(len),
    });
    (f.locals.len() - 1) as LocalId
}

/// A loop over `trips` iterations the block's threads share.
fn shared_loop(
    var: LocalId,
    trips: Handle<Expr>,
    line: u32,
    f: &mut Function,
    sched: &Option<Schedule>,
    body: Block,
) -> Stmt {
    let (zero, one) = (lit(f, 0), lit(f, 1));
    Stmt::For {
        levels: vec![LoopLevel {
            var,
            start: zero,
            step: one,
            trips,
            line,
        }],
        schedule: sched.clone(),
        reductions: Vec::new(),
        private: Vec::new(),
        tile: Vec::new(),
        body,
    }
}

/// Puts the chunked tile together (see the module's documentation).
fn build(
    f: &mut Function,
    p: Parts,
    staged: Vec<Staged>,
    carried: Vec<LocalId>,
    chunk: u32,
) -> Chunked {
    let kl = p.inner_level;
    let (line, nest_line) = (kl.line, p.levels[0].line);
    let tile_elements: u32 = p.sizes.iter().product();
    let name = |f: &Function, l: LocalId| f.locals[l as usize].name.clone();
    // One flat loop over the tile's elements, the fastest level's element varying fastest, so
    // the element's index into the accumulators grows with the loop's variable.
    let nest: Vec<String> = p.levels.iter().map(|l| name(f, l.var)).collect();
    let flat = new_index(f, &format!("{}_element", nest.join("_")));
    let element_vars = |f: &mut Function| -> Vec<Stmt> {
        let e = local(f, flat);
        if p.levels.len() == 1 {
            return vec![Stmt::Assign {
                local: p.elements[0],
                value: e,
            }];
        }
        let (fast, slow) = (p.fastest, 1 - p.fastest);
        let width = lit(f, p.sizes[fast]);
        let minor = binary(f, BinaryOp::Rem, e, width);
        let major = binary(f, BinaryOp::Div, e, width);
        vec![
            Stmt::Assign {
                local: p.elements[fast],
                value: minor,
            },
            Stmt::Assign {
                local: p.elements[slow],
                value: major,
            },
        ]
    };
    let (inside, set_vars) = element_guard(f, p.levels, p.sizes, p.tiles, p.elements);
    let carries: Vec<LocalId> = carried
        .iter()
        .map(|&l| {
            let n = format!("{}_carry", name(f, l));
            let ty = f.locals[l as usize].ty;
            new_array(f, n, ty, tile_elements)
        })
        .collect();
    let save = |f: &mut Function| -> Vec<Stmt> {
        carried
            .iter()
            .zip(&carries)
            .map(|(&l, &c)| {
                let (index, value) = (local(f, flat), local(f, l));
                Stmt::AssignElem {
                    local: c,
                    index,
                    value,
                }
            })
            .collect()
    };
    let restore = |f: &mut Function| -> Vec<Stmt> {
        carried
            .iter()
            .zip(&carries)
            .map(|(&l, &c)| {
                let index = local(f, flat);
                let value = f.exprs.append(Expr::LocalElem { local: c, index });
                Stmt::Assign { local: l, value }
            })
            .collect()
    };
    let element_loop = |f: &mut Function, guarded: Block| -> Stmt {
        let mut body = element_vars(f);
        body.push(Stmt::If {
            cond: inside,
            accept: guarded,
            reject: Vec::new(),
        });
        let elements = lit(f, tile_elements);
        shared_loop(flat, elements, nest_line, f, p.inner, body)
    };
    let mut out = p.hoisted.to_vec();
    // The statements before the loop, per element.
    let mut first = set_vars.clone();
    first.extend(p.before.iter().cloned());
    first.extend(save(f));
    out.push(element_loop(f, first));
    // The chunks: every thread counts them alike.
    let (c, base, len) = (
        new_index(f, &format!("{}_chunk", name(f, kl.var))),
        new_index(f, &format!("{}_chunk_start", name(f, kl.var))),
        new_index(f, &format!("{}_chunk_len", name(f, kl.var))),
    );
    let size = lit(f, chunk);
    let whole = binary(f, BinaryOp::Div, kl.trips, size);
    let rest = binary(f, BinaryOp::Rem, kl.trips, size);
    let zero = lit(f, 0);
    let partial = binary(f, BinaryOp::Ne, rest, zero);
    let one = lit(f, 1);
    let extra = f.exprs.append(Expr::Select {
        cond: partial,
        accept: one,
        reject: zero,
    });
    let chunks = binary(f, BinaryOp::Add, whole, extra);
    let cv = local(f, c);
    let start_value = binary(f, BinaryOp::Mul, cv, size);
    let bv = local(f, base);
    let left = binary(f, BinaryOp::Sub, kl.trips, bv);
    let len_value = f.exprs.append(Expr::Math(MathFn::Min, vec![size, left]));
    let mut chunk_body = vec![
        Stmt::Assign {
            local: base,
            value: start_value,
        },
        Stmt::Assign {
            local: len,
            value: len_value,
        },
    ];
    // The inner loop's variable for chunk position `ek`: start + (base + ek) * step.
    let kty = f.locals[kl.var as usize].ty;
    let inner_var = |f: &mut Function, ek: Handle<Expr>| -> Stmt {
        let bv = local(f, base);
        let kk = binary(f, BinaryOp::Add, bv, ek);
        let kk = f.exprs.append(Expr::Cast(kk, kty));
        let off = binary(f, BinaryOp::Mul, kk, kl.step);
        let value = binary(f, BinaryOp::Add, kl.start, off);
        Stmt::Assign {
            local: kl.var,
            value,
        }
    };
    // The copies: one loop per number of elements to copy, each thread copying some.
    let mut copies: Vec<(u32, Block)> = Vec::new();
    let mut stages = Vec::new();
    let mut reads: HashMap<Handle<Expr>, Handle<Expr>> = HashMap::new();
    let copy_var = new_index(f, &format!("{}_staged", name(f, kl.var)));
    let kk = new_index(f, &format!("{}_in_chunk", name(f, kl.var)));
    for s in &staged {
        let (width, count) = match s.level {
            Some(l) if s.along_inner => (chunk, p.sizes[l] * chunk),
            Some(l) => (p.sizes[l], p.sizes[l] * chunk),
            None => (chunk, chunk),
        };
        let stage = new_array(f, format!("{}_tile", s.name), s.ty, count);
        stages.push(stage);
        // Copy element `e`: its position along the contiguous direction is `e % width`.
        let (el, ek) = (
            new_index(f, &format!("{}_level_staging", name(f, stage))),
            new_index(f, &format!("{}_inner_staging", name(f, stage))),
        );
        let e = local(f, copy_var);
        let w = lit(f, width);
        let minor = binary(f, BinaryOp::Rem, e, w);
        let major = binary(f, BinaryOp::Div, e, w);
        let mut body = match s.level {
            Some(_) if s.along_inner => vec![
                Stmt::Assign {
                    local: ek,
                    value: minor,
                },
                Stmt::Assign {
                    local: el,
                    value: major,
                },
            ],
            Some(_) => vec![
                Stmt::Assign {
                    local: el,
                    value: minor,
                },
                Stmt::Assign {
                    local: ek,
                    value: major,
                },
            ],
            None => vec![Stmt::Assign {
                local: ek,
                value: e,
            }],
        };
        let ekv = local(f, ek);
        body.push(inner_var(f, ekv));
        let lv = local(f, len);
        let mut within = binary(f, BinaryOp::Lt, ekv, lv);
        if let Some(l) = s.level {
            let elv = local(f, el);
            let (value, inside_level) = level_value(f, &p.levels[l], p.sizes[l], p.tiles[l], elv);
            body.push(Stmt::Assign {
                local: p.levels[l].var,
                value,
            });
            within = binary(f, BinaryOp::And, within, inside_level);
        }
        // Branch-free: an element outside the nest reads element 0 into a copy nobody reads.
        let zero = lit(f, 0);
        let index = f.exprs.append(Expr::Select {
            cond: within,
            accept: s.index,
            reject: zero,
        });
        let fresh = f.exprs.append(Expr::Load {
            array: s.array,
            field: s.field,
            index,
        });
        // The copy is laid out as it is copied: adjacent threads write adjacent elements,
        // and the elements read them along rows (one value, or adjacent ones, per warp), so
        // no padding is needed against bank conflicts.
        body.push(Stmt::AssignElem {
            local: stage,
            index: e,
            value: fresh,
        });
        match copies.iter_mut().find(|(c, _)| *c == count) {
            Some((_, b)) => b.extend(body),
            None => copies.push((count, body)),
        }
        // The loop reads the copy: [level element][inner] or [inner][level element].
        let kv = local(f, kk);
        let read_at = match s.level {
            Some(l) => {
                let ev = local(f, p.elements[l]);
                if s.along_inner {
                    let row = lit(f, chunk);
                    let r = binary(f, BinaryOp::Mul, ev, row);
                    binary(f, BinaryOp::Add, r, kv)
                } else {
                    let row = lit(f, p.sizes[l]);
                    let r = binary(f, BinaryOp::Mul, kv, row);
                    binary(f, BinaryOp::Add, r, ev)
                }
            }
            None => kv,
        };
        let copy = f.exprs.append(Expr::LocalElem {
            local: stage,
            index: read_at,
        });
        reads.insert(s.load, copy);
    }
    for (count, body) in copies {
        let count = lit(f, count);
        chunk_body.push(shared_loop(copy_var, count, nest_line, f, p.inner, body));
    }
    // The chunk's iterations, per element, reading the copies.
    let mut inner_body = p.inner_body.to_vec();
    walk::substitute(f, &mut inner_body, &reads);
    let kv = local(f, kk);
    let mut step_body = vec![inner_var(f, kv)];
    step_body.extend(inner_body);
    // A whole chunk runs a loop of constant length (which a backend may unroll, its reads of
    // the copies then at constant offsets); the last, shorter one, a loop of its length.
    let chunk_loop = |f: &mut Function, trips: Handle<Expr>| {
        let (zero, one) = (lit(f, 0), lit(f, 1));
        Stmt::For {
            levels: vec![LoopLevel {
                var: kk,
                start: zero,
                step: one,
                trips,
                line,
            }],
            schedule: None,
            reductions: Vec::new(),
            private: Vec::new(),
            tile: Vec::new(),
            body: step_body.clone(),
        }
    };
    let (whole_len, lv) = (lit(f, chunk), local(f, len));
    let whole_chunk = binary(f, BinaryOp::Eq, lv, whole_len);
    let (full, last) = (chunk_loop(f, whole_len), chunk_loop(f, lv));
    let mut compute = set_vars.clone();
    compute.extend(restore(f));
    compute.push(Stmt::If {
        cond: whole_chunk,
        accept: vec![full],
        reject: vec![last],
    });
    compute.extend(save(f));
    chunk_body.push(element_loop(f, compute));
    let chunks_local = new_index(f, &format!("{}_chunks", name(f, kl.var)));
    out.push(Stmt::Assign {
        local: chunks_local,
        value: chunks,
    });
    let (zero, one, cl) = (lit(f, 0), lit(f, 1), local(f, chunks_local));
    out.push(Stmt::For {
        levels: vec![LoopLevel {
            var: c,
            start: zero,
            step: one,
            trips: cl,
            line,
        }],
        schedule: None,
        reductions: Vec::new(),
        private: Vec::new(),
        tile: Vec::new(),
        body: chunk_body,
    });
    // The rest, per element.
    if !p.after.is_empty() {
        let mut last = set_vars;
        last.extend(restore(f));
        last.extend(p.after.iter().cloned());
        out.push(element_loop(f, last));
    }
    let staged_arrays = staged.iter().map(|s| s.array).collect();
    Chunked {
        var: kl.var,
        body: out,
        arrays: stages.into_iter().chain(carries).collect(),
        staged: staged_arrays,
        chunk,
    }
}
