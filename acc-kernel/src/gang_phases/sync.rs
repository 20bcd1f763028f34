//! Where the threads of a gang's block synchronize: the barriers of a gang iteration's steps
//! (3.3 section 2.9.4: a loop completes before what follows it), and the check that every
//! thread reaches the same barriers (the bounds of the loops and the conditions of the `if`s
//! around shared loops are the same on every thread).

use std::collections::HashSet;

use super::*;

/// Checks that every sequential loop and `if` around shared loops has the same bounds or
/// condition on every thread of the block, so that all of them reach the same barriers: they
/// may not read what a shared loop's iterations compute in each thread (its variables, its
/// locals and private arrays; its block reductions are combined into every thread), nor what
/// the redundant statements compute from those.
pub(super) fn uniform_bounds(p: &GangPhases, f: &Function) -> Result<(), String> {
    if !p.nested() {
        return Ok(());
    }
    let mut varying: HashSet<LocalId> = HashSet::new();
    for l in p.loops() {
        let Stmt::For { levels, body, .. } = &*l.vector else {
            continue;
        };
        varying.extend(levels.iter().map(|lv| lv.var));
        walk::for_each_stmt(body, &mut |s| match s {
            Stmt::Assign { local, .. } => {
                varying.insert(*local);
            }
            Stmt::AssignElem { local, .. } if !p.shared_arrays.contains(local) => {
                varying.insert(*local);
            }
            Stmt::For { levels, .. } => varying.extend(levels.iter().map(|lv| lv.var)),
            Stmt::Atomic { old, new, .. } => varying.extend(old.iter().chain(new)),
            _ => {}
        });
        for r in &l.block_reductions {
            for m in r.reduction.locals() {
                varying.remove(&m);
            }
        }
    }
    let reads = |h: Handle<Expr>, varying: &HashSet<LocalId>| {
        let mut read = HashSet::new();
        walk::locals_read(f, h, &mut read);
        read.iter().any(|l| varying.contains(l))
    };
    // What redundant statements compute from varying values varies too.
    fn spread(
        s: &Stmt,
        under: bool,
        varying: &mut HashSet<LocalId>,
        reads: &dyn Fn(Handle<Expr>, &HashSet<LocalId>) -> bool,
    ) {
        match s {
            Stmt::Assign { local, value } if under || reads(*value, varying) => {
                varying.insert(*local);
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } if under || reads(*index, varying) || reads(*value, varying) => {
                varying.insert(*local);
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let under = under || reads(*cond, varying);
                for s in accept.iter().chain(reject) {
                    spread(s, under, varying, reads);
                }
            }
            Stmt::For { levels, body, .. } => {
                let under = under
                    || levels.iter().any(|lv| {
                        [lv.start, lv.step, lv.trips]
                            .iter()
                            .any(|h| reads(*h, varying))
                    });
                if under {
                    varying.extend(levels.iter().map(|lv| lv.var));
                }
                for s in body {
                    spread(s, under, varying, reads);
                }
            }
            Stmt::Loop { body } => {
                for s in body {
                    spread(s, under, varying, reads);
                }
            }
            _ => {}
        }
    }
    let mut stmts = Vec::new();
    redundant_stmts(&p.steps, &mut stmts);
    loop {
        let before = varying.len();
        for s in &stmts {
            spread(s, false, &mut varying, &reads);
        }
        if varying.len() == before {
            break;
        }
    }
    fn check(
        steps: &[Step],
        varying: &HashSet<LocalId>,
        reads: &dyn Fn(Handle<Expr>, &HashSet<LocalId>) -> bool,
    ) -> Result<(), String> {
        for s in steps {
            match s {
                Step::Sequential { levels, steps } => {
                    if levels.iter().any(|lv| {
                        [lv.start, lv.step, lv.trips]
                            .iter()
                            .any(|h| reads(*h, varying))
                    }) {
                        return Err("the bounds of a sequential loop around a vector loop depend on what the vector loop's iterations compute".into());
                    }
                    check(steps, varying, reads)?;
                }
                Step::If {
                    cond,
                    accept,
                    reject,
                } => {
                    if reads(*cond, varying) {
                        return Err("the condition of an `if` around a vector loop depends on what the vector loop's iterations compute".into());
                    }
                    check(accept, varying, reads)?;
                    check(reject, varying, reads)?;
                }
                Step::Redundant(_) | Step::Shared(_) | Step::Barrier => {}
            }
        }
        Ok(())
    }
    check(&p.steps, &varying, &reads)
}

/// Whether `s` writes one of the gang's shared arrays.
pub(super) fn writes_shared(s: &Stmt, shared: &[LocalId]) -> bool {
    let mut found = false;
    walk::for_each_stmt(std::slice::from_ref(s), &mut |s| {
        found |= matches!(s, Stmt::AssignElem { local, .. } if shared.contains(local));
    });
    found
}

