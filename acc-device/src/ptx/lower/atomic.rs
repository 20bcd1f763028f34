//! Atomic updates in PTX (3.3 section 2.12): `atom` where the operation has one, a compare-and-swap
//! loop where it has not, sub-word elements through their aligned word, and updates of a privatized
//! array going to the block's copy in shared memory.

use super::*;

impl Writer<'_> {
    /// Starts a block's copy of array `p` in shared memory, where it fits: zeroed by the
    /// block's threads, then a barrier; atomic updates of `p` go to it from here on.
    pub(super) fn privatize_begin(
        &mut self,
        p: acc_core::ir::plan::Privatized,
        tid: &str,
        ntid: &str,
    ) -> Result<()> {
        self.priv_used = true;
        let len = self.reg("%rd");
        self.emit(format!("ld.param.u64 {len}, [acc_n{}];", p.array));
        let fits = self.reg("%p");
        self.emit(format!("setp.le.u64 {fits}, {len}, {PRIVATE_ELEMENTS};"));
        self.private_pass(&fits, &len, tid, ntid, |w, at| {
            w.emit(format!("st.shared.u32 [{at}], 0;"));
            Ok(())
        })?;
        self.emit("bar.sync 0;");
        self.privatized = Some((p.array, fits));
        Ok(())
    }

    /// Ends the block's copy of `p`: a barrier, then each element the block changed is
    /// combined into the array with one atomic.
    pub(super) fn privatize_end(
        &mut self,
        p: acc_core::ir::plan::Privatized,
        tid: &str,
        ntid: &str,
    ) -> Result<()> {
        let Some((_, fits)) = self.privatized.take() else {
            return Ok(());
        };
        self.emit("bar.sync 0;");
        let len = self.reg("%rd");
        self.emit(format!("ld.param.u64 {len}, [acc_n{}];", p.array));
        let elem = self.k.access(p.array, None).map_or(Scalar::U32, |a| a.ty);
        let op = private_atom(p.op, elem);
        let array = p.array;
        self.private_pass(&fits, &len, tid, ntid, |w, at| {
            let (v, zero) = (w.reg("%r"), w.reg("%p"));
            w.emit(format!("ld.shared.b32 {v}, [{at}];"));
            w.emit(format!("setp.eq.b32 {zero}, {v}, 0;"));
            let skip = w.label("unchanged");
            w.emit(format!("@{zero} bra {skip};"));
            let (base, off) = (w.reg("%rd"), w.reg("%rd"));
            w.emit(format!("ld.param.u64 {base}, [acc_a{array}];"));
            let first = w.reg("%rd");
            w.emit(format!("mov.u64 {first}, acc_priv;"));
            w.emit(format!("sub.u64 {off}, {at}, {first};"));
            w.emit(format!("add.u64 {base}, {base}, {off};"));
            let d = w.reg("%r");
            let v = if op.ends_with("f32") {
                let f = w.reg("%f");
                w.emit(format!("mov.b32 {f}, {v};"));
                f
            } else {
                v
            };
            let d = if op.ends_with("f32") { w.reg("%f") } else { d };
            w.emit(format!("atom.global.{op} {d}, [{base}], {v};"));
            w.emit(format!("{skip}:"));
            Ok(())
        })
    }

    /// An atomic access of `array[index]` (3.3 section 2.12): native `atom` instructions where
    /// PTX has the operation for the type, a compare-and-swap loop otherwise.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic(
        &mut self,
        (array, field): (ParamId, Option<FieldId>),
        index: Handle<Expr>,
        op: AtomicOp,
        value: Handle<Expr>,
        old: Option<LocalId>,
        new: Option<LocalId>,
    ) -> Result<()> {
        let access = self.array(array, field)?;
        let elem = access.ty;
        if elem.size() < 4 {
            return self.atomic_narrow((array, field), index, op, value, old, new);
        }
        let r = repr(elem);
        let i = self.index_expr(index)?;
        let (ok, addr) = self.checked_address(array, index, &i, access)?;
        let skip = self.label("atomic");
        if let Some(ok) = ok {
            self.emit(format!("@!{ok} bra {skip};"));
        }
        let set = |w: &mut Self, local: Option<LocalId>, v: &str| -> Result<()> {
            if let Some(l) = local {
                let reg = w.local(l)?;
                w.emit(format!("mov{} {reg}, {v};", r.bits));
            }
            Ok(())
        };
        match op {
            AtomicOp::Read => {
                let d = self.reg(r.class);
                self.emit(format!("ld.relaxed.gpu.global{} {d}, [{addr}];", r.ty));
                set(self, old, &d)?;
            }
            AtomicOp::Exchange => {
                let v = self.expr(value)?;
                let d = self.reg(r.class);
                self.emit(format!("atom.global.exch{} {d}, [{addr}], {v};", r.bits));
                set(self, old, &d)?;
                set(self, new, &v)?;
            }
            AtomicOp::Update(bop) => {
                let v = self.expr(value)?;
                // The block's copy in shared memory, where the array fits there.
                if let Some((_, fits)) = self
                    .privatized
                    .clone()
                    .filter(|(a, _)| *a == array && field.is_none())
                {
                    let global = self.label("global");
                    self.emit(format!("@!{fits} bra {global};"));
                    let at = self.reg("%rd");
                    self.emit(format!("mov.u64 {at}, acc_priv;"));
                    self.emit(format!("mad.lo.u64 {at}, {i}, 4, {at};"));
                    let d = self.reg(r.class);
                    self.emit(format!(
                        "atom.shared.{} {d}, [{at}], {v};",
                        private_atom(bop, elem)
                    ));
                    self.emit(format!("bra {skip};"));
                    self.emit(format!("{global}:"));
                }
                match native_update(bop, elem) {
                    Some(instr) => {
                        let d = self.reg(r.class);
                        self.emit(format!("atom.global.{instr} {d}, [{addr}], {v};"));
                        set(self, old, &d)?;
                        if new.is_some() {
                            let n = self.binary(bop, elem, &d, &v)?;
                            set(self, new, &n)?;
                        }
                    }
                    None => {
                        self.cas_loop(&addr, elem, old, new, |w, cur| w.binary(bop, elem, cur, &v))?
                    }
                }
            }
            AtomicOp::Combine(l) => {
                self.cas_loop(&addr, elem, old, new, |w, cur| {
                    let reg = w.local(l)?;
                    w.emit(format!("mov{} {reg}, {cur};", r.bits));
                    w.expr(value)
                })?;
            }
        }
        self.emit(format!("{skip}:"));
        Ok(())
    }

    /// A compare-and-swap loop on the 4- or 8-byte element at `addr`: `combine` computes the
    /// new value from the current one, until no other thread came in between; the old and
    /// new values go to the locals given.
    pub(super) fn cas_loop(
        &mut self,
        addr: &str,
        elem: Scalar,
        old: Option<LocalId>,
        new: Option<LocalId>,
        mut combine: impl FnMut(&mut Self, &str) -> Result<String>,
    ) -> Result<()> {
        let r = repr(elem);
        let int_ty = if r.bits == ".b64" { ".u64" } else { ".u32" };
        let bits_class = if r.class == "%rd" || r.class == "%fd" {
            "%rd"
        } else {
            "%r"
        };
        let top = self.label("cas");
        let cur = self.reg(r.class);
        self.emit(format!("ld.relaxed.gpu.global{} {cur}, [{addr}];", r.ty));
        self.emit(format!("{top}:"));
        let n = combine(self, &cur)?;
        let (expected, desired, seen) = (
            self.reg(bits_class),
            self.reg(bits_class),
            self.reg(bits_class),
        );
        self.emit(format!("mov{} {expected}, {cur};", r.bits));
        self.emit(format!("mov{} {desired}, {n};", r.bits));
        self.emit(format!(
            "atom.global.cas{} {seen}, [{addr}], {expected}, {desired};",
            r.bits
        ));
        let again = self.reg("%p");
        self.emit(format!("setp.ne{int_ty} {again}, {seen}, {expected};"));
        self.emit(format!("mov{} {cur}, {seen};", r.bits));
        self.emit(format!("@{again} bra {top};"));
        // `cur` was reloaded with what was there; on success that is the old value.
        for (local, v) in [(old, &cur), (new, &n)] {
            if let Some(l) = local {
                let reg = self.local(l)?;
                self.emit(format!("mov{} {reg}, {v};", r.bits));
            }
        }
        Ok(())
    }

    /// An atomic access of an 8- or 16-bit element (or a `bool`): a compare-and-swap loop on
    /// the aligned 32-bit word that holds it, changing only its bits.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic_narrow(
        &mut self,
        (array, field): (ParamId, Option<FieldId>),
        index: Handle<Expr>,
        op: AtomicOp,
        value: Handle<Expr>,
        old: Option<LocalId>,
        new: Option<LocalId>,
    ) -> Result<()> {
        let access = self.array(array, field)?;
        let elem = access.ty;
        let i = self.index_expr(index)?;
        let (ok, addr) = self.checked_address(array, index, &i, access)?;
        let skip = self.label("atomic");
        if let Some(ok) = ok {
            self.emit(format!("@!{ok} bra {skip};"));
        }
        let bits = elem.size() * 8;
        // The element as a value register of its type, from its bits in a word.
        let unpack = |w: &mut Self, word: &str, shift: &str| -> String {
            let b = w.reg("%r");
            w.emit(format!("shr.b32 {b}, {word}, {shift};"));
            if elem == Scalar::Bool {
                let p = w.reg("%p");
                w.emit(format!("and.b32 {b}, {b}, 255;"));
                w.emit(format!("setp.ne.u32 {p}, {b}, 0;"));
                p
            } else {
                if elem.is_signed() {
                    w.emit(format!("cvt.s32.s{bits} {b}, {b};"));
                } else {
                    w.emit(format!("and.b32 {b}, {b}, {};", (1u64 << bits) - 1));
                }
                b
            }
        };
        if op == AtomicOp::Read {
            let v = self.load_element(&addr, elem, true);
            if let Some(l) = old {
                let reg = self.local(l)?;
                self.emit(format!("mov{} {reg}, {v};", repr(elem).bits));
            }
            self.emit(format!("{skip}:"));
            return Ok(());
        }
        let v = self.expr(value)?;
        let (word, shift, mask) = (self.reg("%rd"), self.reg("%r"), self.reg("%r"));
        self.emit(format!("and.b64 {word}, {addr}, -4;"));
        let low = self.reg("%r");
        self.emit(format!("cvt.u32.u64 {low}, {addr};"));
        self.emit(format!("and.b32 {low}, {low}, 3;"));
        self.emit(format!("shl.b32 {shift}, {low}, 3;"));
        self.emit(format!("mov.b32 {mask}, {};", (1u64 << bits) - 1));
        self.emit(format!("shl.b32 {mask}, {mask}, {shift};"));
        let keep = self.reg("%r");
        self.emit(format!("not.b32 {keep}, {mask};"));
        let cur = self.reg("%r");
        self.emit(format!("ld.relaxed.gpu.global.u32 {cur}, [{word}];"));
        let top = self.label("cas");
        self.emit(format!("{top}:"));
        let before = unpack(self, &cur, &shift);
        let after = match op {
            AtomicOp::Exchange => v.clone(),
            AtomicOp::Update(bop) => self.binary(bop, elem, &before, &v)?,
            AtomicOp::Combine(l) => {
                let reg = self.local(l)?;
                self.emit(format!("mov{} {reg}, {before};", repr(elem).bits));
                self.expr(value)?
            }
            AtomicOp::Read => unreachable!("handled above"),
        };
        let packed = self.reg("%r");
        if elem == Scalar::Bool {
            self.emit(format!("selp.u32 {packed}, 1, 0, {after};"));
        } else {
            self.emit(format!("mov.b32 {packed}, {after};"));
        }
        self.emit(format!("shl.b32 {packed}, {packed}, {shift};"));
        self.emit(format!("and.b32 {packed}, {packed}, {mask};"));
        let desired = self.reg("%r");
        self.emit(format!("and.b32 {desired}, {cur}, {keep};"));
        self.emit(format!("or.b32 {desired}, {desired}, {packed};"));
        let seen = self.reg("%r");
        self.emit(format!(
            "atom.global.cas.b32 {seen}, [{word}], {cur}, {desired};"
        ));
        let again = self.reg("%p");
        self.emit(format!("setp.ne.u32 {again}, {seen}, {cur};"));
        self.emit(format!("mov.b32 {cur}, {seen};"));
        self.emit(format!("@{again} bra {top};"));
        let bits_ty = repr(elem).bits;
        if let Some(l) = old {
            let reg = self.local(l)?;
            self.emit(format!("mov{bits_ty} {reg}, {before};"));
        }
        if let Some(l) = new {
            let reg = self.local(l)?;
            self.emit(format!("mov{bits_ty} {reg}, {after};"));
        }
        self.emit(format!("{skip}:"));
        Ok(())
    }
}
