//! A gang iteration on a block (or a warp) in PTX: the steps of the plan
//! ([`acc_core::ir::gang_phases`]) in PTX's words. What runs where and where the block
//! synchronizes is decided there; this writes it.

use acc_core::ir::plan::{SharedLoop, Step};

use super::*;

/// The registers a gang iteration's steps use, set up by the grid entry.
pub(super) struct Gang {
    /// The thread's lane in the group running the iteration (its index in the block, or in
    /// its warp with `vector_length(n)`, n <= 32).
    pub lane: String,
    /// The thread's index in the block.
    pub tid: String,
    /// Scratch for a shared loop's first iteration and its stride (the group's size).
    pub first: String,
    pub stride: String,
    /// The slot set of reductions into the first thread alone (see
    /// [`Writer::block_reduce_first`]).
    pub set: String,
    /// Whether a warp, not the block, runs each iteration.
    pub warps: bool,
}

impl Writer<'_> {
    /// The steps of a gang iteration, every thread of the group taking each in order.
    pub(super) fn gang_steps(&mut self, steps: &[Step], g: &Gang) -> Result<()> {
        for s in steps {
            match s {
                Step::Redundant(st) => self.stmt(st)?,
                // (Shuffles do not order memory: a warp synchronizes apart.)
                Step::Barrier => self.emit(if g.warps {
                    "bar.warp.sync -1;"
                } else {
                    "bar.sync 0;"
                }),
                Step::Shared(l) => self.shared_loop(l, g)?,
                Step::Sequential { levels, steps } => {
                    self.sequential_loop_with(levels, &mut |w: &mut Self| w.gang_steps(steps, g))?
                }
                Step::If {
                    cond,
                    accept,
                    reject,
                } => {
                    let c = self.expr(*cond)?;
                    let (other, end) = (self.label("else"), self.label("endif"));
                    self.emit(format!("@!{c} bra {other};"));
                    self.gang_steps(accept, g)?;
                    self.emit(format!("bra {end};"));
                    self.emit(format!("{other}:"));
                    self.gang_steps(reject, g)?;
                    self.emit(format!("{end}:"));
                }
            }
        }
        Ok(())
    }

    /// A loop the group's threads share, then its reductions combined across the group. Each
    /// thread's part of a block reduction starts at the identity; the value before the loop
    /// joins the group's result.
    fn shared_loop(&mut self, l: &SharedLoop, g: &Gang) -> Result<()> {
        let Stmt::For { levels, body, .. } = &*l.vector else {
            unreachable!("a shared loop is a loop")
        };
        let mut kept = Vec::new();
        let mut pairs = Vec::new();
        for r in &l.block_reductions {
            let local = r.reduction.local;
            let ty = self.k.function.locals[local as usize].ty;
            if r.reduction.op == ReduceOp::ComplexMul {
                // A complex product: both parts kept, from 1 + 0i.
                let (re, im) = (self.local(local)?, self.local(local + 1)?);
                let (kre, kim) = (self.reg(repr(ty).class), self.reg(repr(ty).class));
                let (one, zero) = (
                    self.literal(Literal::Float(ty, 1.0))?,
                    self.literal(Literal::Float(ty, 0.0))?,
                );
                let b = repr(ty).bits;
                self.emit(format!("mov{b} {kre}, {re};"));
                self.emit(format!("mov{b} {kim}, {im};"));
                self.emit(format!("mov{b} {re}, {one};"));
                self.emit(format!("mov{b} {im}, {zero};"));
                pairs.push((local, ty, kre, kim));
                continue;
            }
            let reg = self.local(local)?;
            let keep = self.reg(repr(ty).class);
            self.emit(format!("mov{} {keep}, {reg};", repr(ty).bits));
            let id = self.identity(r.reduction.op, ty)?;
            self.emit(format!("mov{} {reg}, {id};", repr(ty).bits));
            kept.push((*r, ty, keep));
        }
        self.emit(format!("cvt.u64.u32 {}, {};", g.first, g.lane));
        let (first, stride) = (g.first.clone(), g.stride.clone());
        let group = if g.warps { 32 } else { BLOCK_SIZE };
        match levels.as_slice() {
            // A few iterations per thread at most (a tile's elements, a chunk's copy): each
            // thread runs its ones written out, `lane`, `lane + group`, .., no loop around them.
            [lv] if self.written_out.contains(&lv.var) => {
                let Expr::Literal(Literal::Int(_, n)) = self.k.function.exprs[lv.trips] else {
                    unreachable!("matched above")
                };
                // Only a round some threads sit out has a branch around it: the others are one
                // stretch of code, their loads in flight together.
                let n = n as u32;
                for round in 0..n.div_ceil(group) {
                    let (skip, p, it) = (self.label("one"), self.reg("%p"), self.reg("%rd"));
                    self.emit(format!("add.u64 {it}, {first}, {};", round * group));
                    if (round + 1) * group > n {
                        self.emit(format!("setp.ge.u64 {p}, {it}, {n};"));
                        self.emit(format!("@{p} bra {skip};"));
                    }
                    self.set_loop_var(lv, &it)?;
                    // (`continue` in the body ends the thread's iteration.)
                    self.loops.push((skip.clone(), skip.clone()));
                    let r = self.block(body);
                    self.loops.pop();
                    r?;
                    self.emit(format!("{skip}:"));
                }
            }
            // A ragged loop (a CSR row) is short: neither unrolled nor given a fast version,
            // whose check before the loop would cost more than the few checks it saves.
            _ => self.strided(
                levels,
                &first,
                &stride,
                l.unrolled(),
                &mut |w: &mut Self| w.block(body),
            )?,
        }
        for (r, ty, keep) in kept {
            let op = r.reduction.op;
            let reg = self.local(r.reduction.local)?;
            let total = if g.warps {
                self.warp_allreduce(op, ty, &reg)?
            } else if r.first_thread_only {
                self.block_reduce_first(op, ty, &reg, &g.tid, &g.set)?
            } else {
                self.block_allreduce(op, ty, &reg, &g.tid)?
            };
            let c = self.combine(op, ty, &keep, &total)?;
            self.emit(format!("mov{} {reg}, {c};", repr(ty).bits));
        }
        for (local, ty, kre, kim) in pairs {
            let (re, im) = (self.local(local)?, self.local(local + 1)?);
            let total = if g.warps {
                self.warp_allreduce_pair(ty, (&re, &im))?
            } else {
                self.block_allreduce_pair(ty, (&re, &im), &g.tid)?
            };
            let (cre, cim) = self.pair_mul(ty, (&kre, &kim), (&total.0, &total.1))?;
            let b = repr(ty).bits;
            self.emit(format!("mov{b} {re}, {cre};"));
            self.emit(format!("mov{b} {im}, {cim};"));
        }
        // A block reduction ends in a barrier, which the plan counts on; a warp's shuffles do
        // not order memory, so the warp synchronizes apart.
        if g.warps && !l.block_reductions.is_empty() {
            self.emit("bar.warp.sync -1;");
        }
        Ok(())
    }
}
