//! A gang iteration on a workgroup in WGSL: the steps of the plan
//! ([`acc_core::ir::gang_phases`]) in WGSL's words. What runs where and where the workgroup
//! synchronizes is decided there; this writes it.

use acc_core::ir::plan::{SharedLoop, Step};

use super::*;

impl Writer<'_> {
    /// The steps of a gang iteration of entry point `entry`, every invocation of the workgroup
    /// taking each in order, at nesting `depth`.
    pub(super) fn gang_steps(
        &mut self,
        out: &mut String,
        steps: &[Step],
        entry: usize,
        depth: usize,
    ) -> Result<()> {
        let pad = "    ".repeat(depth);
        for s in steps {
            match s {
                Step::Redundant(st) => self.stmt(out, st, depth)?,
                Step::Barrier => {
                    if self.storage_barriers {
                        let _ = writeln!(out, "{pad}storageBarrier();");
                    }
                    let _ = writeln!(out, "{pad}workgroupBarrier();");
                }
                Step::Shared(l) => self.shared_loop(out, l, entry, depth)?,
                Step::Sequential { levels, steps } => {
                    self.sequential_loop_with(out, levels, depth, &mut |w, out, depth| {
                        w.gang_steps(out, steps, entry, depth)
                    })?
                }
                Step::If {
                    cond,
                    accept,
                    reject,
                } => {
                    let c = self.expr(*cond)?;
                    let _ = writeln!(out, "{pad}if ({c}) {{");
                    self.gang_steps(out, accept, entry, depth + 1)?;
                    let _ = writeln!(out, "{pad}}} else {{");
                    self.gang_steps(out, reject, entry, depth + 1)?;
                    let _ = writeln!(out, "{pad}}}");
                }
            }
        }
        Ok(())
    }

    /// A loop the workgroup's invocations share, then its reductions combined across the
    /// workgroup. Each invocation's part of a workgroup reduction starts at the identity; the
    /// value before the loop joins the workgroup's result.
    fn shared_loop(
        &mut self,
        out: &mut String,
        l: &SharedLoop,
        entry: usize,
        depth: usize,
    ) -> Result<()> {
        let Stmt::For { levels, body, .. } = &*l.vector else {
            unreachable!("a shared loop is a loop")
        };
        let pad = "    ".repeat(depth);
        let _ = writeln!(out, "{pad}{{");
        for (i, r) in l.block_reductions.iter().enumerate() {
            let local = r.reduction.local;
            let ty = self.k.function.locals[local as usize].ty;
            if r.reduction.op == ReduceOp::ComplexMul {
                // A complex product: both parts kept, from 1 + 0i.
                let (one, zero) = (
                    literal(Literal::Float(ty, 1.0), self.target)?,
                    literal(Literal::Float(ty, 0.0), self.target)?,
                );
                let im = local + 1;
                let _ = writeln!(out, "{pad}let acc_keep_{i} = l{local};");
                let _ = writeln!(out, "{pad}let acc_keep_{i}_im = l{im};");
                let _ = writeln!(out, "{pad}l{local} = {one};");
                let _ = writeln!(out, "{pad}l{im} = {zero};");
                continue;
            }
            let id = identity(r.reduction.op, ty, self.target)?;
            let _ = writeln!(out, "{pad}let acc_keep_{i} = l{local};");
            let _ = writeln!(out, "{pad}l{local} = {id};");
        }
        let stride = format!("{}u", self.wg);
        let unroll = l.unrolled();
        self.strided(
            out,
            levels,
            "v",
            "acc_lid",
            &stride,
            unroll,
            &mut |w, out| w.block(out, body, depth + 1),
        )?;
        for (i, r) in l.block_reductions.iter().enumerate() {
            self.workgroup_allreduce(
                out,
                entry,
                r.reduction,
                &format!("acc_keep_{i}"),
                r.first_thread_only,
            )?;
        }
        let _ = writeln!(out, "{pad}}}");
        Ok(())
    }
}
