//! Reductions across a workgroup in WGSL: a tree through workgroup memory with barriers, leaving
//! the result in the first invocation or (the all-reduce) in every invocation.

use super::*;

impl Writer<'_> {
    /// `element` of every invocation combined by `op` in workgroup array `sh`, a tree in a
    /// fixed order (deterministic): the result is in `sh[0]`, as a word, once it returns.
    pub(super) fn workgroup_tree(
        &mut self,
        out: &mut String,
        pad: &str,
        sh: &str,
        op: ReduceOp,
        ty: Scalar,
        element: &str,
    ) {
        let _ = writeln!(out, "{pad}{sh}[acc_lid] = {};", as_word(ty, element));
        let _ = writeln!(out, "{pad}workgroupBarrier();");
        let _ = writeln!(
            out,
            "{pad}for (var acc_s: u32 = {}u; acc_s > 0u; acc_s = acc_s >> 1u) {{",
            self.wg / 2
        );
        let c = combine(
            op,
            ty,
            &from_word(ty, &format!("{sh}[acc_lid]")),
            &from_word(ty, &format!("{sh}[acc_lid + acc_s]")),
            self.by_halves(ty),
        );
        let _ = writeln!(
            out,
            "{pad}    if (acc_lid < acc_s) {{ {sh}[acc_lid] = {}; }}",
            as_word(ty, &c)
        );
        let _ = writeln!(out, "{pad}    workgroupBarrier();");
        let _ = writeln!(out, "{pad}}}");
    }

    /// Combines local `r.local` over the workgroup's invocations (a tree in workgroup memory,
    /// in a fixed order: deterministic) into `keep op total`, in every invocation, or with
    /// `first_only` in the first invocation alone (the others' copy is left as it was). Every
    /// invocation must reach it; it leaves the workgroup memory free for the next use (with
    /// `first_only` only the first invocation reads the result slot, and it writes that slot
    /// first in the next tree, so no barrier is needed after it).
    pub(super) fn workgroup_allreduce(
        &mut self,
        out: &mut String,
        entry: usize,
        i: usize,
        r: Reduction,
        keep: &str,
        first_only: bool,
    ) -> Result<()> {
        let ty = self.k.function.locals[r.local as usize].ty;
        let wty = if ty == Scalar::Bool {
            "u32"
        } else {
            storage_type(ty, self.target)?
        };
        let sh = format!("acc_gang_{entry}_{i}");
        let decl = format!("var<workgroup> {sh}: array<{wty}, {WORKGROUP_SIZE}>;\n");
        if !self.helpers.contains(&decl) {
            self.helpers.push_str(&decl);
        }
        let l = r.local;
        self.workgroup_tree(out, "        ", &sh, r.op, ty, &format!("l{l}"));
        let halves = self.by_halves(ty);
        let total = combine(r.op, ty, keep, &from_word(ty, &format!("{sh}[0]")), halves);
        if first_only {
            let _ = writeln!(out, "        if (acc_lid == 0u) {{ l{l} = {total}; }}");
        } else {
            let _ = writeln!(out, "        l{l} = {total};");
            let _ = writeln!(out, "        workgroupBarrier();");
        }
        Ok(())
    }
}
