//! The entry points of a kernel in PTX and how each spreads its loops over threads: the
//! single-thread and fold entries, the grid entry (grid-stride, a block or a warp per gang
//! iteration, worker and vector loops), private passes, and sequential loops.

use super::*;

impl Writer<'_> {
    /// Starts an entry point's body: registers and private arrays per entry point.
    pub(super) fn begin_entry(&mut self) {
        self.body.clear();
        self.regs.clear();
        self.shared = false;
        self.shared_pairs = false;
        self.privatized = None;
        self.priv_used = false;
        self.gang_arrays.clear();
        self.wide_vars.clear();
        self.fast = None;
        self.versioned.clear();
        self.written_out.clear();
        self.bad = (self.reg("%r"), self.reg("%rd"), self.reg("%rd"));
        let what = self.bad.0.clone();
        self.emit(format!("mov.u32 {what}, -1;"));
        let locals = self.k.function.locals.clone();
        for (i, l) in locals.iter().enumerate() {
            match l.len {
                None => {
                    let r = repr(l.ty);
                    let decl_ty = if r.class == "%p" { ".pred" } else { r.bits };
                    self.emit(format!(".reg {decl_ty} {}_l{i};", r.class));
                }
                Some(_) if self.spilled.get(i as LocalId).is_some() => {}
                Some(n) => {
                    let size = elem_size(l.ty) as u64 * n as u64;
                    self.emit(format!(".local .align 8 .b8 acc_pa{i}[{}];", size.max(1)));
                }
            }
        }
        self.spill_addresses();
    }

    /// Where this thread's copy of each spilled private array starts, and the bytes between
    /// its elements (`acc_core::ir::spill`: copies interleaved over the grid's threads).
    fn spill_addresses(&mut self) {
        self.spill_regs.clear();
        if self.spilled.is_empty() {
            return;
        }
        let (ntid, nctaid, ctaid, tid) = (
            self.reg("%r"),
            self.reg("%r"),
            self.reg("%r"),
            self.reg("%r"),
        );
        let (threads, me, base) = (self.reg("%rd"), self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mov.u32 {ntid}, %ntid.x;"));
        self.emit(format!("mov.u32 {nctaid}, %nctaid.x;"));
        self.emit(format!("mov.u32 {ctaid}, %ctaid.x;"));
        self.emit(format!("mov.u32 {tid}, %tid.x;"));
        self.emit(format!("mul.wide.u32 {threads}, {ntid}, {nctaid};"));
        self.emit(format!("mul.wide.u32 {me}, {ctaid}, {ntid};"));
        let t64 = self.reg("%rd");
        self.emit(format!("cvt.u64.u32 {t64}, {tid};"));
        self.emit(format!("add.u64 {me}, {me}, {t64};"));
        self.emit(format!("ld.param.u64 {base}, [acc_spill];"));
        self.emit(format!("cvta.to.global.u64 {base}, {base};"));
        for a in self.spilled.arrays.clone() {
            let (start, stride) = (self.reg("%rd"), self.reg("%rd"));
            // Element 0 of this thread's copy: past the other arrays' parts, then the
            // threads before it.
            self.emit(format!(
                "mad.lo.u64 {start}, {threads}, {}, {base};",
                a.offset
            ));
            self.emit(format!(
                "mad.lo.u64 {start}, {me}, {}, {start};",
                a.elem_bytes
            ));
            self.emit(format!("mul.lo.u64 {stride}, {threads}, {};", a.elem_bytes));
            self.spill_regs.insert(a.local, (start, stride));
        }
    }

    /// Ends an entry point: its register declarations, and its body.
    pub(super) fn end_entry(&mut self) -> (String, String) {
        let mut decls = String::new();
        for (class, count) in &self.regs {
            let ty = match *class {
                "%p" => ".pred",
                "%r" => ".b32",
                "%rd" => ".b64",
                "%f" => ".f32",
                "%fd" => ".f64",
                _ => ".b32",
            };
            let _ = writeln!(decls, "    .reg {ty} {class}<{count}>;");
        }
        if self.shared {
            let _ = writeln!(
                decls,
                "    .shared .align 8 .b8 acc_shared[{}];",
                BLOCK_SIZE * if self.shared_pairs { 16 } else { 8 }
            );
        }
        for &l in &self.gang_arrays {
            let local = &self.k.function.locals[l as usize];
            let size = elem_size(local.ty) as u64 * u64::from(local.len.unwrap_or(1));
            let _ = writeln!(
                decls,
                "    .shared .align 16 .b8 acc_sa{l}[{}];",
                size.max(1)
            );
            // The block's copy replaces the thread's own (which would take stack space).
            self.body = self.body.replace(
                &format!("    .local .align 8 .b8 acc_pa{l}[{}];\n", size.max(1)),
                "",
            );
        }
        if self.priv_used {
            let _ = writeln!(
                decls,
                "    .shared .align 4 .b8 acc_priv[{}];",
                PRIVATE_ELEMENTS * 4
            );
        }
        (decls, std::mem::take(&mut self.body))
    }

    /// Loads (or, with `store`, stores) the region-level scalar locals from (to) the locals
    /// buffer.
    pub(super) fn move_locals(&mut self, store: bool) {
        if self.local_slots.is_empty() && self.array_slots.is_empty() {
            return;
        }
        let base = self.reg("%rd");
        self.emit(format!("ld.param.u64 {base}, [acc_locals];"));
        for (l, t, off) in self.local_slots.clone() {
            let r = repr(t);
            let reg = format!("{}_l{l}", r.class);
            match (t, store) {
                (Scalar::Bool, false) => {
                    let w = self.reg("%r");
                    self.emit(format!("ld.global.u32 {w}, [{base}+{off}];"));
                    self.emit(format!("setp.ne.u32 {reg}, {w}, 0;"));
                }
                (Scalar::Bool, true) => {
                    let w = self.reg("%r");
                    self.emit(format!("selp.u32 {w}, 1, 0, {reg};"));
                    self.emit(format!("st.global.u32 [{base}+{off}], {w};"));
                }
                (_, false) => self.emit(format!("ld.global{} {reg}, [{base}+{off}];", r.bits)),
                (_, true) => self.emit(format!("st.global{} [{base}+{off}], {reg};", r.bits)),
            }
        }
        // Private arrays, byte for byte (in words where the length allows); a spilled one
        // element by element into (out of) the thread's interleaved copy.
        for (l, t, off, len) in self.array_slots.clone() {
            if let Some((start, stride)) = self.spill_regs.get(&l).cloned() {
                self.move_spilled(&base, off, (t, len), (&start, &stride), store);
                continue;
            }
            let bytes = elem_size(t) * len;
            let (w, step) = if bytes % 4 == 0 {
                (".u32", 4)
            } else {
                (".u8", 1)
            };
            let (k, g, a) = (self.reg("%rd"), self.reg("%rd"), self.reg("%rd"));
            self.emit(format!("mov.u64 {k}, 0;"));
            let (top, end) = (self.label("copy"), self.label("copied"));
            self.emit(format!("{top}:"));
            let done = self.reg("%p");
            self.emit(format!("setp.ge.u64 {done}, {k}, {bytes};"));
            self.emit(format!("@{done} bra {end};"));
            self.emit(format!("add.u64 {g}, {base}, {off};"));
            self.emit(format!("add.u64 {g}, {g}, {k};"));
            self.emit(format!("mov.u64 {a}, acc_pa{l};"));
            self.emit(format!("add.u64 {a}, {a}, {k};"));
            let v = self.reg("%r");
            if store {
                self.emit(format!("ld.local{w} {v}, [{a}];"));
                self.emit(format!("st.global{w} [{g}], {v};"));
            } else {
                self.emit(format!("ld.global{w} {v}, [{g}];"));
                self.emit(format!("st.local{w} [{a}], {v};"));
            }
            self.emit(format!("add.u64 {k}, {k}, {step};"));
            self.emit(format!("bra.uni {top};"));
            self.emit(format!("{end}:"));
        }
    }

    /// Copies spilled private array of `len` elements of `t` between byte `off` of the locals
    /// buffer at `base` and the thread's copy (element 0 at `start`, `stride` bytes apart).
    fn move_spilled(
        &mut self,
        base: &str,
        off: u32,
        (t, len): (Scalar, u32),
        (start, stride): (&str, &str),
        store: bool,
    ) {
        let size = elem_size(t);
        let w = match size {
            1 => ".u8",
            2 => ".u16",
            4 => ".u32",
            _ => ".u64",
        };
        let v = self.reg(if size == 8 { "%rd" } else { "%r" });
        let (k, g, a) = (self.reg("%rd"), self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mov.u64 {k}, 0;"));
        self.emit(format!("add.u64 {g}, {base}, {off};"));
        self.emit(format!("mov.u64 {a}, {start};"));
        let (top, end) = (self.label("copy"), self.label("copied"));
        self.emit(format!("{top}:"));
        let done = self.reg("%p");
        self.emit(format!("setp.ge.u64 {done}, {k}, {len};"));
        self.emit(format!("@{done} bra {end};"));
        if store {
            self.emit(format!("ld.global{w} {v}, [{a}];"));
            self.emit(format!("st.global{w} [{g}], {v};"));
        } else {
            self.emit(format!("ld.global{w} {v}, [{g}];"));
            self.emit(format!("st.global{w} [{a}], {v};"));
        }
        self.emit(format!("add.u64 {k}, {k}, 1;"));
        self.emit(format!("add.u64 {g}, {g}, {size};"));
        self.emit(format!("add.u64 {a}, {a}, {stride};"));
        self.emit(format!("bra.uni {top};"));
        self.emit(format!("{end}:"));
    }

    /// Sets the host loops' variables from the launch's arguments (after the locals are loaded,
    /// whose copies of them the host does not keep up to date).
    pub(super) fn host_values(&mut self) {
        for (n, v) in self.host_vars.clone().into_iter().enumerate() {
            let ty = self.k.function.locals[v as usize].ty;
            let r = repr(ty);
            let reg = format!("{}_l{v}", r.class);
            if ty.size() == 8 {
                self.emit(format!("ld.param.u64 {reg}, [acc_hv{n}];"));
            } else {
                let w = self.reg("%rd");
                self.emit(format!("ld.param.u64 {w}, [acc_hv{n}];"));
                self.emit(format!("cvt.u32.u64 {reg}, {w};"));
            }
        }
    }

    /// Returns from every thread but the grid's first.
    pub(super) fn first_thread_only(&mut self) {
        let (a, b) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("mov.u32 {a}, %tid.x;"));
        self.emit(format!("mov.u32 {b}, %ctaid.x;"));
        self.emit(format!("or.b32 {a}, {a}, {b};"));
        let p = self.reg("%p");
        self.emit(format!("setp.ne.u32 {p}, {a}, 0;"));
        self.emit(format!("@{p} ret;"));
    }

    /// An entry point of one thread running `stmts` (code between parallel loops), with the
    /// region-level locals loaded first and stored back last.
    pub(super) fn single_entry(&mut self, stmts: &[&Stmt]) -> Result<(String, String)> {
        self.begin_entry();
        self.first_thread_only();
        self.move_locals(false);
        self.host_values();
        for st in stmts {
            self.stmt(st)?;
        }
        self.move_locals(true);
        self.report_bad();
        self.emit("ret;");
        Ok(self.end_entry())
    }

    /// An entry point of one thread folding the per-block partials of reductions into region
    /// locals, in block order, into the locals' values.
    pub(super) fn fold_entry(&mut self, reds: &[(usize, Reduction)]) -> Result<(String, String)> {
        self.begin_entry();
        self.first_thread_only();
        self.move_locals(false);
        self.host_values();
        let (g, blocks) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("ld.param.u32 {blocks}, [acc_blocks];"));
        self.emit(format!("mov.u32 {g}, 0;"));
        let (top, end) = (self.label("fold"), self.label("folded"));
        self.emit(format!("{top}:"));
        let p = self.reg("%p");
        self.emit(format!("setp.ge.u32 {p}, {g}, {blocks};"));
        self.emit(format!("@{p} bra {end};"));
        for &(slot, red) in reds {
            let ty = self.k.function.locals[red.local as usize].ty;
            if red.op == ReduceOp::ComplexMul {
                // Pairs of parts, two words per block.
                let (re, im) = (self.local(red.local)?, self.local(red.local + 1)?);
                let (base, at) = (self.reg("%rd"), self.reg("%rd"));
                self.emit(format!("ld.param.u64 {base}, [acc_partials{slot}];"));
                self.emit(format!("mul.wide.u32 {at}, {g}, {};", partial_size(ty) * 2));
                self.emit(format!("add.u64 {at}, {base}, {at};"));
                let pre = self.load_word(".global", &at, ty);
                self.emit(format!("add.u64 {at}, {at}, {};", partial_size(ty)));
                let pim = self.load_word(".global", &at, ty);
                let (cre, cim) = self.pair_mul(ty, (&re, &im), (&pre, &pim))?;
                let b = repr(ty).bits;
                self.emit(format!("mov{b} {re}, {cre};"));
                self.emit(format!("mov{b} {im}, {cim};"));
                continue;
            }
            let l = self.local(red.local)?;
            let (base, at) = (self.reg("%rd"), self.reg("%rd"));
            self.emit(format!("ld.param.u64 {base}, [acc_partials{slot}];"));
            self.emit(format!("mul.wide.u32 {at}, {g}, {};", partial_size(ty)));
            self.emit(format!("add.u64 {at}, {base}, {at};"));
            let v = self.load_word(".global", &at, ty);
            let c = self.combine(red.op, ty, &l, &v)?;
            self.emit(format!("mov{} {l}, {c};", repr(ty).bits));
        }
        self.emit(format!("add.u32 {g}, {g}, 1;"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        self.move_locals(true);
        self.report_bad();
        self.emit("ret;");
        Ok(self.end_entry())
    }

    pub(super) fn param_list(&self, partials: usize) -> String {
        let mut ps = Vec::new();
        for (id, p) in self.k.params.iter().enumerate() {
            match p.kind {
                ParamKind::Array { .. } => {
                    ps.push(format!("    .param .u64 acc_a{id}"));
                    ps.push(format!("    .param .u64 acc_n{id}"));
                }
                ParamKind::Scalar(t) => ps.push(format!("    .param {} acc_s{id}", param_type(t))),
            }
        }
        ps.push("    .param .u64 acc_status".into());
        ps.push("    .param .u64 acc_locals".into());
        ps.push("    .param .u32 acc_blocks".into());
        for r in 0..partials {
            ps.push(format!("    .param .u64 acc_partials{r}"));
        }
        for n in 0..self.host_vars.len() {
            ps.push(format!("    .param .u64 acc_hv{n}"));
        }
        if !self.spilled.is_empty() {
            ps.push("    .param .u64 acc_spill".into());
        }
        ps.join(",\n")
    }

    /// A grid entry point: the prelude (or, in a segmented region, the region's locals), then
    /// the loop's share of iterations, then the block's reduction partials.
    pub(super) fn grid_entry(
        &mut self,
        prelude: &[&Stmt],
        (s, planned): (&Stmt, &EntryPlan<'_>),
        slots: &[usize],
    ) -> Result<(String, String)> {
        let Stmt::For {
            levels,
            reductions,
            body,
            ..
        } = s
        else {
            return Err(unsupported("internal error: an entry without its loop"));
        };
        self.begin_entry();
        self.versioned = planned.versioned.clone();
        self.written_out = planned.written_out.clone();
        self.move_locals(false);
        self.host_values();
        for st in prelude {
            self.stmt(st)?;
        }
        // The grid: thread `gid` of `stride` takes iterations gid, gid + stride, ...
        let (tid, ctaid, ntid, nctaid) = (
            self.reg("%r"),
            self.reg("%r"),
            self.reg("%r"),
            self.reg("%r"),
        );
        self.emit(format!("mov.u32 {tid}, %tid.x;"));
        self.emit(format!("mov.u32 {ctaid}, %ctaid.x;"));
        self.emit(format!("mov.u32 {ntid}, %ntid.x;"));
        self.emit(format!("mov.u32 {nctaid}, %nctaid.x;"));
        let (k, stride) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mul.wide.u32 {k}, {ctaid}, {ntid};"));
        self.emit(format!("cvt.u64.u32 {stride}, {tid};"));
        self.emit(format!("add.u64 {k}, {k}, {stride};"));
        self.emit(format!("mul.wide.u32 {stride}, {nctaid}, {ntid};"));
        self.init_reductions(reductions)?;
        // A gang loop whose body is a vector loop (after scalar assignments, maybe before more
        // code): each iteration of the gang loop takes a block, whose threads share the vector
        // loop's iterations; the block combines the loop's reductions into locals of the
        // iteration, and its first thread runs the code after the loop (`GangPhases`).
        match &planned.phases {
            Some(phases) => {
                self.gang_iterations(levels, phases, planned, (&tid, &ctaid, &ntid, &nctaid))?
            }
            None => {
                // A small array the loop only adds (or ors, xors) into atomically: each block
                // combines its updates in its own copy in shared memory first.
                let private = planned.privatized;
                if let Some(p) = private {
                    self.privatize_begin(p, &tid, &ntid)?;
                }
                self.strided(
                    levels,
                    &k,
                    &stride,
                    planned.unrolled,
                    &mut |w: &mut Self| w.block(body),
                )?;
                if let Some(p) = private {
                    self.privatize_end(p, &tid, &ntid)?;
                }
            }
        }
        self.write_partials(reductions, slots, (&tid, &ctaid), planned.array_rounds)?;
        self.report_bad();
        self.emit("ret;");
        Ok(self.end_entry())
    }

    /// Sets each of the loop's reductions to its identity in every thread (each element of an
    /// array reduction).
    fn init_reductions(&mut self, reductions: &[Reduction]) -> Result<()> {
        for r in reductions {
            let l = &self.k.function.locals[r.local as usize];
            let (ty, len) = (l.ty, l.len);
            let id = self.identity(r.op, ty)?;
            match len {
                None => {
                    let l = self.local(r.local)?;
                    self.emit(format!("mov{} {l}, {id};", repr(ty).bits));
                    if r.op == ReduceOp::ComplexMul {
                        // 1 + 0i: the imaginary part, in the next local.
                        let im = self.local(r.local + 1)?;
                        let zero = self.literal(Literal::Float(ty, 0.0))?;
                        self.emit(format!("mov{} {im}, {zero};", repr(ty).bits));
                    }
                }
                Some(n) if n <= 8 => {
                    for e in 0..n {
                        let addr = self.private_address_const(r.local, e);
                        self.store_private(r.local, &addr, &id, "");
                    }
                }
                Some(n) => {
                    // A loop, not code per element (kmeans' 175 elements were 525 lines).
                    let (e, top, done) =
                        (self.reg("%rd"), self.label("init"), self.label("inited"));
                    self.emit(format!("mov.u64 {e}, 0;"));
                    self.emit(format!("{top}:"));
                    let p = self.reg("%p");
                    self.emit(format!("setp.ge.u64 {p}, {e}, {n};"));
                    self.emit(format!("@{p} bra {done};"));
                    let (_, addr) = self.private_address(r.local, &e);
                    self.store_private(r.local, &addr, &id, "");
                    self.emit(format!("add.u64 {e}, {e}, 1;"));
                    self.emit(format!("bra {top};"));
                    self.emit(format!("{done}:"));
                }
            }
        }
        Ok(())
    }

    /// The grid loop of a gang loop whose body is a vector loop (after scalar assignments,
    /// maybe before more code): each iteration of the gang loop takes a block (or a warp,
    /// as planned), whose threads share the vector loop's iterations; the block combines the
    /// loop's reductions into locals of the iteration, and its first thread runs the code
    /// after the loop (`GangPhases`).
    fn gang_iterations(
        &mut self,
        levels: &[LoopLevel],
        phases: &GangPhases<'_>,
        planned: &EntryPlan<'_>,
        (tid, ctaid, ntid, nctaid): (&str, &str, &str, &str),
    ) -> Result<()> {
        let (kb, sb, kt, st) = (
            self.reg("%rd"),
            self.reg("%rd"),
            self.reg("%rd"),
            self.reg("%rd"),
        );
        // With `vector_length(n)`, n <= 32: a warp per gang iteration, the block's
        // warps taking consecutive ones; no barriers. Otherwise the whole block.
        let warps = planned.gangs_per_block > 1;
        self.gang_arrays = phases.shared_arrays.clone();
        let lane = self.reg("%r");
        if warps {
            let (warp, groups) = (self.reg("%r"), planned.gangs_per_block);
            self.emit(format!("and.b32 {lane}, {tid}, 31;"));
            self.emit(format!("shr.u32 {warp}, {tid}, 5;"));
            self.emit(format!("mul.wide.u32 {kb}, {ctaid}, {groups};"));
            let w64 = self.reg("%rd");
            self.emit(format!("cvt.u64.u32 {w64}, {warp};"));
            self.emit(format!("add.u64 {kb}, {kb}, {w64};"));
            self.emit(format!("mul.wide.u32 {sb}, {nctaid}, {groups};"));
            self.emit(format!("mov.u64 {st}, 32;"));
        } else {
            self.emit(format!("mov.u32 {lane}, {tid};"));
            self.emit(format!("cvt.u64.u32 {kb}, {ctaid};"));
            self.emit(format!("cvt.u64.u32 {sb}, {nctaid};"));
            self.emit(format!("cvt.u64.u32 {st}, {ntid};"));
        }
        // Reductions only the first thread needs go through two slot sets in turn,
        // one barrier each (`block_reduce_first`); a barrier after the loop keeps the
        // last set from the code after it.
        let set = self.reg("%r");
        self.emit(format!("mov.u32 {set}, 0;"));
        let first_only = phases.first_thread_reductions();
        let g = super::gang::Gang {
            lane: lane.clone(),
            tid: tid.to_string(),
            first: kt,
            stride: st,
            set,
            warps,
        };
        self.strided(levels, &kb, &sb, false, &mut |w: &mut Self| {
            w.gang_steps(&phases.steps, &g)?;
            if !phases.post.is_empty() {
                let (skip, p) = (w.label("single"), w.reg("%p"));
                w.emit(format!("setp.ne.u32 {p}, {lane}, 0;"));
                w.emit(format!("@{p} bra {skip};"));
                for a in &phases.post {
                    w.stmt(a)?;
                }
                w.emit(format!("{skip}:"));
            }
            Ok(())
        })?;
        if first_only {
            self.emit("bar.sync 0;");
        }
        Ok(())
    }

    /// Each block's partial of each of the loop's reductions, into its slot.
    fn write_partials(
        &mut self,
        reductions: &[Reduction],
        slots: &[usize],
        (tid, ctaid): (&str, &str),
        array_rounds: Option<u32>,
    ) -> Result<()> {
        for (n, (red, &slot)) in reductions.iter().zip(slots).enumerate() {
            let l = &self.k.function.locals[red.local as usize];
            let (ty, len) = (l.ty, l.len);
            if n > 0 {
                // The reduction before ends with warp 0 reading the slots after the others
                // have left: they wait before writing them again.
                self.emit("bar.sync 0;");
            }
            match len {
                None if red.op == ReduceOp::ComplexMul => {
                    let re = self.local(red.local)?;
                    let im = self.local(red.local + 1)?;
                    self.block_reduce_pair(ty, (&re, &im), &tid, &ctaid, slot)?;
                }
                None => {
                    let v = self.local(red.local)?;
                    self.block_reduce_shuffle(red.op, ty, &v, &tid, &ctaid, slot)?;
                }
                Some(n) => match array_rounds {
                    Some(round) => {
                        self.block_reduce_array(red.op, red.local, (tid, ctaid), slot, n, round)?
                    }
                    None => {
                        for e in 0..n {
                            let addr = self.private_address_const(red.local, e);
                            let v = self.load_private(red.local, &addr);
                            self.block_reduce_shared(red.op, ty, &v, tid, ctaid, slot, e, n)?;
                        }
                    }
                },
            }
        }
        Ok(())
    }

    /// A strided loop over the (collapsed) `levels`: iterations `k`, `k + stride`, ... of
    /// their flat space (innermost level fastest), each setting the loop variables and running
    /// `body` (`continue` and `break` in it refer to this loop). `k` is advanced in place.
    /// Where the plan gives the loop a fast version ([`EntryPlan::versioned`]), the loop is
    /// written twice: without the checks of the arrays it covers, taken when the loop
    /// variable's first and last values are in bounds for all of them, and with them.
    pub(super) fn strided(
        &mut self,
        levels: &[LoopLevel],
        k: &str,
        stride: &str,
        unroll: bool,
        body: &mut dyn FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let (k, stride) = (k.to_string(), stride.to_string());
        let mut trips = Vec::new();
        for lv in levels {
            trips.push(self.index_expr(lv.trips)?);
        }
        let total = self.reg("%rd");
        self.emit(format!("mov.u64 {total}, 1;"));
        for t in &trips {
            self.emit(format!("mul.lo.u64 {total}, {total}, {t};"));
        }
        // Fast version: where the arrays indexed by the loop variable itself hold its first and
        // last values (checked once, before the loop), those accesses need no check.
        let arrays = match levels {
            [lv] => self
                .versioned
                .iter()
                .find(|(v, _)| *v == lv.var)
                .map_or_else(Vec::new, |(_, a)| a.clone()),
            _ => Vec::new(),
        };
        if arrays.is_empty() || self.fast.is_some() {
            return self.strided_loops(levels, &k, &stride, unroll, &trips, &total, body);
        }
        let lv = &levels[0];
        let (start, step) = (self.expr(lv.start)?, self.expr(lv.step)?);
        let (last, fast) = (self.reg("%rd"), self.reg("%p"));
        self.emit(format!("sub.u64 {last}, {total}, 1;"));
        self.emit(format!("mad.lo.u64 {last}, {last}, {step}, {start};"));
        self.emit(format!("setp.eq.u64 {fast}, {total}, 0;"));
        let all = self.reg("%p");
        self.emit(format!("setp.eq.u64 {all}, {total}, {total};"));
        for &a in &arrays {
            let n = self.reg("%rd");
            self.emit(format!("ld.param.u64 {n}, [acc_n{a}];"));
            let (p, q) = (self.reg("%p"), self.reg("%p"));
            self.emit(format!("setp.lt.u64 {p}, {start}, {n};"));
            self.emit(format!("setp.lt.u64 {q}, {last}, {n};"));
            self.emit(format!("and.pred {all}, {all}, {p};"));
            self.emit(format!("and.pred {all}, {all}, {q};"));
        }
        self.emit(format!("or.pred {fast}, {fast}, {all};"));
        let (checked, done) = (self.label("checked"), self.label("versions"));
        self.emit(format!("@!{fast} bra {checked};"));
        self.fast = Some((lv.var, arrays));
        let r = self.strided_loops(levels, &k, &stride, unroll, &trips, &total, body);
        self.fast = None;
        r?;
        self.emit(format!("bra {done};"));
        self.emit(format!("{checked}:"));
        self.strided_loops(levels, &k, &stride, unroll, &trips, &total, body)?;
        self.emit(format!("{done}:"));
        Ok(())
    }

    /// The loops of [`Writer::strided`] over `total` iterations.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn strided_loops(
        &mut self,
        levels: &[LoopLevel],
        k: &str,
        stride: &str,
        unroll: bool,
        trips: &[String],
        total: &str,
        body: &mut dyn FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let (k, stride, total) = (k.to_string(), stride.to_string(), total.to_string());
        // A straight-line body over one level runs four iterations per trip while four remain
        // (in the same order per thread): one basic block, so their loads are in flight
        // together. The loop below takes the rest.
        if unroll && levels.len() == 1 {
            let (top, rest) = (self.label("unrolled"), self.label("rest"));
            let (last, step4) = (self.reg("%rd"), self.reg("%rd"));
            self.emit(format!("mul.lo.u64 {step4}, {stride}, 4;"));
            self.emit(format!("{top}:"));
            self.emit(format!("mad.lo.u64 {last}, {stride}, 3, {k};"));
            let p = self.reg("%p");
            self.emit(format!("setp.ge.u64 {p}, {last}, {total};"));
            self.emit(format!("@{p} bra {rest};"));
            for j in 0..4u32 {
                let kj = self.reg("%rd");
                self.emit(format!("mad.lo.u64 {kj}, {stride}, {j}, {k};"));
                self.set_loop_var(&levels[0], &kj)?;
                let cont = self.label("unrolledcont");
                self.loops.push((cont.clone(), rest.clone()));
                body(self)?;
                self.loops.pop();
                self.emit(format!("{cont}:"));
            }
            self.emit(format!("add.u64 {k}, {k}, {step4};"));
            self.emit(format!("bra {top};"));
            self.emit(format!("{rest}:"));
        }
        // Collapsed levels: the flat index is split over the levels (innermost fastest) once,
        // and so is the stride; each step then adds the stride's digits with carries, so the
        // loop divides nothing.
        let multi = levels.len() > 1;
        // Inner levels of constant power-of-two trip counts (a tile's elements): each
        // iteration takes its digits from the flat index with a mask and a shift, cheaper
        // than carrying them along.
        let shifts: Option<Vec<u32>> = levels[1..]
            .iter()
            .map(|lv| match self.k.function.exprs[lv.trips] {
                Expr::Literal(Literal::Int(_, v)) if v > 0 && (v as u64).is_power_of_two() => {
                    Some((v as u64).trailing_zeros())
                }
                _ => None,
            })
            .collect();
        let carried = multi && shifts.is_none();
        let split = |w: &mut Self, x: &str| -> Vec<String> {
            let rest = w.reg("%rd");
            w.emit(format!("mov.u64 {rest}, {x};"));
            let mut digits = vec![String::new(); levels.len()];
            for i in (0..levels.len()).rev() {
                let d = w.reg("%rd");
                if i == 0 {
                    w.emit(format!("mov.u64 {d}, {rest};"));
                } else {
                    w.emit(format!("rem.u64 {d}, {rest}, {};", trips[i]));
                    w.emit(format!("div.u64 {rest}, {rest}, {};", trips[i]));
                }
                digits[i] = d;
            }
            digits
        };
        let (idx, inc) = if carried {
            (split(self, &k), split(self, &stride))
        } else {
            (Vec::new(), Vec::new())
        };
        let (top, cont, end) = (self.label("grid"), self.label("next"), self.label("done"));
        let p = self.reg("%p");
        self.emit(format!("{top}:"));
        self.emit(format!("setp.ge.u64 {p}, {k}, {total};"));
        self.emit(format!("@{p} bra {end};"));
        if carried {
            for (i, lv) in levels.iter().enumerate() {
                self.set_loop_var(lv, &idx[i])?;
            }
        } else if let (true, Some(shifts)) = (multi, &shifts) {
            let rest = self.reg("%rd");
            self.emit(format!("mov.u64 {rest}, {k};"));
            for i in (1..levels.len()).rev() {
                let (d, bits) = (self.reg("%rd"), shifts[i - 1]);
                self.emit(format!("and.b64 {d}, {rest}, {};", (1u64 << bits) - 1));
                self.emit(format!("shr.u64 {rest}, {rest}, {bits};"));
                self.set_loop_var(&levels[i], &d)?;
            }
            self.set_loop_var(&levels[0], &rest)?;
        } else {
            self.set_loop_var(&levels[0], &k)?;
        }
        self.loops.push((cont.clone(), end.clone()));
        body(self)?;
        self.loops.pop();
        self.emit(format!("{cont}:"));
        self.emit(format!("add.u64 {k}, {k}, {stride};"));
        if carried {
            let carry = self.reg("%rd");
            self.emit(format!("mov.u64 {carry}, 0;"));
            for i in (0..levels.len()).rev() {
                self.emit(format!("add.u64 {}, {}, {};", idx[i], idx[i], inc[i]));
                self.emit(format!("add.u64 {}, {}, {carry};", idx[i], idx[i]));
                let over = self.reg("%p");
                self.emit(format!("setp.ge.u64 {over}, {}, {};", idx[i], trips[i]));
                self.emit(format!(
                    "@{over} sub.u64 {}, {}, {};",
                    idx[i], idx[i], trips[i]
                ));
                self.emit(format!("selp.u64 {carry}, 1, 0, {over};"));
            }
        }
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        Ok(())
    }

    /// `body(address)` for each element of the block's copy (`len` of them), the block's
    /// threads taking every `ntid`-th, when `fits` holds.
    pub(super) fn private_pass(
        &mut self,
        fits: &str,
        len: &str,
        tid: &str,
        ntid: &str,
        mut body: impl FnMut(&mut Self, &str) -> Result<()>,
    ) -> Result<()> {
        let (j, step, at) = (self.reg("%rd"), self.reg("%rd"), self.reg("%rd"));
        let (top, end) = (self.label("priv"), self.label("privdone"));
        self.emit(format!("@!{fits} bra {end};"));
        self.emit(format!("cvt.u64.u32 {j}, {tid};"));
        self.emit(format!("cvt.u64.u32 {step}, {ntid};"));
        self.emit(format!("{top}:"));
        let done = self.reg("%p");
        self.emit(format!("setp.ge.u64 {done}, {j}, {len};"));
        self.emit(format!("@{done} bra {end};"));
        self.emit(format!("mov.u64 {at}, acc_priv;"));
        self.emit(format!("mad.lo.u64 {at}, {j}, 4, {at};"));
        body(self, &at)?;
        self.emit(format!("add.u64 {j}, {j}, {step};"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        Ok(())
    }

    /// A loop nest run in order by one thread: one loop per level, outermost first (the trip
    /// count evaluated once, before its loop, as Rust does).
    pub(super) fn sequential_loop(&mut self, levels: &[LoopLevel], body: &Block) -> Result<()> {
        match levels.split_last() {
            Some((lv, outer)) if unrollable(body, &self.k.function) => {
                self.sequential_loop_with(outer, &mut |w: &mut Self| {
                    // A short loop of constant length: every iteration written out, its
                    // indices constant offsets (adjacent loads may then go as one).
                    if let Expr::Literal(Literal::Int(_, n)) = w.k.function.exprs[lv.trips] {
                        if (0..=FULL_UNROLL as i128).contains(&n) {
                            let value = |w: &Self, u: i128| {
                                let f = &w.k.function;
                                match (&f.exprs[lv.start], &f.exprs[lv.step]) {
                                    (
                                        Expr::Literal(Literal::Int(_, a)),
                                        Expr::Literal(Literal::Int(_, s)),
                                    ) => Some(a + u * s),
                                    _ => None,
                                }
                            };
                            for u in 0..n {
                                let ku = w.reg("%rd");
                                w.emit(format!("mov.u64 {ku}, {u};"));
                                w.set_loop_var(lv, &ku)?;
                                if let Some(v) = value(w, u) {
                                    w.const_vars.insert(lv.var, v);
                                }
                                let r = w.block(body);
                                w.const_vars.remove(&lv.var);
                                r?;
                            }
                            return Ok(());
                        }
                    }
                    let trips = w.index_expr(lv.trips)?;
                    let k = w.reg("%rd");
                    w.emit(format!("mov.u64 {k}, 0;"));
                    w.unrolled_loop(lv, body, &trips, &k)
                })
            }
            _ => self.sequential_loop_with(levels, &mut |w: &mut Self| w.block(body)),
        }
    }

    /// A loop nest, one loop per level, outermost first, `body` written once inside the
    /// innermost (also for a nest every thread of a block runs in step around barriers).
    pub(super) fn sequential_loop_with(
        &mut self,
        levels: &[LoopLevel],
        body: &mut dyn FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let Some((lv, inner)) = levels.split_first() else {
            return body(self);
        };
        let trips = self.index_expr(lv.trips)?;
        let k = self.reg("%rd");
        self.emit(format!("mov.u64 {k}, 0;"));
        let (top, cont, end) = (
            self.label("for"),
            self.label("forcont"),
            self.label("forend"),
        );
        self.emit(format!("{top}:"));
        let p = self.reg("%p");
        self.emit(format!("setp.ge.u64 {p}, {k}, {trips};"));
        self.emit(format!("@{p} bra {end};"));
        self.set_loop_var(lv, &k)?;
        self.loops.push((cont.clone(), end.clone()));
        let r = self.sequential_loop_with(inner, body);
        self.loops.pop();
        r?;
        self.emit(format!("{cont}:"));
        self.emit(format!("add.u64 {k}, {k}, 1;"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        Ok(())
    }

    /// An innermost sequential loop with a short straight-line body, unrolled
    /// [`UNROLL`] times: ptxas does not unroll loops of unknown trip count, and the copies of a
    /// body in one basic block let it overlap their latencies (an n-body interaction's square
    /// root and division). Then the remaining iterations one at a time.
    fn unrolled_loop(&mut self, lv: &LoopLevel, body: &Block, trips: &str, k: &str) -> Result<()> {
        let whole = self.reg("%rd");
        self.emit(format!(
            "and.b64 {whole}, {trips}, {};",
            !(UNROLL as u64 - 1) as i64
        ));
        let (top, rest, end) = (
            self.label("unrolled"),
            self.label("rest"),
            self.label("forend"),
        );
        self.emit(format!("{top}:"));
        let p = self.reg("%p");
        self.emit(format!("setp.ge.u64 {p}, {k}, {whole};"));
        self.emit(format!("@{p} bra {rest};"));
        for u in 0..UNROLL {
            let ku = self.reg("%rd");
            self.emit(format!("add.u64 {ku}, {k}, {u};"));
            self.set_loop_var(lv, &ku)?;
            self.block(body)?;
        }
        self.emit(format!("add.u64 {k}, {k}, {UNROLL};"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{rest}:"));
        let q = self.reg("%p");
        self.emit(format!("setp.ge.u64 {q}, {k}, {trips};"));
        self.emit(format!("@{q} bra {end};"));
        self.set_loop_var(lv, k)?;
        self.block(body)?;
        self.emit(format!("add.u64 {k}, {k}, 1;"));
        self.emit(format!("bra {rest};"));
        self.emit(format!("{end}:"));
        Ok(())
    }

    /// The loop variable of iteration `k` (a `u64` register): `start + k * step`. A `u32`
    /// variable of a narrowed kernel also gets its value in 64 bits, computed from `k`, which
    /// indices that are the variable itself use ([`Writer::index_expr`]): ptxas then sees
    /// consecutive iterations touch distinct elements, as in a kernel of 64-bit indices, and
    /// overlaps their loads with the stores before them.
    pub(super) fn set_loop_var(&mut self, lv: &LoopLevel, k: &str) -> Result<()> {
        let ty = self.k.function.locals[lv.var as usize].ty;
        let (start, step) = (self.expr(lv.start)?, self.expr(lv.step)?);
        let k32 = self.convert(k, Scalar::U64, ty)?;
        let l = self.local(lv.var)?;
        let r = repr(ty);
        self.emit(format!("mul.lo{} {l}, {k32}, {step};", r.ty));
        self.emit(format!("add{} {l}, {l}, {start};", r.ty));
        if ty == Scalar::U32 {
            let (s64, t64, wide) = (self.reg("%rd"), self.reg("%rd"), self.reg("%rd"));
            self.emit(format!("cvt.u64.u32 {s64}, {start};"));
            self.emit(format!("cvt.u64.u32 {t64}, {step};"));
            self.emit(format!("mad.lo.u64 {wide}, {k}, {t64}, {s64};"));
            self.wide_vars.insert(lv.var, wide);
        }
        Ok(())
    }
}

/// How many copies of an innermost sequential loop's body [`Writer::unrolled_loop`] runs per
/// trip.
const UNROLL: u32 = 4;

/// The longest innermost sequential loop of constant length that is written out whole.
const FULL_UNROLL: u32 = 32;

/// Whether a loop body is worth unrolling and safe to copy: straight-line code (assignments,
/// stores, atomics, `if`s of such) without `break`, `continue` or loops, of at most
/// [`UNROLL_BODY`] expression nodes, so that the copies stay short and ptxas schedules them
/// together.
fn unrollable(body: &Block, f: &acc_core::ir::Function) -> bool {
    fn size(f: &acc_core::ir::Function, e: Handle<Expr>) -> usize {
        1 + match &f.exprs[e] {
            Expr::LocalElem { index, .. } | Expr::Load { index, .. } => size(f, *index),
            Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => size(f, *a),
            Expr::Binary(_, a, b) => size(f, *a) + size(f, *b),
            Expr::Select {
                cond,
                accept,
                reject,
            } => size(f, *cond) + size(f, *accept) + size(f, *reject),
            Expr::Math(_, args) => args.iter().map(|a| size(f, *a)).sum(),
            _ => 0,
        }
    }
    fn count(f: &acc_core::ir::Function, b: &Block) -> Option<usize> {
        let mut n = 0;
        for s in b {
            n += match s {
                Stmt::Assign { value, .. } => size(f, *value),
                Stmt::AssignElem { index, value, .. }
                | Stmt::Store { index, value, .. }
                | Stmt::Atomic { index, value, .. } => size(f, *index) + size(f, *value),
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } => size(f, *cond) + count(f, accept)? + count(f, reject)?,
                Stmt::For { .. } | Stmt::Loop { .. } | Stmt::Break | Stmt::Continue => return None,
            };
        }
        Some(n)
    }
    count(f, body).is_some_and(|n| n <= UNROLL_BODY)
}

/// The largest body [`unrollable`] unrolls, in expression nodes.
const UNROLL_BODY: usize = 96;
