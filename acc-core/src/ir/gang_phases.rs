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
}

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

    /// Whether the iteration needs the block to synchronize (a block reduction, or code after
    /// the vector loop that reads its results).
    pub fn synchronizes(&self) -> bool {
        !self.block_reductions.is_empty() || !self.post.is_empty()
    }
}

impl Stmt {
    /// A parallel loop whose body is scalar assignments, then one vector loop (a gang loop over
    /// an inner `vector` loop, or the tile loops of a tiled nest over its element loops), then
    /// optionally more code, as [`GangPhases`]. A GPU backend then runs each iteration of the
    /// outer loop on one block or workgroup. `None` where the body has another shape: the
    /// statements before the loop must be assignments of scalars that are not reduced, the
    /// vector loop untiled, and the code after it free of parallel loops, of `break` and
    /// `continue` out of the gang loop, and of private arrays the vector loop reduces.
    pub fn gang_phases<'a>(&'a self, f: &Function) -> Option<GangPhases<'a>> {
        let Stmt::For {
            schedule: Some(_),
            body,
            reductions,
            tile,
            ..
        } = self
        else {
            return None;
        };
        if !tile.is_empty() {
            // A tiled nest is expanded first (`tile::expand`): its tile loops are the gang loop.
            return None;
        }
        let at = body.iter().position(is_vector_loop)?;
        let (pre, rest) = body.split_at(at);
        let (vector, mut post) = rest.split_first()?;
        let reduced = |l: &LocalId| reductions.iter().any(|r| r.local == *l);
        if !pre
            .iter()
            .all(|s| matches!(s, Stmt::Assign { local, .. } if !reduced(local)))
        {
            return None;
        }
        let mut pre: Vec<&Stmt> = pre.iter().collect();
        let (vector, block_reductions) = shared_loop(vector, f, &mut pre, &reduced)?;
        // More vector loops, each after scalar assignments (every thread runs them).
        let mut more = Vec::new();
        while let Some(next) = post.iter().position(is_vector_loop) {
            let (between, rest) = post.split_at(next);
            if !between
                .iter()
                .all(|s| matches!(s, Stmt::Assign { local, .. } if !reduced(local)))
            {
                return None;
            }
            let (loop_, after) = rest.split_first()?;
            let mut between: Vec<&Stmt> = between.iter().collect();
            let (vector, block_reductions) = shared_loop(loop_, f, &mut between, &reduced)?;
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
            let mut ok = true;
            walk::for_each_stmt(post, &mut |s| {
                ok &= !matches!(s, Stmt::For { schedule: Some(_), .. });
            });
            ok &= !leaves_loop(post);
            if !ok {
                return None;
            }
        }
        Some(GangPhases {
            pre,
            vector,
            block_reductions,
            more,
            post: post.iter().collect(),
        })
    }
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
) -> Option<(std::borrow::Cow<'a, Stmt>, Vec<Reduction>)> {
    let vector = match worker_over_vector(s, f) {
        Some((nest, invariant)) => {
            // Assignments of the worker body that do not change with its iterations (the
            // vector loop's bounds among them) run before the nest, with the gang's.
            before.extend(invariant);
            std::borrow::Cow::Owned(nest)
        }
        None => std::borrow::Cow::Borrowed(s),
    };
    let Stmt::For {
        reductions: inner_reductions,
        ..
    } = &*vector
    else {
        return None;
    };
    let block_reductions = inner_reductions
        .iter()
        .filter(|r| !reduced(&r.local))
        .copied()
        .collect();
    Some((vector, block_reductions))
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
                || pre.iter().filter(|t| matches!(t, Stmt::Assign { local: l, .. } if l == local)).count() > 1
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
        body: per_iteration.into_iter().chain(vb.iter().cloned()).collect(),
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
