//! How a gang loop's iteration splits into phases when a GPU block (workgroup) runs it: the
//! shape analysis every GPU backend shares (3.3 sections 2.9.2 to 2.9.4).

use super::*;

/// The phases of one iteration of a gang loop on a GPU, where a block (workgroup) runs each
/// iteration (3.3 sections 2.9.2 and 2.9.4): scalar statements every thread of the block runs
/// ("gang-redundant"), one vector loop whose iterations the block's threads share, the block
/// combining the loop's reductions into locals of the iteration, then statements that one
/// thread of the block runs ("vector-single"), which may read those results.
#[derive(Clone, Debug)]
pub struct GangPhases<'a> {
    /// Scalar assignments before the vector loop, on every thread.
    pub pre: Vec<&'a Stmt>,
    /// The loop the block's threads share: the vector loop, a worker loop, or a worker loop
    /// over a vector loop as one collapsed nest (the vector level fastest, so adjacent threads
    /// take adjacent vector iterations).
    pub vector: std::borrow::Cow<'a, Stmt>,
    /// The vector loop's reductions into locals of the iteration (not the gang loop's own):
    /// combined across the block after the loop, every thread then holding the result.
    pub block_reductions: Vec<Reduction>,
    /// Further vector loops of the iteration, in order, each after scalar assignments every
    /// thread runs (which may read the earlier loops' reductions): a softmax's max, sum and
    /// scale loops over one row. The block synchronizes after each loop, so a loop sees what
    /// the earlier ones wrote.
    pub more: Vec<VectorPhase<'a>>,
    /// Statements after the last vector loop, run by the block's first thread.
    pub post: Vec<&'a Stmt>,
    /// Arrays private to the gang iteration (declared in the gang loop's body or named in its
    /// `private`, 3.3 sections 2.5.13 and 2.9.10) that its vector loops use: the block holds
    /// one copy in shared (workgroup) memory, which all its threads read and write. The block
    /// synchronizes at the start of each iteration (the last one's readers are done) and
    /// before a loop whose preceding statements wrote one ([`GangPhases::writes_shared`]).
    pub shared_arrays: Vec<LocalId>,
}

/// Bytes of shared (workgroup) memory a gang iteration's arrays may take: half of the 16 KiB
/// every WebGPU adapter has, leaving room for the reductions' and privatized atomics' slots.
/// An iteration whose arrays need more runs on one thread per iteration instead.
pub const SHARED_ARRAY_BYTES: u32 = 8192;

/// A vector loop of a gang iteration after the first ([`GangPhases::more`]).
#[derive(Clone, Debug)]
pub struct VectorPhase<'a> {
    /// Scalar assignments before the loop, on every thread.
    pub between: Vec<&'a Stmt>,
    /// The loop the block's threads share (as [`GangPhases::vector`]).
    pub vector: std::borrow::Cow<'a, Stmt>,
    /// Its reductions into locals of the iteration, combined across the block.
    pub block_reductions: Vec<Reduction>,
}

impl GangPhases<'_> {
    /// Whether block reduction `r`'s result is needed only by the block's first thread: its
    /// local is set afresh by every iteration (`pre` assigns it) and the gang loop does not
    /// reduce it, so only `post`, on that thread, reads the result. A backend may then combine
    /// it into that thread alone, without handing it back to every thread.
    pub fn needed_by_first_thread_only(&self, r: &Reduction) -> bool {
        self.more.is_empty()
            && self
                .pre
                .iter()
                .any(|s| matches!(s, Stmt::Assign { local, .. } if *local == r.local))
    }

    /// The iteration's vector loops in order, each with the assignments before it (none for
    /// the first: `pre` runs before everything) and its block reductions.
    pub fn loops(&self) -> Vec<(&[&Stmt], &Stmt, &[Reduction])> {
        let mut out: Vec<(&[&Stmt], &Stmt, &[Reduction])> =
            vec![(&[], &*self.vector, &self.block_reductions)];
        for m in &self.more {
            out.push((&m.between, &*m.vector, &m.block_reductions));
        }
        out
    }

    /// Whether `stmts` (the assignments before a loop) write one of the shared arrays, so that
    /// the block must synchronize before the loop reads them.
    pub fn writes_shared(&self, stmts: &[&Stmt]) -> bool {
        stmts.iter().any(|s| {
            let mut found = false;
            walk::for_each_stmt(std::slice::from_ref(*s), &mut |s| {
                found |= matches!(s, Stmt::AssignElem { local, .. } if self.shared_arrays.contains(local));
            });
            found
        })
    }

    /// Whether the iteration needs the block to synchronize (a block reduction, or code after
    /// the vector loop that reads its results).
    pub fn synchronizes(&self) -> bool {
        !self.block_reductions.is_empty() || !self.post.is_empty()
    }
}

