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
    ) -> Result<()> {
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
        )?;
        let _ = writeln!(
            out,
            "{pad}    if (acc_lid < acc_s) {{ {sh}[acc_lid] = {}; }}",
            as_word(ty, &c)
        );
        let _ = writeln!(out, "{pad}    workgroupBarrier();");
        let _ = writeln!(out, "{pad}}}");
        Ok(())
    }

    /// The complex product (`ReduceOp::ComplexMul`) of the parts in locals `re` and `re + 1`
    /// of every invocation, a tree through workgroup arrays `sh` (real parts) and `sh_im`, in a
    /// fixed order: the result is in `sh[0]` and `sh_im[0]` once it returns. Products in
    /// num_complex's order, `(ac - bd, ad + bc)`.
    pub(super) fn workgroup_pair_tree(
        &mut self,
        out: &mut String,
        pad: &str,
        sh: &str,
        re: LocalId,
    ) -> Result<()> {
        let _ = writeln!(out, "{pad}{sh}[acc_lid] = l{re};");
        let _ = writeln!(out, "{pad}{sh}_im[acc_lid] = l{};", re + 1);
        let _ = writeln!(out, "{pad}workgroupBarrier();");
        let _ = writeln!(
            out,
            "{pad}for (var acc_s: u32 = {}u; acc_s > 0u; acc_s = acc_s >> 1u) {{",
            self.wg / 2
        );
        let _ = writeln!(out, "{pad}    if (acc_lid < acc_s) {{");
        let product = pair_product(
            (&format!("{sh}[acc_lid]"), &format!("{sh}_im[acc_lid]")),
            (
                &format!("{sh}[acc_lid + acc_s]"),
                &format!("{sh}_im[acc_lid + acc_s]"),
            ),
            (&format!("{sh}[acc_lid]"), &format!("{sh}_im[acc_lid]")),
        );
        let _ = writeln!(out, "{pad}        {product}");
        let _ = writeln!(out, "{pad}    }}");
        let _ = writeln!(out, "{pad}    workgroupBarrier();");
        let _ = writeln!(out, "{pad}}}");
        Ok(())
    }

    /// [`Writer::workgroup_allreduce`] of a complex product: the pair tree through workgroup
    /// arrays of its own, the result multiplied into the kept value `keep` (`keep_im`) in
    /// every invocation, then a barrier before the arrays are used again.
    fn workgroup_allreduce_pair(
        &mut self,
        out: &mut String,
        entry: usize,
        r: Reduction,
        keep: &str,
    ) -> Result<()> {
        let ty = self.k.function.locals[r.local as usize].ty;
        let wty = storage_type(ty, self.target)?;
        // Named by the reduced local: two loops of one entry point reduce different ones.
        let sh = format!("acc_gang_{entry}_{}", r.local);
        for name in [sh.clone(), format!("{sh}_im")] {
            let decl = format!("var<workgroup> {name}: array<{wty}, {WORKGROUP_SIZE}>;\n");
            if !self.helpers.contains(&decl) {
                self.helpers.push_str(&decl);
            }
        }
        let pad = "        ";
        self.workgroup_pair_tree(out, pad, &sh, r.local)?;
        let (re, im) = (r.local, r.local + 1);
        let _ = writeln!(
            out,
            "{pad}{}",
            pair_product(
                (keep, &format!("{keep}_im")),
                (&format!("{sh}[0]"), &format!("{sh}_im[0]")),
                (&format!("l{re}"), &format!("l{im}")),
            )
        );
        let _ = writeln!(out, "{pad}workgroupBarrier();");
        Ok(())
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
        r: Reduction,
        keep: &str,
        first_only: bool,
    ) -> Result<()> {
        let ty = self.k.function.locals[r.local as usize].ty;
        if r.op == ReduceOp::ComplexMul {
            return self.workgroup_allreduce_pair(out, entry, r, keep);
        }
        let wty = if ty == Scalar::Bool {
            "u32"
        } else {
            storage_type(ty, self.target)?
        };
        // Named by the reduced local: two loops of one entry point reduce different ones.
        let sh = format!("acc_gang_{entry}_{}", r.local);
        let decl = format!("var<workgroup> {sh}: array<{wty}, {WORKGROUP_SIZE}>;\n");
        if !self.helpers.contains(&decl) {
            self.helpers.push_str(&decl);
        }
        let l = r.local;
        self.workgroup_tree(out, "        ", &sh, r.op, ty, &format!("l{l}"))?;
        let halves = self.by_halves(ty);
        let total = combine(r.op, ty, keep, &from_word(ty, &format!("{sh}[0]")), halves)?;
        if first_only {
            let _ = writeln!(out, "        if (acc_lid == 0u) {{ l{l} = {total}; }}");
        } else {
            let _ = writeln!(out, "        l{l} = {total};");
            let _ = writeln!(out, "        workgroupBarrier();");
        }
        Ok(())
    }
}

/// `out = a * b` for complex numbers as pairs of WGSL places, `(a.0 b.0 - a.1 b.1, a.0 b.1 +
/// a.1 b.0)` in num_complex's order, reading every operand before writing (`out` may be `a`).
pub(super) fn pair_product(a: (&str, &str), b: (&str, &str), out: (&str, &str)) -> String {
    format!(
        "{{ let acc_a = {}; let acc_b = {}; let acc_c = {}; let acc_d = {}; {} = acc_a * acc_c - acc_b * acc_d; {} = acc_a * acc_d + acc_b * acc_c; }}",
        a.0, a.1, b.0, b.1, out.0, out.1
    )
}
