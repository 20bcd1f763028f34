//! Atomic updates in WGSL (3.3 section 2.12): atomic built-ins where the operation and type have
//! one, a compare-exchange loop where they have not, and updates of a privatized array going to the
//! workgroup's copy in workgroup memory.

use super::*;

impl Writer<'_> {
    /// The workgroup's copy of array `p` in workgroup memory, where it fits: zeroed, then a
    /// barrier; atomic updates of `p` go to it from here on.
    pub(super) fn privatize_begin(
        &mut self,
        out: &mut String,
        entry: usize,
        p: acc_core::ir::plan::Privatized,
    ) -> Result<()> {
        let a = p.array;
        let elem = self.k.access(a, None).map_or(Scalar::U32, |x| x.ty);
        let t = if elem == Scalar::I32 { "i32" } else { "u32" };
        let decl =
            format!("var<workgroup> acc_priv_{entry}: array<atomic<{t}>, {WORKGROUP_PRIVATE}>;\n");
        if !self.helpers.contains(&decl) {
            self.helpers.push_str(&decl);
        }
        // (Array lengths travel as `u32`.)
        let (fits, len) = (
            format!("(params.n{a} <= {WORKGROUP_PRIVATE}u)"),
            format!("params.n{a}"),
        );
        let zero = if t == "i32" { "0i" } else { "0u" };
        let _ = writeln!(out, "    let acc_fits_{a} = {fits};");
        let _ = writeln!(
            out,
            "    let acc_plen_{a}: u32 = select(0u, {len}, acc_fits_{a});"
        );
        let _ = writeln!(out, "    for (var acc_j: u32 = acc_lid; acc_j < acc_plen_{a}; acc_j = acc_j + {wg}u) {{ atomicStore(&acc_priv_{entry}[acc_j], {zero}); }}", wg = self.wg);
        let _ = writeln!(out, "    workgroupBarrier();");
        self.privatized = Some((a, entry));
        Ok(())
    }

    /// Ends the workgroup's copy of `p`: a barrier, then each changed element is combined
    /// into the array with one atomic.
    pub(super) fn privatize_end(
        &mut self,
        out: &mut String,
        entry: usize,
        p: acc_core::ir::plan::Privatized,
    ) -> Result<()> {
        self.privatized = None;
        let a = p.array;
        let elem = self.k.access(a, None).map_or(Scalar::U32, |x| x.ty);
        let zero = if elem == Scalar::I32 { "0i" } else { "0u" };
        let f = private_atomic(p.op);
        let _ = writeln!(out, "    workgroupBarrier();");
        let _ = writeln!(
            out,
            "    for (var acc_j: u32 = acc_lid; acc_j < acc_plen_{a}; acc_j = acc_j + {wg}u) {{",
            wg = self.wg
        );
        let _ = writeln!(
            out,
            "        let acc_pv = atomicLoad(&acc_priv_{entry}[acc_j]);"
        );
        let _ = writeln!(
            out,
            "        if (acc_pv != {zero}) {{ _ = {f}(&p{a}[params.b{a} + acc_j], acc_pv); }}"
        );
        let _ = writeln!(out, "    }}");
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic_stmt(
        &mut self,
        out: &mut String,
        pad: &str,
        (array, field): (ParamId, Option<FieldId>),
        index: Handle<Expr>,
        op: AtomicOp,
        value: Handle<Expr>,
        old: Option<LocalId>,
        new: Option<LocalId>,
    ) -> Result<()> {
        let elem =
            self.k.access(array, field).map(|a| a.ty).ok_or_else(|| {
                unsupported(format!("internal error: atomic on parameter {array}"))
            })?;
        let packed = self.packed(array, field);
        if packed.is_none() {
            atomic_word(elem, self.target)?;
        }
        let member = self.member(array, field)?;
        // How a value is read from its atomic word, and the word that holds a new value.
        let dec = |w: &str| {
            packed
                .as_ref()
                .map_or_else(|| decode(elem, w), |p| p.extract(w))
        };
        let enc = |old_w: &str, v: &str| {
            packed
                .as_ref()
                .map_or_else(|| encode(elem, v), |p| p.insert(old_w, v))
        };
        let i = self.expr(index)?;
        let place = format!(
            "p{array}[params.b{array} + {}]{member}",
            self.index32("acc_i", false)
        );
        let check = self.bounds_check(array, "acc_i");
        let _ = writeln!(out, "{pad}{{ let acc_i = {i}; if ({check}) {{");
        let set = |out: &mut String, local: Option<LocalId>, v: &str| {
            if let Some(l) = local {
                let _ = writeln!(out, "{pad}    l{l} = {v};");
            }
        };
        // The workgroup's copy, where the array fits in it.
        let private = match (self.privatized, op) {
            (Some((a, entry)), AtomicOp::Update(bop))
                if a == array
                    && field.is_none()
                    && matches!(bop, BinaryOp::Add | BinaryOp::BitOr | BinaryOp::BitXor) =>
            {
                let v = self.expr(value)?;
                let idx = self.index32("acc_i", false);
                let _ = writeln!(
                    out,
                    "{pad}    if (acc_fits_{a}) {{ _ = {}(&acc_priv_{entry}[{idx}], {v}); }} else {{",
                    private_atomic(bop)
                );
                true
            }
            _ => false,
        };
        match op {
            AtomicOp::Read => set(out, old, &dec(&format!("atomicLoad(&{place})"))),
            AtomicOp::Exchange if packed.is_some() => {
                let v = self.expr(value)?;
                let _ = writeln!(out, "{pad}    let acc_v = {v};");
                let _ = writeln!(out, "{pad}    loop {{");
                let _ = writeln!(out, "{pad}        let acc_old_w = atomicLoad(&{place});");
                let _ = writeln!(out, "{pad}        if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{", enc("acc_old_w", "acc_v"));
                if let Some(l) = old {
                    let _ = writeln!(out, "{pad}            l{l} = {};", dec("acc_old_w"));
                }
                if let Some(l) = new {
                    let _ = writeln!(out, "{pad}            l{l} = acc_v;");
                }
                let _ = writeln!(out, "{pad}            break;");
                let _ = writeln!(out, "{pad}        }}");
                let _ = writeln!(out, "{pad}    }}");
            }
            AtomicOp::Exchange => {
                let v = self.expr(value)?;
                let _ = writeln!(
                    out,
                    "{pad}    let acc_old = atomicExchange(&{place}, {});",
                    encode(elem, &v)
                );
                set(out, old, &decode(elem, "acc_old"));
                set(out, new, &v);
            }
            AtomicOp::Update(bop) => {
                let v = self.expr(value)?;
                let _ = writeln!(out, "{pad}    let acc_v = {v};");
                // Native read-modify-write where WGSL has it for the word type and the value
                // needs no wrapping; a compare-exchange loop otherwise.
                let native = super::native_update(bop, elem);
                let combined = |o: &str| {
                    let r = format!("({o} {} acc_v)", bop.symbol());
                    wrap(elem, &r).unwrap_or(r)
                };
                match native {
                    Some(f) if packed.is_none() => {
                        let _ = writeln!(out, "{pad}    let acc_old = {f}(&{place}, acc_v);");
                        set(out, old, "acc_old");
                        set(out, new, &combined("acc_old"));
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}    loop {{");
                        let _ = writeln!(out, "{pad}        let acc_old_w = atomicLoad(&{place});");
                        let _ = writeln!(out, "{pad}        let acc_old = {};", dec("acc_old_w"));
                        let _ =
                            writeln!(out, "{pad}        let acc_new = {};", combined("acc_old"));
                        let _ = writeln!(out, "{pad}        if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{", enc("acc_old_w", "acc_new"));
                        if let Some(l) = old {
                            let _ = writeln!(out, "{pad}            l{l} = acc_old;");
                        }
                        if let Some(l) = new {
                            let _ = writeln!(out, "{pad}            l{l} = acc_new;");
                        }
                        let _ = writeln!(out, "{pad}            break;");
                        let _ = writeln!(out, "{pad}        }}");
                        let _ = writeln!(out, "{pad}    }}");
                    }
                }
            }
            AtomicOp::Combine(l) => {
                // The operand is an expression of the old value, which it reads from local
                // `l`: set on each try of the compare-exchange loop.
                let _ = writeln!(out, "{pad}    loop {{");
                let _ = writeln!(out, "{pad}        let acc_old_w = atomicLoad(&{place});");
                let _ = writeln!(out, "{pad}        l{l} = {};", dec("acc_old_w"));
                let _ = writeln!(out, "{pad}        let acc_new = {};", self.expr(value)?);
                let _ = writeln!(out, "{pad}        if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{", enc("acc_old_w", "acc_new"));
                set(out, old, &format!("l{l}"));
                set(out, new, "acc_new");
                let _ = writeln!(out, "{pad}            break;");
                let _ = writeln!(out, "{pad}        }}");
                let _ = writeln!(out, "{pad}    }}");
            }
        }
        if private {
            let _ = writeln!(out, "{pad}    }}");
        }
        let _ = writeln!(out, "{pad}}} }}");
        Ok(())
    }
}