impl Stmt {
    /// A parallel loop whose body is assignments, then vector loops with assignments between
    /// them, then optionally more code, as [`GangPhases`]. A GPU backend then runs each
    /// iteration of the outer loop on one block or workgroup. `None` where the body has another
    /// shape: the statements before a loop must be assignments (of scalars that are not
    /// reduced, or of elements of private arrays), the loops untiled, the code after the last
    /// free of parallel loops and of `break` and `continue` out of the gang loop, and the
    /// gang's arrays that the loops use fit [`GangPhases::shared_arrays`]' rules.
    pub fn gang_phases<'a>(&'a self, f: &Function) -> Option<GangPhases<'a>> {
        self.gang_phases_or_why(f).ok()
    }

    /// [`Stmt::gang_phases`], or why the loop's iterations do not each take a block (for
    /// ACC_INFO).
    pub fn gang_phases_or_why<'a>(&'a self, f: &Function) -> Result<GangPhases<'a>, String> {
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
        let at = body
            .iter()
            .position(is_vector_loop)
            .ok_or("no vector loop directly in the gang loop's body")?;
        let (pre, rest) = body.split_at(at);
        let (vector, mut post) = rest.split_first().ok_or("no vector loop")?;
        let reduced = |l: &LocalId| reductions.iter().any(|r| r.local == *l);
        // Before a loop: scalar assignments, and elements of private arrays (an array's
        // initialization), every thread running them.
        let assignments = |b: &[Stmt]| {
            b.iter().all(|s| match s {
                Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } => !reduced(local),
                _ => fill_of(f, s).is_some_and(|l| !reduced(&l)),
            })
        };
        const NOT_ASSIGNMENTS: &str =
            "code other than assignments comes before a vector loop in the gang loop's body";
        if !assignments(pre) {
            return Err(NOT_ASSIGNMENTS.into());
        }
        let mut pre: Vec<&Stmt> = pre.iter().collect();
        let (vector, block_reductions) = shared_loop(vector, f, &mut pre, &reduced);
        // More vector loops, each after scalar assignments (every thread runs them).
        let mut more = Vec::new();
        while let Some(next) = post.iter().position(is_vector_loop) {
            let (between, rest) = post.split_at(next);
            if !assignments(between) {
                return Err(NOT_ASSIGNMENTS.into());
            }
            let (loop_, after) = rest.split_first().ok_or("no vector loop")?;
            let mut between: Vec<&Stmt> = between.iter().collect();
            let (vector, block_reductions) = shared_loop(loop_, f, &mut between, &reduced);
            more.push(VectorPhase {
                between,
                vector,
                block_reductions,
            });
            post = after;
        }
        if !post.is_empty() || !block_reductions.is_empty() {
            // Code after the loop runs on one thread: it may not leave the gang loop (the
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
                return Err(
                    "a parallel loop follows the vector loop in the gang loop's body".into(),
                );
            }
            if leaves_loop(post) {
                return Err(
                    "code after the vector loop leaves the gang loop (`break`/`continue`)".into(),
                );
            }
        }
        let mut phases = GangPhases {
            pre,
            vector,
            block_reductions,
            more,
            post: post.iter().collect(),
            shared_arrays: Vec::new(),
        };
        phases.shared_arrays = shared_arrays(&phases, f, private)?;
        Ok(share_fills(phases, f))
    }
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
/// overflow, as indices within a private array of at most [`SHARED_ARRAY_BYTES`] are.
fn increasing(
    f: &Function,
    e: Handle<Expr>,
    var: LocalId,
    changing: &std::collections::HashSet<LocalId>,
) -> Growth {
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
            let mut read = std::collections::HashSet::new();
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
                let mut read = std::collections::HashSet::new();
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

/// `p` with the fills of its shared arrays before a loop made loops of their own that the
/// block's threads share (each thread setting its elements), rather than every thread
/// setting every element.
fn share_fills<'a>(p: GangPhases<'a>, f: &Function) -> GangPhases<'a> {
    let shared = p.shared_arrays.clone();
    let shared_fill = |s: &Stmt| fill_of(f, s).is_some_and(|l| shared.contains(&l));
    if !p
        .pre
        .iter()
        .chain(p.more.iter().flat_map(|m| m.between.iter()))
        .any(|s| shared_fill(s))
    {
        return p;
    }
    let GangPhases {
        pre,
        vector,
        block_reductions,
        more,
        post,
        shared_arrays,
    } = p;
    let mut segments: Vec<VectorPhase<'a>> = Vec::new();
    let original = std::iter::once(VectorPhase {
        between: pre,
        vector,
        block_reductions,
    })
    .chain(more);
    for seg in original {
        let mut before = Vec::new();
        for s in seg.between {
            if !shared_fill(s) {
                before.push(s);
                continue;
            }
            let Stmt::For {
                levels,
                reductions,
                private,
                tile,
                body,
                ..
            } = s
            else {
                unreachable!("a fill is a loop")
            };
            segments.push(VectorPhase {
                between: std::mem::take(&mut before),
                vector: std::borrow::Cow::Owned(Stmt::For {
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
            });
        }
        segments.push(VectorPhase {
            between: before,
            vector: seg.vector,
            block_reductions: seg.block_reductions,
        });
    }
    let mut segments = segments.into_iter();
    let first = segments.next().expect("a loop");
    GangPhases {
        pre: first.between,
        vector: first.vector,
        block_reductions: first.block_reductions,
        more: segments.collect(),
        post,
        shared_arrays,
    }
}

/// The arrays of the gang iteration its vector loops share (see [`GangPhases::shared_arrays`]),
/// or why the iteration cannot run on a block: an array that a loop writes other than at
/// elements of its own iterations (two threads could write one element), that one loop shares
/// and another makes private, or arrays beyond [`SHARED_ARRAY_BYTES`].
fn shared_arrays(
    p: &GangPhases,
    f: &Function,
    gang_private: &[LocalId],
) -> Result<Vec<LocalId>, String> {
    // The iteration's own arrays: set by its gang-redundant code or private to the gang loop.
    let mut own: std::collections::BTreeSet<LocalId> = gang_private
        .iter()
        .copied()
        .filter(|l| f.locals[*l as usize].len.is_some())
        .collect();
    let outside = p
        .pre
        .iter()
        .chain(p.more.iter().flat_map(|m| m.between.iter()))
        .chain(p.post.iter());
    for s in outside {
        walk::for_each_stmt(std::slice::from_ref(*s), &mut |s| {
            if let Stmt::AssignElem { local, .. } = s {
                own.insert(*local);
            }
        });
    }
    let name = |l: LocalId| f.locals[l as usize].name.clone();
    let (mut shared, mut kept) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    for (_, vector, _) in p.loops() {
        let Stmt::For {
            levels,
            private,
            reductions,
            body,
            ..
        } = vector
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
            let mut changing: std::collections::HashSet<LocalId> = std::collections::HashSet::new();
            walk::for_each_stmt(body, &mut |s| {
                if let Stmt::Assign { local, .. } = s {
                    changing.insert(*local);
                }
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
    if bytes > SHARED_ARRAY_BYTES {
        return Err(format!(
            "the gang's arrays its vector loops share take {bytes} bytes, more than the {SHARED_ARRAY_BYTES} a block may hold in shared memory"
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
) -> (std::borrow::Cow<'a, Stmt>, Vec<Reduction>) {
    let vector = match worker_over_vector(s, f) {
        Some((nest, invariant)) => {
            // Assignments of the worker body that do not change with its iterations (the
            // vector loop's bounds among them) run before the nest, with the gang's.
            before.extend(invariant);
            std::borrow::Cow::Owned(nest)
        }
        None => std::borrow::Cow::Borrowed(s),
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
            let mut read = std::collections::HashSet::new();
            walk::locals_read(f, *value, &mut read);
            // A local assigned twice in the body, one that reads itself (an accumulation) and
            // a reduced one are taken as changing too.
            let reduced = wr.iter().chain(vr).any(|r| r.local == *local);
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
    let mut read = std::collections::HashSet::new();
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