/// What a redundant statement does that a later shared loop must wait for: a write to one of
/// the gang's shared arrays (which the loop may read), or a read of an array the gang's shared
/// loops write (which the loop may overwrite before every thread has read it: `let f =
/// m[i][k]` before a vector loop that writes row `i`).
#[derive(Clone, Copy)]
pub(super) struct Hazards<'a> {
    pub(super) shared: &'a [LocalId],
    /// Arrays the gang iteration's shared loops store to or update atomically.
    pub(super) written: &'a HashSet<ParamId>,
    pub(super) f: &'a Function,
}

impl Hazards<'_> {
    fn redundant(&self, s: &Stmt) -> bool {
        if writes_shared(s, self.shared) {
            return true;
        }
        if self.written.is_empty() {
            return false;
        }
        let mut read = HashSet::new();
        walk::arrays_read(self.f, std::slice::from_ref(s), &mut read);
        read.iter().any(|a| self.written.contains(a))
    }
}

/// The arrays that the shared loops among `steps` store to or update atomically.
pub(super) fn shared_loop_writes(steps: &[Step]) -> HashSet<ParamId> {
    let mut out = HashSet::new();
    for_each_step_stmt(steps, &mut |s, shared| {
        if shared {
            walk::arrays_written(std::slice::from_ref(s), &mut out);
        }
    });
    out
}

/// Calls `f` on each statement the steps run, nested steps included: a redundant statement
/// (`false`) or a shared loop (`true`).
pub(super) fn for_each_step_stmt(steps: &[Step], f: &mut impl FnMut(&Stmt, bool)) {
    for s in steps {
        match s {
            Step::Redundant(st) => f(st, false),
            Step::Shared(l) => f(&l.vector, true),
            Step::Sequential { steps, .. } => for_each_step_stmt(steps, f),
            Step::If { accept, reject, .. } => {
                for_each_step_stmt(accept, f);
                for_each_step_stmt(reject, f);
            }
            Step::Barrier => {}
        }
    }
}

/// Whether redundant statements may have written a shared array since the last barrier when
/// `steps` end (so that a shared loop after them, or at their start when they are a loop's
/// body, must wait for the writes).
fn dirty_at_end(steps: &[Step], h: Hazards) -> bool {
    let mut dirty = false;
    for s in steps {
        match s {
            Step::Redundant(st) => dirty |= h.redundant(st),
            Step::Shared(_) | Step::Barrier => dirty = false,
            Step::Sequential { steps, .. } => dirty |= dirty_at_end(steps, h),
            Step::If { accept, reject, .. } => {
                dirty |= dirty_at_end(accept, h) || dirty_at_end(reject, h)
            }
        }
    }
    dirty
}

/// `steps` with the block's barriers (3.3 section 2.9.4: a loop completes before what follows
/// it): before a shared loop that may read what the statements since the last barrier wrote
/// to a shared array or read from an array it writes ([`Hazards`]; `dirty` says whether those
/// before `steps` did, and is left saying so after them), and after each shared loop that combines no reduction (a block reduction ends
/// in a barrier), unless it is the iteration's last step (`top`, nothing in `post`).
pub(super) fn place_barriers<'a>(
    steps: Vec<Step<'a>>,
    hazards: Hazards,
    dirty: &mut bool,
    top: bool,
    post_follows: bool,
) -> Vec<Step<'a>> {
    let n = steps.len();
    let mut out = Vec::with_capacity(n + 2);
    for (i, s) in steps.into_iter().enumerate() {
        match s {
            Step::Redundant(st) => {
                *dirty |= hazards.redundant(st);
                out.push(Step::Redundant(st));
            }
            Step::Shared(l) => {
                if std::mem::take(dirty) {
                    out.push(Step::Barrier);
                }
                let combined = !l.block_reductions.is_empty();
                out.push(Step::Shared(l));
                let last = top && i + 1 == n && !post_follows;
                if !combined && !last {
                    out.push(Step::Barrier);
                }
            }
            Step::Sequential { levels, steps } => {
                // The body's start follows its end in the next iteration.
                let mut d = *dirty || dirty_at_end(&steps, hazards);
                let steps = place_barriers(steps, hazards, &mut d, false, true);
                *dirty |= d;
                out.push(Step::Sequential { levels, steps });
            }
            Step::If {
                cond,
                accept,
                reject,
            } => {
                let (mut da, mut dr) = (*dirty, *dirty);
                let accept = place_barriers(accept, hazards, &mut da, false, true);
                let reject = place_barriers(reject, hazards, &mut dr, false, true);
                *dirty = da || dr;
                out.push(Step::If {
                    cond,
                    accept,
                    reject,
                });
            }
            Step::Barrier => {
                *dirty = false;
                out.push(Step::Barrier);
            }
        }
    }
    out
}
