//! Reductions in PTX: a value combined across a warp (shuffles) and across a block (the warps'
//! results through shared memory), a block's partial written for the launch's final combine, and
//! the identity and combine of each reduction operator.

use super::*;

impl Writer<'_> {
    /// The combination of `v` over the warp's lanes, in every lane: a butterfly of shuffles,
    /// in which each lane combines the same pairs (so every lane holds the same value).
    pub(super) fn warp_allreduce(&mut self, op: ReduceOp, ty: Scalar, v: &str) -> Result<String> {
        let mut acc = v.to_string();
        for off in [16, 8, 4, 2, 1] {
            let other = self.shuffle(&acc, ty, off, "bfly");
            acc = self.combine(op, ty, &acc, &other)?;
        }
        Ok(acc)
    }

    /// The combination of `v` over the block's threads, in every thread: [`Writer::warps_combine`],
    /// then lane 0 of warp 0 publishes the result in shared memory, which every thread reads
    /// (deterministic for a block size). Every thread of the block must reach it; it leaves
    /// shared memory free for the next use.
    pub(super) fn block_allreduce(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
    ) -> Result<String> {
        let c = self.warps_combine(op, ty, v, tid)?;
        // (Warp 0 read the slots before its shuffles, so slot 0 is free.)
        self.store_word(".shared", &c.base, ty, &c.value)?;
        self.emit(format!("{}:", c.after));
        self.emit("bar.sync 0;");
        let r = self.load_word(".shared", &c.base, ty);
        let out = self.reg(repr(ty).class);
        self.emit(format!("mov{} {out}, {r};", repr(ty).bits));
        self.emit("bar.sync 0;");
        Ok(out)
    }

    /// The combination of `v` over the block's threads, in thread 0 only (the others' copy of
    /// the result register is undefined), through slot set `set`, which it then flips: one
    /// barrier, where [`Writer::block_allreduce`] takes three.
    pub(super) fn block_reduce_first(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
        set: &str,
    ) -> Result<String> {
        let c = self.warps_combine_in(op, ty, v, tid, Some(set))?;
        self.emit(format!("{}:", c.after));
        self.emit(format!("xor.b32 {set}, {set}, 1;"));
        Ok(c.value)
    }

    /// Writes the block's partial of `v` (thread 0 writes it at `partials[block]`) after
    /// [`Writer::warps_combine`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn block_reduce_shuffle(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
        ctaid: &str,
        slot: usize,
    ) -> Result<()> {
        let c = self.warps_combine(op, ty, v, tid)?;
        let pb = self.reg("%rd");
        self.emit(format!("ld.param.u64 {pb}, [acc_partials{slot}];"));
        let pa = self.reg("%rd");
        self.emit(format!("mul.wide.u32 {pa}, {ctaid}, {};", partial_size(ty)));
        self.emit(format!("add.u64 {pa}, {pb}, {pa};"));
        self.store_word(".global", &pa, ty, &c.value)?;
        self.emit(format!("{}:", c.after));
        Ok(())
    }

    /// The first half of a block reduction: each warp combines its lanes with shuffles, the
    /// warps' results go through shared memory (a barrier), and the first warp combines them,
    /// so the order is fixed for a block size. The code that follows runs on thread 0 alone,
    /// until the caller emits the returned `after` label.
    pub(super) fn warps_combine(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
    ) -> Result<WarpsCombined> {
        self.warps_combine_in(op, ty, v, tid, None)
    }

    /// [`Writer::warps_combine`] through the slots of set `set` (a register holding 0 or 1)
    /// when given: two sets, used in turn, let consecutive reductions of a block go without a
    /// barrier between them (a warp writing a set has passed the barrier of the reduction in
    /// between, which warp 0 reaches only after reading that set).
    fn warps_combine_in(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
        set: Option<&str>,
    ) -> Result<WarpsCombined> {
        self.shared = true;
        let mut acc = v.to_string();
        for off in [16, 8, 4, 2, 1] {
            let other = self.shuffle_down(&acc, ty, off);
            acc = self.combine(op, ty, &acc, &other)?;
        }
        let (lane, warp) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("and.b32 {lane}, {tid}, 31;"));
        self.emit(format!("shr.u32 {warp}, {tid}, 5;"));
        let (base, at) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mov.u64 {base}, acc_shared;"));
        if let Some(set) = set {
            let off = self.reg("%rd");
            self.emit(format!("mul.wide.u32 {off}, {set}, {SET_BYTES};"));
            self.emit(format!("add.u64 {base}, {base}, {off};"));
        }
        self.emit(format!("mul.wide.u32 {at}, {warp}, 8;"));
        self.emit(format!("add.u64 {at}, {base}, {at};"));
        let (skip, after) = (self.label("lane0"), self.label("warp0"));
        let p = self.reg("%p");
        self.emit(format!("setp.ne.u32 {p}, {lane}, 0;"));
        self.emit(format!("@{p} bra {skip};"));
        self.store_word(".shared", &at, ty, &acc)?;
        self.emit(format!("{skip}:"));
        self.emit("bar.sync 0;");
        let q = self.reg("%p");
        self.emit(format!("setp.ne.u32 {q}, {warp}, 0;"));
        self.emit(format!("@{q} bra {after};"));
        // Lanes past the warps' count start from the identity.
        let warps = BLOCK_SIZE / 32;
        let id = self.identity(op, ty)?;
        let la = self.reg("%rd");
        self.emit(format!("mul.wide.u32 {la}, {lane}, 8;"));
        self.emit(format!("add.u64 {la}, {base}, {la};"));
        let inside = self.reg("%p");
        self.emit(format!("setp.lt.u32 {inside}, {lane}, {warps};"));
        let mut w = self.reg(repr(ty).class);
        self.emit(format!("mov{} {w}, {id};", repr(ty).bits));
        let load = self.label("ld");
        self.emit(format!("@!{inside} bra {load};"));
        let x = self.load_word(".shared", &la, ty);
        self.emit(format!("mov{} {w}, {x};", repr(ty).bits));
        self.emit(format!("{load}:"));
        let mut off = warps / 2;
        while off > 0 {
            let other = self.shuffle_down(&w, ty, off);
            w = self.combine(op, ty, &w, &other)?;
            off /= 2;
        }
        let z = self.reg("%p");
        self.emit(format!("setp.ne.u32 {z}, {lane}, 0;"));
        self.emit(format!("@{z} bra {after};"));
        Ok(WarpsCombined {
            value: w,
            base,
            after,
        })
    }

    /// `v` of lane `lane + off` of the warp (every lane takes part).
    pub(super) fn shuffle_down(&mut self, v: &str, ty: Scalar, off: u32) -> String {
        self.shuffle(v, ty, off, "down")
    }

    /// `v` of another lane of the warp: `lane + off` (`down`) or `lane ^ off` (`bfly`).
    pub(super) fn shuffle(&mut self, v: &str, ty: Scalar, off: u32, mode: &str) -> String {
        let r = repr(ty);
        match (ty, r.bits) {
            (Scalar::Bool, _) => {
                let (w, o, d) = (self.reg("%r"), self.reg("%r"), self.reg("%p"));
                self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
                self.emit(format!("shfl.sync.{mode}.b32 {o}, {w}, {off}, 31, -1;"));
                self.emit(format!("setp.ne.u32 {d}, {o}, 0;"));
                d
            }
            (_, ".b64") => {
                let (bits, lo, hi) = (self.reg("%rd"), self.reg("%r"), self.reg("%r"));
                self.emit(format!("mov.b64 {bits}, {v};"));
                self.emit(format!("mov.b64 {{{lo}, {hi}}}, {bits};"));
                self.emit(format!("shfl.sync.{mode}.b32 {lo}, {lo}, {off}, 31, -1;"));
                self.emit(format!("shfl.sync.{mode}.b32 {hi}, {hi}, {off}, 31, -1;"));
                let d = self.reg(r.class);
                self.emit(format!("mov.b64 {bits}, {{{lo}, {hi}}};"));
                self.emit(format!("mov.b64 {d}, {bits};"));
                d
            }
            _ => {
                let d = self.reg(r.class);
                self.emit(format!("shfl.sync.{mode}.b32 {d}, {v}, {off}, 31, -1;"));
                d
            }
        }
    }

    /// Writes the block's partial of element `e` of an array reduction (of `len` elements)
    /// through a tree in shared memory.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn block_reduce_shared(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
        ctaid: &str,
        slot: usize,
        e: u32,
        len: u32,
    ) -> Result<()> {
        let slots = self.shared_tree(ty, &[v], tid, &mut |w, a, b| {
            Ok(vec![w.combine(op, ty, &a[0], &b[0])?])
        })?;
        let off = &slots[0];
        let skip = self.label("partial");
        let p = self.reg("%p");
        self.emit(format!("setp.ne.u32 {p}, {tid}, 0;"));
        self.emit(format!("@{p} bra {skip};"));
        let v = self.load_word(".shared", off, ty);
        let base = self.reg("%rd");
        self.emit(format!("ld.param.u64 {base}, [acc_partials{slot}];"));
        let at = self.reg("%rd");
        self.emit(format!(
            "mul.wide.u32 {at}, {ctaid}, {};",
            partial_size(ty) * len
        ));
        self.emit(format!("add.u64 {at}, {base}, {at};"));
        self.emit(format!("add.u64 {at}, {at}, {};", partial_size(ty) * e));
        self.store_word(".global", &at, ty, &v)?;
        self.emit(format!("{skip}:"));
        self.emit("bar.sync 0;");
        Ok(())
    }

    /// Writes the block's partials of array reduction `l` (of `len` elements) in rounds of
    /// `round` elements, `round` being a warp's lanes ([`EntryPlan::array_rounds`]): for each
    /// element of the round, each warp combines its lanes by shuffles and lane 0 puts the
    /// warp's value in shared memory (a row per warp); after one barrier, thread `t` of the
    /// first warp combines element `t` of the rows in warp order and writes the partial.
    /// Two barriers a round, a loop rather than code per element, in a fixed order.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn block_reduce_array(
        &mut self,
        op: ReduceOp,
        l: LocalId,
        (tid, ctaid): (&str, &str),
        slot: usize,
        len: u32,
        round: u32,
    ) -> Result<()> {
        self.shared = true;
        let ty = self.k.function.locals[l as usize].ty;
        let warps = BLOCK_SIZE / 32;
        if warps * round * 8 > BLOCK_SIZE * 8 {
            return Err(unsupported(
                "internal error: an array reduction's round does not fit the block's slots",
            ));
        }
        let (lane, warp) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("and.b32 {lane}, {tid}, 31;"));
        self.emit(format!("shr.u32 {warp}, {tid}, 5;"));
        let (first, e) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("mov.u32 {first}, 0;"));
        let (rounds, done) = (self.label("round"), self.label("rounds_done"));
        self.emit(format!("{rounds}:"));
        let p = self.reg("%p");
        self.emit(format!("setp.ge.u32 {p}, {first}, {len};"));
        self.emit(format!("@{p} bra {done};"));
        // The round's elements, every thread taking part in each shuffle.
        self.emit(format!("mov.u32 {e}, 0;"));
        let (elements, combined) = (self.label("element"), self.label("elements_done"));
        self.emit(format!("{elements}:"));
        let (at, q) = (self.reg("%r"), self.reg("%p"));
        self.emit(format!("add.u32 {at}, {first}, {e};"));
        self.emit(format!("setp.ge.u32 {q}, {at}, {len};"));
        let r = self.reg("%p");
        self.emit(format!("setp.ge.or.u32 {r}, {e}, {round}, {q};"));
        self.emit(format!("@{r} bra {combined};"));
        let wide = self.reg("%rd");
        self.emit(format!("cvt.u64.u32 {wide}, {at};"));
        let (_, addr) = self.private_address(l, &wide);
        let mut v = self.load_private(l, &addr);
        for off in [16, 8, 4, 2, 1] {
            let other = self.shuffle_down(&v, ty, off);
            v = self.combine(op, ty, &v, &other)?;
        }
        let skip = self.label("lane0");
        let z = self.reg("%p");
        self.emit(format!("setp.ne.u32 {z}, {lane}, 0;"));
        self.emit(format!("@{z} bra {skip};"));
        let (row, sa) = (self.reg("%r"), self.reg("%rd"));
        self.emit(format!("mad.lo.u32 {row}, {warp}, {round}, {e};"));
        self.emit(format!("mul.wide.u32 {sa}, {row}, 8;"));
        let base = self.reg("%rd");
        self.emit(format!("mov.u64 {base}, acc_shared;"));
        self.emit(format!("add.u64 {sa}, {base}, {sa};"));
        self.store_word(".shared", &sa, ty, &v)?;
        self.emit(format!("{skip}:"));
        self.emit(format!("add.u32 {e}, {e}, 1;"));
        self.emit(format!("bra {elements};"));
        self.emit(format!("{combined}:"));
        self.emit("bar.sync 0;");
        // Thread t < round combines element `first + t` over the warps' rows.
        let (mine, out) = (self.reg("%r"), self.label("partial_done"));
        self.emit(format!("add.u32 {mine}, {first}, {tid};"));
        let (a, b) = (self.reg("%p"), self.reg("%p"));
        self.emit(format!("setp.ge.u32 {a}, {tid}, {round};"));
        self.emit(format!("setp.ge.or.u32 {b}, {mine}, {len}, {a};"));
        self.emit(format!("@{b} bra {out};"));
        let base = self.reg("%rd");
        self.emit(format!("mov.u64 {base}, acc_shared;"));
        let mut acc = String::new();
        for w in 0..warps {
            let (row, sa) = (self.reg("%r"), self.reg("%rd"));
            self.emit(format!("add.u32 {row}, {tid}, {};", w * round));
            self.emit(format!("mul.wide.u32 {sa}, {row}, 8;"));
            self.emit(format!("add.u64 {sa}, {base}, {sa};"));
            let x = self.load_word(".shared", &sa, ty);
            acc = if w == 0 {
                x
            } else {
                self.combine(op, ty, &acc, &x)?
            };
        }
        let (pb, pa, idx) = (self.reg("%rd"), self.reg("%rd"), self.reg("%r"));
        self.emit(format!("ld.param.u64 {pb}, [acc_partials{slot}];"));
        self.emit(format!("mad.lo.u32 {idx}, {ctaid}, {len}, {mine};"));
        self.emit(format!("mul.wide.u32 {pa}, {idx}, {};", partial_size(ty)));
        self.emit(format!("add.u64 {pa}, {pb}, {pa};"));
        self.store_word(".global", &pa, ty, &acc)?;
        self.emit(format!("{out}:"));
        // The rows are written again in the next round once every thread has read them.
        self.emit("bar.sync 0;");
        self.emit(format!("add.u32 {first}, {first}, {round};"));
        self.emit(format!("bra {rounds};"));
        self.emit(format!("{done}:"));
        Ok(())
    }

    /// The complex product of pairs of parts `a` and `b` (`ReduceOp::ComplexMul`), in
    /// num_complex's order: `(a.0 b.0 - a.1 b.1, a.0 b.1 + a.1 b.0)`.
    pub(super) fn pair_mul(
        &mut self,
        t: Scalar,
        a: (&str, &str),
        b: (&str, &str),
    ) -> Result<(String, String)> {
        let (ac, bd) = (
            self.binary(BinaryOp::Mul, t, a.0, b.0)?,
            self.binary(BinaryOp::Mul, t, a.1, b.1)?,
        );
        let re = self.binary(BinaryOp::Sub, t, &ac, &bd)?;
        let (ad, bc) = (
            self.binary(BinaryOp::Mul, t, a.0, b.1)?,
            self.binary(BinaryOp::Mul, t, a.1, b.0)?,
        );
        let im = self.binary(BinaryOp::Add, t, &ad, &bc)?;
        Ok((re, im))
    }

    /// The complex product of the parts `v` over the warp's lanes, in every lane: a butterfly
    /// of shuffles of both parts (a complex product commutes exactly, so every lane holds the
    /// same value).
    pub(super) fn warp_allreduce_pair(
        &mut self,
        ty: Scalar,
        v: (&str, &str),
    ) -> Result<(String, String)> {
        let (mut re, mut im) = (v.0.to_string(), v.1.to_string());
        for off in [16, 8, 4, 2, 1] {
            let ore = self.shuffle(&re, ty, off, "bfly");
            let oim = self.shuffle(&im, ty, off, "bfly");
            (re, im) = self.pair_mul(ty, (&re, &im), (&ore, &oim))?;
        }
        Ok((re, im))
    }

    /// The complex product of the parts `v` over the block's threads, in every thread: the
    /// tree of [`Writer::block_reduce_pair`], whose result every thread reads. Every thread
    /// of the block must reach it; it leaves shared memory free for the next use.
    pub(super) fn block_allreduce_pair(
        &mut self,
        ty: Scalar,
        v: (&str, &str),
        tid: &str,
    ) -> Result<(String, String)> {
        let (base, _, _) = self.pair_tree(ty, v, tid)?;
        let im_base = self.reg("%rd");
        self.emit(format!("add.u64 {im_base}, {base}, {};", BLOCK_SIZE * 8));
        let (re, im) = (
            self.load_word(".shared", &base, ty),
            self.load_word(".shared", &im_base, ty),
        );
        let b = repr(ty).bits;
        let (ore, oim) = (self.reg(repr(ty).class), self.reg(repr(ty).class));
        self.emit(format!("mov{b} {ore}, {re};"));
        self.emit(format!("mov{b} {oim}, {im};"));
        self.emit("bar.sync 0;");
        Ok((ore, oim))
    }

    /// The tree of a complex product over the block in shared memory ([`Writer::shared_tree`]
    /// of the two parts). Returns the base address and the thread's two slots.
    fn pair_tree(
        &mut self,
        ty: Scalar,
        v: (&str, &str),
        tid: &str,
    ) -> Result<(String, String, String)> {
        let base = self.reg("%rd");
        self.emit(format!("mov.u64 {base}, acc_shared;"));
        let slots = self.shared_tree(ty, &[v.0, v.1], tid, &mut |w, a, b| {
            let (re, im) = w.pair_mul(ty, (&a[0], &a[1]), (&b[0], &b[1]))?;
            Ok(vec![re, im])
        })?;
        Ok((base, slots[0].clone(), slots[1].clone()))
    }

    /// A tree over the block's threads in shared memory, of `values.len()` words per thread
    /// (value `k` of thread `t` at `acc_shared + k * BLOCK_SIZE * 8 + t * 8`), combined by
    /// `combine` (this thread's words, the other's), in a fixed order; the result is in thread
    /// 0's slots once every thread has passed the last barrier. Returns the thread's slots.
    #[allow(clippy::type_complexity)]
    fn shared_tree(
        &mut self,
        ty: Scalar,
        values: &[&str],
        tid: &str,
        combine: &mut dyn FnMut(&mut Self, &[String], &[String]) -> Result<Vec<String>>,
    ) -> Result<Vec<String>> {
        self.shared = true;
        self.shared_pairs |= values.len() > 1;
        let (base, at) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mov.u64 {base}, acc_shared;"));
        self.emit(format!("mul.wide.u32 {at}, {tid}, 8;"));
        self.emit(format!("add.u64 {at}, {base}, {at};"));
        let mut slots = vec![at];
        for k in 1..values.len() {
            let next = self.reg("%rd");
            self.emit(format!(
                "add.u64 {next}, {}, {};",
                slots[0],
                k as u32 * BLOCK_SIZE * 8
            ));
            slots.push(next);
        }
        for (slot, v) in slots.iter().zip(values) {
            self.store_word(".shared", slot, ty, v)?;
        }
        self.emit("bar.sync 0;");
        let mut s = BLOCK_SIZE / 2;
        while s > 0 {
            let skip = self.label("tree");
            let p = self.reg("%p");
            self.emit(format!("setp.ge.u32 {p}, {tid}, {s};"));
            self.emit(format!("@{p} bra {skip};"));
            let mut mine = Vec::new();
            let mut other = Vec::new();
            for slot in &slots {
                let o = self.reg("%rd");
                self.emit(format!("add.u64 {o}, {slot}, {};", s * 8));
                mine.push(self.load_word(".shared", slot, ty));
                other.push(self.load_word(".shared", &o, ty));
            }
            let combined = combine(self, &mine, &other)?;
            for (slot, c) in slots.iter().zip(&combined) {
                self.store_word(".shared", slot, ty, c)?;
            }
            self.emit(format!("{skip}:"));
            self.emit("bar.sync 0;");
            s /= 2;
        }
        Ok(slots)
    }

    /// Writes the block's partial of a complex product (`ReduceOp::ComplexMul`) of the parts
    /// `v`: a tree in shared memory (real parts in the first half, imaginary parts in the
    /// second), thread 0 writing the pair at `partials[2 * block]`.
    pub(super) fn block_reduce_pair(
        &mut self,
        ty: Scalar,
        v: (&str, &str),
        tid: &str,
        ctaid: &str,
        slot: usize,
    ) -> Result<()> {
        let (_, re_at, im_at) = self.pair_tree(ty, v, tid)?;
        let skip = self.label("partial");
        let p = self.reg("%p");
        self.emit(format!("setp.ne.u32 {p}, {tid}, 0;"));
        self.emit(format!("@{p} bra {skip};"));
        let (re, im) = (
            self.load_word(".shared", &re_at, ty),
            self.load_word(".shared", &im_at, ty),
        );
        let (pb, at) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("ld.param.u64 {pb}, [acc_partials{slot}];"));
        self.emit(format!(
            "mul.wide.u32 {at}, {ctaid}, {};",
            partial_size(ty) * 2
        ));
        self.emit(format!("add.u64 {at}, {pb}, {at};"));
        self.store_word(".global", &at, ty, &re)?;
        self.emit(format!("add.u64 {at}, {at}, {};", partial_size(ty)));
        self.store_word(".global", &at, ty, &im)?;
        self.emit(format!("{skip}:"));
        self.emit("bar.sync 0;");
        Ok(())
    }

    pub(super) fn identity(&mut self, op: ReduceOp, t: Scalar) -> Result<String> {
        let lit = match (op, t) {
            (_, Scalar::Bool) => Literal::Bool(matches!(
                op,
                ReduceOp::And | ReduceOp::BitAnd | ReduceOp::Mul | ReduceOp::Min
            )),
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor | ReduceOp::Or, t)
                if t.is_float() =>
            {
                Literal::Float(t, 0.0)
            }
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor | ReduceOp::Or, t) => {
                Literal::Int(t, 0)
            }
            // (A complex product: its real part's.)
            (ReduceOp::Mul | ReduceOp::ComplexMul, t) if t.is_float() => Literal::Float(t, 1.0),
            (ReduceOp::Mul | ReduceOp::ComplexMul, t) => Literal::Int(t, 1),
            (ReduceOp::BitAnd | ReduceOp::And, t) => Literal::Int(t, -1),
            (ReduceOp::Max, t) if t.is_float() => Literal::Float(t, f64::NEG_INFINITY),
            (ReduceOp::Min, t) if t.is_float() => Literal::Float(t, f64::INFINITY),
            (ReduceOp::Max, t) => Literal::Int(
                t,
                if t.is_signed() {
                    -(1i128 << (t.size() * 8 - 1))
                } else {
                    0
                },
            ),
            (ReduceOp::Min, t) => Literal::Int(
                t,
                if t.is_signed() {
                    (1i128 << (t.size() * 8 - 1)) - 1
                } else {
                    (1i128 << (t.size() * 8)) - 1
                },
            ),
        };
        self.literal(lit)
    }

    pub(super) fn combine(&mut self, op: ReduceOp, t: Scalar, a: &str, b: &str) -> Result<String> {
        let bop = match op {
            ReduceOp::Add => BinaryOp::Add,
            ReduceOp::Mul => BinaryOp::Mul,
            ReduceOp::BitAnd => BinaryOp::BitAnd,
            ReduceOp::BitOr => BinaryOp::BitOr,
            ReduceOp::BitXor => BinaryOp::BitXor,
            ReduceOp::And => BinaryOp::And,
            ReduceOp::Or => BinaryOp::Or,
            ReduceOp::Max => return self.minmax("max", t, a, b),
            ReduceOp::Min => return self.minmax("min", t, a, b),
            ReduceOp::ComplexMul => return Err(unsupported(
                "a complex product reduction combined here (kernels combine complex products in the pair reductions of parallel loops, gang iterations and folds only)",
            )),
        };
        self.binary(bop, t, a, b)
    }

    pub(super) fn minmax(&mut self, f: &str, t: Scalar, a: &str, b: &str) -> Result<String> {
        let r = repr(t);
        let d = self.reg(r.class);
        if t == Scalar::Bool {
            let op = if f == "max" { "or" } else { "and" };
            self.emit(format!("{op}.pred {d}, {a}, {b};"));
        } else {
            // max/min.f* return the other operand when one is NaN, as f64::max does.
            self.emit(format!("{f}{} {d}, {a}, {b};", r.ty));
        }
        Ok(d)
    }
}

/// Bytes between the two slot sets of [`Writer::block_reduce_first`] (the warps' slots of a
/// set take `BLOCK_SIZE / 32 * 8`).
const SET_BYTES: u32 = 256;

/// What [`Writer::warps_combine`] leaves: the block's value (in thread 0), the shared memory
/// it went through, and the label where the other threads rejoin.
pub(super) struct WarpsCombined {
    value: String,
    base: String,
    after: String,
}
