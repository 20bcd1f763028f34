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

mod build;

use build::{build, Parts};

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
    (k, shared_bytes): (&Kernel, u32),
    f: &mut Function,
    levels: &[LoopLevel],
    sizes: &[u32],
    tiles: &[LocalId],
    elements: &[LocalId],
    fastest: usize,
    inner: &Option<Schedule>,
    body: &Block,
) -> Option<Chunked> {
    let plan = plan(k, f, levels, sizes, shared_bytes, body)?;
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
/// accumulators must fit the target's `shared_bytes`.
pub(super) fn plan<'b>(
    k: &Kernel,
    f: &Function,
    levels: &[LoopLevel],
    sizes: &[u32],
    shared_bytes: u32,
    body: &'b Block,
) -> Option<Plan<'b>> {
    if !(1..=2).contains(&levels.len()) {
        return None;
    }
    let Shape {
        before,
        inner_level: kl,
        inner_body: kb,
        after,
    } = shape(body)?;
    // What changes from element to element (or from one of the loop's iterations to the
    // next): the nest's variables, what the loop or the code after it assigns, what is
    // assigned twice, and what is computed from any of those. The rest of what the
    // statements before the loop assign (a range's hoisted bounds) is the same for every
    // element: the block computes it once, before everything else. The loop's bounds may read
    // only that.
    let vars: Vec<LocalId> = levels.iter().map(|l| l.var).collect();
    let varying = varying_locals(f, &vars, body, before, kb, after);
    let (hoisted, before): (Vec<Stmt>, Vec<Stmt>) = before
        .iter()
        .cloned()
        .partition(|s| matches!(s, Stmt::Assign { local, .. } if !varying.contains(local)));
    if [kl.start, kl.step, kl.trips]
        .iter()
        .any(|&h| locals_read(f, h).iter().any(|l| varying.contains(l)))
    {
        return None;
    }
    let staged = staged_loads(k, f, &vars, kl, kb, &varying);
    if staged.is_empty() {
        return None;
    }
    let carried = carried_locals(f, &before, kl, kb, after);
    let chunk = chunk_length(f, sizes, shared_bytes, &staged, &carried)?;
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

/// The locals expression `h` reads.
fn locals_read(f: &Function, h: Handle<Expr>) -> HashSet<LocalId> {
    let mut r = HashSet::new();
    walk::locals_read(f, h, &mut r);
    r
}

/// A tile's body taken apart around its inner loop: the statements before it, its level and
/// body, and the statements after it.
struct Shape<'b> {
    before: &'b [Stmt],
    inner_level: &'b LoopLevel,
    inner_body: &'b [Stmt],
    after: &'b [Stmt],
}

/// The parts of a tile's body of the shape chunks take: assignments of scalars, one
/// sequential loop of one level without clauses whose body assigns scalars only, then the
/// rest; no statement of it writes an array or is a parallel loop.
fn shape(body: &Block) -> Option<Shape<'_>> {
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
    Some(Shape {
        before,
        inner_level: kl,
        inner_body: kb,
        after,
    })
}

/// The locals whose values change from element to element (or from one of the inner loop's
/// iterations to the next): the nest's variables `vars`, what the loop or the code after it
/// assigns, what is assigned twice, and what the statements before the loop compute from any
/// of those.
fn varying_locals(
    f: &Function,
    vars: &[LocalId],
    body: &Block,
    before: &[Stmt],
    kb: &[Stmt],
    after: &[Stmt],
) -> HashSet<LocalId> {
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
    varying
}

/// The loads of the inner loop's body (`kb`, its level `kl`) that chunks stage: loads it makes
/// unconditionally, of numbers (not an element of a nested array) from an array the kernel does
/// not write, at an index of the loop's variable, at most one of the nest's variables `vars`
/// and values that do not vary from element to element; in a tile of one level, only where
/// the index runs along the loop.
fn staged_loads(
    k: &Kernel,
    f: &Function,
    vars: &[LocalId],
    kl: &LoopLevel,
    kb: &[Stmt],
    varying: &HashSet<LocalId>,
) -> Vec<Staged> {
    // The loads to stage.
    let written = arrays_written(k);
    let mut loads = Vec::new();
    for s in kb {
        if let Stmt::Assign { value, .. } = s {
            unconditional_loads(f, *value, &mut loads);
        }
    }
    let mut staged: Vec<Staged> = Vec::new();
    for h in loads {
        let Some(CopyableLoad {
            array,
            field,
            index,
            ty,
        }) = copyable_load(k, h, &written)
        else {
            continue;
        };
        let r = locals_read(f, index);
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
            ty,
            level,
            along_inner,
        });
    }
    staged
}

/// The running values each element keeps from chunk to chunk: what the statements before
/// the loop assign and the loop or the rest read; what the loop reads before it assigns it
/// in an iteration (a sum), and what it assigns and the rest reads. A value the loop sets
/// before reading it in every iteration (a temporary) is its thread's own.
fn carried_locals(
    f: &Function,
    before: &[Stmt],
    kl: &LoopLevel,
    kb: &[Stmt],
    after: &[Stmt],
) -> Vec<LocalId> {
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
            for l in locals_read(f, *value) {
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
    carried
}

/// The chunk: twice the tile's longer side, at most 32 (fewer barriers and copies per
/// iteration, each thread copying a few elements); a whole block's worth for a tile of one
/// level (its copies are of reads every element shares); shorter where they would not fit
/// (halved, down to 4 at the least, else `None`).
fn chunk_length(
    f: &Function,
    sizes: &[u32],
    shared_bytes: u32,
    staged: &[Staged],
    carried: &[LocalId],
) -> Option<u32> {
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
    while bytes(chunk) > shared_bytes {
        if chunk <= 4 {
            return None;
        }
        chunk /= 2;
    }
    Some(chunk)
}
