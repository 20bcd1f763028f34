//! The entry points of a kernel in WGSL and how each spreads its loops over invocations: the
//! single-invocation entry, the flat grid-stride entry, the workgroup-per-gang-iteration entry (its
//! vector loop shared by the workgroup), and sequential loops.

use super::*;

impl Writer<'_> {
    /// An entry point of one invocation folding the per-workgroup partials of reductions into
    /// region locals, in workgroup order, into the locals' values (3.3 section 2.9.11).
    pub(super) fn fold_entry(
        &mut self,
        m: usize,
        on_device: &[(usize, Reduction)],
        load_locals: &str,
        store_locals: &str,
    ) -> Result<String> {
        let mut out = String::new();
        let _ = writeln!(out, "@compute @workgroup_size(1)");
        let _ = writeln!(
            out,
            "fn {}(@builtin(global_invocation_id) acc_gid: vec3<u32>) {{",
            self.k.entry_name(m)
        );
        let _ = writeln!(out, "    if (acc_gid.x != 0u) {{ return; }}");
        self.declare_locals(&mut out, false)?;
        out.push_str(load_locals);
        let _ = writeln!(out, "    var acc_g: u32 = 0u;");
        let _ = writeln!(
            out,
            "    for (; acc_g < params.acc_groups; acc_g = acc_g + 1u) {{"
        );
        for (slot, red) in on_device {
            let ty = self.k.function.locals[red.local as usize].ty;
            if red.op == ReduceOp::ComplexMul {
                // Pairs of parts, two words per workgroup.
                let (re, im) = (red.local, red.local + 1);
                let _ = writeln!(
                    out,
                    "        {}",
                    super::reduce::pair_product(
                        (&format!("l{re}"), &format!("l{im}")),
                        (
                            &format!("acc_partials_{slot}[2u * acc_g]"),
                            &format!("acc_partials_{slot}[2u * acc_g + 1u]")
                        ),
                        (&format!("l{re}"), &format!("l{im}")),
                    )
                );
                continue;
            }
            let p = format!("acc_partials_{slot}[acc_g]");
            let p = if ty == Scalar::Bool {
                format!("({p} != 0u)")
            } else {
                p
            };
            let halves = self.by_halves(ty);
            let _ = writeln!(
                out,
                "        l{} = {};",
                red.local,
                combine(red.op, ty, &format!("l{}", red.local), &p, halves)?
            );
        }
        let _ = writeln!(out, "    }}");
        if self.target.loop_limit.is_some() {
            self.loop_cut_helper();
            let _ = writeln!(
                out,
                "    if (acc_g < params.acc_groups) {{ acc_loop_cut(); }}"
            );
        }
        out.push_str(store_locals);
        let _ = writeln!(out, "}}");
        Ok(out)
    }

    /// One entry point: the prelude, then the loop's share of iterations, then the
    /// workgroup's reduction partials.
    /// An entry point of one invocation running `stmts` (code between parallel loops), with the
    /// region-level locals loaded first and stored back last.
    pub(super) fn single_entry(
        &mut self,
        n: usize,
        stmts: &[&Stmt],
        load: &str,
        store: &str,
    ) -> Result<String> {
        let mut out = String::new();
        let _ = writeln!(out, "@compute @workgroup_size(1)");
        let _ = writeln!(out, "fn {}(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {{", self.k.entry_name(n));
        let _ = writeln!(out, "    if (acc_gid.x != 0u) {{ return; }}");
        self.declare_locals(&mut out, false)?;
        out.push_str(load);
        for st in stmts {
            self.stmt(&mut out, st, 1)?;
        }
        out.push_str(store);
        let _ = writeln!(out, "}}");
        Ok(out)
    }

    /// The grid-stride loop of an entry point over a parallel loop: each invocation takes
    /// iterations `acc_gid.x`, `acc_gid.x + stride`, ... of the (collapsed) levels.
    pub(super) fn flat_grid(
        &mut self,
        out: &mut String,
        levels: &[LoopLevel],
        body: &Block,
        planned: &EntryPlan<'_>,
    ) -> Result<()> {
        let _ = writeln!(out, "    let acc_stride: u32 = acc_nwg.x * {}u;", self.wg);
        // Arrays indexed by the loop variable itself (as the plan says): when its first and
        // last values are in bounds for all of them (checked once here), the body runs
        // without their checks.
        let fast_arrays: std::collections::BTreeSet<ParamId> = match levels {
            [lv] => planned.versioned(lv.var).iter().copied().collect(),
            _ => Default::default(),
        };
        if !fast_arrays.is_empty() {
            let lv = &levels[0];
            let ty = self.ty(self.k.function.locals[lv.var as usize].ty)?;
            let (start, step) = (self.expr(lv.start)?, self.expr(lv.step)?);
            let (uty, trips) = (self.uty(), self.expr(lv.trips)?);
            let _ = writeln!(out, "    let acc_trips: {uty} = {trips};");
            let (one, zero) = (self.ulit(1), self.ulit(0));
            let last = format!("({start} + {ty}(acc_trips - {one}) * {step})");
            let mut conds = Vec::new();
            for a in &fast_arrays {
                let n = self.len_of(*a);
                let (first, end) = (
                    self.less(Scalar::USize, &start, &n),
                    self.less(Scalar::USize, &last, &n),
                );
                conds.push(format!("({first} && {end})"));
            }
            let _ = writeln!(
                out,
                "    let acc_fast = acc_trips == {zero} || ({});",
                conds.join(" && ")
            );
        }
        self.strided(
            out,
            levels,
            "g",
            "acc_gid.x",
            "acc_stride",
            planned.unrolled,
            &mut |w, out| {
                if fast_arrays.is_empty() {
                    return w.block(out, body, 2);
                }
                let _ = writeln!(out, "        if (acc_fast) {{");
                w.fast = Some((levels[0].var, fast_arrays.clone()));
                let r = w.block(out, body, 3);
                w.fast = None;
                r?;
                let _ = writeln!(out, "        }} else {{");
                w.block(out, body, 3)?;
                let _ = writeln!(out, "        }}");
                Ok(())
            },
        )
    }

    /// A loop over the flat space of the (collapsed) `levels`, innermost fastest: iterations
    /// `first`, `first + stride`, ... (both `u32` expressions), each setting the loop variables
    /// and running `body`. `tag` names its variables. As the flat grid loop, it counts in `u32`
    /// over chunks of 2^31 iterations where trip counts are 64-bit, and reports a loop the
    /// driver cut short.
    pub(super) fn strided(
        &mut self,
        out: &mut String,
        levels: &[LoopLevel],
        tag: &str,
        first: &str,
        stride: &str,
        unroll: bool,
        body: &mut dyn FnMut(&mut Self, &mut String) -> Result<()>,
    ) -> Result<()> {
        let uty = self.uty();
        let trips: Vec<String> = (0..levels.len())
            .map(|i| format!("acc_trips_{tag}{i}"))
            .collect();
        for (lv, t) in levels.iter().zip(&trips) {
            let e = self.expr(lv.trips)?;
            let _ = writeln!(out, "    let {t}: {uty} = {e};");
        }
        let total = format!("acc_trips_{tag}");
        let _ = writeln!(out, "    let {total}: {uty} = {};", trips.join(" * "));
        let (k, end) = (format!("acc_k_{tag}"), format!("acc_end_{tag}"));
        let wide = self.target.wide_usize();
        let flat = if wide {
            self.long_loop_helpers();
            let (c, chunks) = (format!("acc_c_{tag}"), format!("acc_chunks_{tag}"));
            let (base, left) = (format!("acc_base_{tag}"), format!("acc_left_{tag}"));
            let _ = writeln!(out, "    let {chunks}: u32 = acc_chunks_of({total});");
            let _ = writeln!(out, "    var {c}: u32 = 0u;");
            let _ = writeln!(out, "    for (; {c} < {chunks}; {c} = {c} + 1u) {{");
            let _ = writeln!(out, "    let {base}: u64 = u64({c}) << 31u;");
            let _ = writeln!(out, "    let {left}: u64 = {total} - {base};");
            let _ = writeln!(
                out,
                "    let {end}: u32 = select(u32({left}), 2147483648u, (u32({left} >> 32u) | (u32({left}) >> 31u)) != 0u);"
            );
            format!("({base} + u64({k}))")
        } else {
            let _ = writeln!(out, "    let {end}: u32 = {total};");
            k.clone()
        };
        let _ = writeln!(out, "    var {k}: u32 = {first};");
        let rest = format!("acc_rest_{tag}");
        // The levels' variables from the flat index: digits by division, innermost first.
        // Where the whole space fits 32 bits, in 32-bit arithmetic: faster, and it keeps 64-bit
        // division out of the shader (NVIDIA's Vulkan driver has miscompiled 64-bit integer
        // code beside it).
        let split = |w: &mut Self,
                     out: &mut String,
                     flat: &str,
                     rest: &str,
                     word: &str,
                     pad: &str|
         -> Result<()> {
            if levels.len() > 1 {
                let _ = writeln!(out, "{pad}var {rest}: {word} = {word}({flat});");
            }
            for (i, lv) in levels.iter().enumerate().rev() {
                let ty = w.ty(w.k.function.locals[lv.var as usize].ty)?;
                let (start, step) = (w.expr(lv.start)?, w.expr(lv.step)?);
                if i == 0 {
                    // The outermost level takes what is left: no division.
                    let k = if levels.len() > 1 {
                        rest.to_string()
                    } else {
                        flat.to_string()
                    };
                    let _ = writeln!(out, "{pad}l{} = {start} + {ty}({k}) * {step};", lv.var);
                } else {
                    let t = format!("{word}({})", trips[i]);
                    let _ = writeln!(
                        out,
                        "{pad}l{} = {start} + {ty}({rest} % {t}) * {step};",
                        lv.var
                    );
                    let _ = writeln!(out, "{pad}{rest} = {rest} / {t};");
                }
            }
            Ok(())
        };
        // A straight-line body over one level in 32-bit counts runs four iterations per trip
        // while four remain (`plan::unrolls_strided`); the loop after takes the rest.
        if unroll && levels.len() == 1 && !wide {
            let _ = writeln!(
                out,
                "    for (; {k} < {end} && {end} - {k} > 3u * {stride}; {k} = {k} + 4u * {stride}) {{"
            );
            for j in 0..4 {
                let _ = writeln!(out, "        {{");
                split(
                    self,
                    out,
                    &format!("({k} + {j}u * {stride})"),
                    &rest,
                    uty,
                    "        ",
                )?;
                body(self, out)?;
                let _ = writeln!(out, "        }}");
            }
            let _ = writeln!(out, "    }}");
        }
        let _ = writeln!(out, "    for (; {k} < {end}; {k} = {k} + {stride}) {{");
        if wide && levels.len() > 1 {
            let _ = writeln!(out, "        if (u32({total} >> 32u) == 0u) {{");
            split(
                self,
                out,
                &flat,
                &format!("{rest}32"),
                "u32",
                "            ",
            )?;
            let _ = writeln!(out, "        }} else {{");
            split(self, out, &flat, &rest, uty, "            ")?;
            let _ = writeln!(out, "        }}");
        } else {
            split(self, out, &flat, &rest, uty, "        ")?;
        }
        body(self, out)?;
        let _ = writeln!(out, "    }}");
        if self.target.loop_limit.is_some() {
            self.loop_cut_helper();
            let _ = writeln!(out, "    if ({k} < {end}) {{ acc_loop_cut(); }}");
        }
        if wide {
            let _ = writeln!(out, "    }}");
            if self.target.loop_limit.is_some() {
                let _ = writeln!(
                    out,
                    "    if (acc_c_{tag} < acc_chunks_{tag}) {{ acc_loop_cut(); }}"
                );
            }
        }
        Ok(())
    }

    /// Declares the entry's locals: the invocation's own, and the workgroup's copies of the
    /// gang's arrays (`gang_arrays`, at module scope). `invocations`: the dispatch's
    /// invocations, where the entry has its workgroup count (`acc_nwg`); the copies of the
    /// spilled arrays are interleaved over them.
    pub(super) fn declare_locals(&mut self, out: &mut String, invocations: bool) -> Result<()> {
        if !self.spilled.is_empty() {
            if invocations {
                let _ = writeln!(out, "    let acc_spn = acc_nwg.x * {}u;", self.wg);
                let _ = writeln!(out, "    let acc_spme = acc_gid.x;");
            } else {
                let _ = writeln!(out, "    let acc_spn = 1u;");
                let _ = writeln!(out, "    let acc_spme = 0u;");
            }
        }
        for (i, l) in self.k.function.locals.iter().enumerate() {
            let ty = self.ty(l.ty).map_err(|e| annotate(e, &l.name))?;
            match l.len {
                Some(_) if self.spilled.get(i as LocalId).is_some() => {}
                Some(len) if self.array_name(i as LocalId) != format!("l{i}") => {
                    let ty = if l.ty == Scalar::Bool { "u32" } else { ty };
                    let decl = format!(
                        "var<workgroup> {}: array<{ty}, {len}>;\n",
                        self.array_name(i as LocalId)
                    );
                    if !self.helpers.contains(&decl) {
                        self.helpers.push_str(&decl);
                    }
                }
                Some(len) => {
                    let _ = writeln!(out, "    var l{i}: array<{ty}, {len}>;");
                }
                None => {
                    let _ = writeln!(out, "    var l{i}: {ty};");
                }
            }
        }
        Ok(())
    }

    pub(super) fn entry(
        &mut self,
        n: usize,
        prelude: &[&Stmt],
        (s, planned): (&Stmt, &EntryPlan<'_>),
        slots: &[usize],
        load: &str,
    ) -> Result<String> {
        let Stmt::For {
            levels,
            reductions,
            private: _,
            body,
            ..
        } = s
        else {
            return Err(unsupported(
                "internal error: an entry point without its loop",
            ));
        };
        let mut out = String::new();
        let phases = &planned.phases;
        self.wg = planned.block_threads;
        let _ = writeln!(out, "@compute @workgroup_size({})", self.wg);
        let _ = writeln!(
            out,
            "fn {}(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {{",
            self.k.entry_name(n)
        );
        self.gang_arrays = phases.as_ref().map(|p| (n, p.shared_arrays.clone()));
        self.storage_barriers = phases
            .as_ref()
            .is_some_and(|p| p.exchanges_through_arrays(&self.k.function));
        self.declare_locals(&mut out, true)?;
        out.push_str(load);
        for st in prelude {
            self.stmt(&mut out, st, 1)?;
        }
        for r in reductions {
            let l = &self.k.function.locals[r.local as usize];
            if r.op == ReduceOp::ComplexMul {
                // 1 + 0i (the imaginary part in the next local).
                let (one, zero) = (
                    literal(Literal::Float(l.ty, 1.0), self.target)?,
                    literal(Literal::Float(l.ty, 0.0), self.target)?,
                );
                let _ = writeln!(
                    out,
                    "    l{} = {one};\n    l{} = {zero};",
                    r.local,
                    r.local + 1
                );
                continue;
            }
            let id = identity(r.op, l.ty, self.target)?;
            match l.len {
                Some(n) => {
                    let _ = writeln!(out, "    for (var acc_e: u32 = 0u; acc_e < {n}u; acc_e = acc_e + 1u) {{ l{}[acc_e] = {id}; }}", r.local);
                }
                None => {
                    let _ = writeln!(out, "    l{} = {id};", r.local);
                }
            }
        }
        match phases {
            // Each iteration of the outer loop on one workgroup, whose invocations share the
            // inner vector loop's iterations (docs/design-notes/execution-model.md: gang to workgroup, vector to
            // invocation); the workgroup combines the loop's reductions into locals of the
            // iteration, and its first invocation runs the code after the loop.
            Some(phases) => {
                self.strided(
                    &mut out,
                    levels,
                    "g",
                    "acc_wg.x",
                    "acc_nwg.x",
                    false,
                    &mut |w, out| {
                        w.gang_steps(out, &phases.steps, n, 2)?;
                        if !phases.post.is_empty() {
                            let _ = writeln!(out, "        if (acc_lid == 0u) {{");
                            for st in &phases.post {
                                w.stmt(out, st, 3)?;
                            }
                            let _ = writeln!(out, "        }}");
                        }
                        Ok(())
                    },
                )?;
            }
            None => {
                // A small array of 32-bit integers the loop only adds (ors, xors) into
                // atomically: each workgroup combines its updates in workgroup memory first.
                let private = planned.privatized;
                if let Some(p) = private {
                    self.privatize_begin(&mut out, n, p)?;
                }
                self.flat_grid(&mut out, levels, body, planned)?;
                if let Some(p) = private {
                    self.privatize_end(&mut out, n, p)?;
                }
            }
        }
        for (r, (red, slot)) in reductions.iter().zip(slots).enumerate() {
            let ty = self.k.function.locals[red.local as usize].ty;
            let sh = format!("acc_shared_{n}_{r}");
            if red.op == ReduceOp::ComplexMul {
                self.workgroup_pair_tree(&mut out, "    ", &sh, red.local)?;
                let _ = writeln!(
                    out,
                    "    if (acc_lid == 0u) {{ acc_partials_{slot}[2u * acc_wg.x] = {sh}[0]; acc_partials_{slot}[2u * acc_wg.x + 1u] = {sh}_im[0]; }}"
                );
                continue;
            }
            // Arrays reduce element by element, each through the same shared memory.
            let (element, partial, pad) = match self.k.function.locals[red.local as usize].len {
                Some(n) => {
                    let _ = writeln!(
                        out,
                        "    for (var acc_e: u32 = 0u; acc_e < {n}u; acc_e = acc_e + 1u) {{"
                    );
                    (
                        format!("l{}[acc_e]", red.local),
                        format!("acc_wg.x * {n}u + acc_e"),
                        "        ",
                    )
                }
                None => (format!("l{}", red.local), "acc_wg.x".to_string(), "    "),
            };
            self.workgroup_tree(&mut out, pad, &sh, red.op, ty, &element)?;
            let _ = writeln!(
                out,
                "{pad}if (acc_lid == 0u) {{ acc_partials_{slot}[{partial}] = {sh}[0]; }}"
            );
            if pad.len() > 4 {
                // The next element reuses the shared memory once everyone has read it.
                let _ = writeln!(out, "        workgroupBarrier();");
                let _ = writeln!(out, "    }}");
            }
        }
        let _ = writeln!(out, "}}");
        self.gang_arrays = None;
        Ok(out)
    }

    /// A loop nest run in order by one invocation: one WGSL loop per level, outermost first.
    pub(super) fn sequential_loop(
        &mut self,
        out: &mut String,
        levels: &[LoopLevel],
        body: &Block,
        depth: usize,
    ) -> Result<()> {
        self.sequential_loop_with(out, levels, depth, &mut |w, out, depth| {
            w.block(out, body, depth)
        })
    }

    /// [`Writer::sequential_loop`] with `body` written by a function (given the depth inside
    /// the innermost loop): also the loops every invocation of a workgroup runs in step
    /// around barriers.
    pub(super) fn sequential_loop_with(
        &mut self,
        out: &mut String,
        levels: &[LoopLevel],
        depth: usize,
        body: &mut dyn FnMut(&mut Self, &mut String, usize) -> Result<()>,
    ) -> Result<()> {
        let pad = "    ".repeat(depth);
        let Some((lv, inner)) = levels.split_first() else {
            return body(self, out, depth);
        };
        let ty = self.ty(self.k.function.locals[lv.var as usize].ty)?;
        let (start, step, trips) = (
            self.expr(lv.start)?,
            self.expr(lv.step)?,
            self.expr(lv.trips)?,
        );
        let k = format!("acc_k{depth}");
        // The counter is a u32 (NVIDIA's Vulkan driver hung on loops counting in u64):
        // a 64-bit trip count beyond it stops the launch with an error.
        let trips = if self.target.wide_usize() {
            self.long_loop_helpers();
            format!("acc_trips32({trips})")
        } else {
            trips
        };
        let mut rest = |w: &mut Self, out: &mut String| {
            if inner.is_empty() {
                body(w, out, depth + 1)
            } else {
                w.sequential_loop_with(out, inner, depth + 1, body)
            }
        };
        match self.target.loop_limit {
            None => {
                // The trip count is evaluated once, before the loop, as Rust does.
                let n = format!("acc_n{depth}");
                let _ = writeln!(out, "{pad}{{ let {n}: u32 = {trips};");
                let _ = writeln!(
                    out,
                    "{pad}for (var {k}: u32 = 0u; {k} < {n}; {k} = {k} + 1u) {{"
                );
                let _ = writeln!(out, "{pad}    l{} = {start} + {ty}({k}) * {step};", lv.var);
                self.break_flags.push(None);
                let r = rest(self, out);
                self.break_flags.pop();
                r?;
                let _ = writeln!(out, "{pad}}} }}");
            }
            Some(_) => {
                // The driver may end the loop early: a loop that stopped before its
                // trip count without a `break` is reported, never taken as done.
                let (broke, n) = (format!("acc_broke{depth}"), format!("acc_n{depth}"));
                self.loop_cut_helper();
                let _ = writeln!(
                    out,
                    "{pad}{{ var {broke} = false; let {n}: u32 = {trips}; var {k}: u32 = 0u;"
                );
                let _ = writeln!(out, "{pad}for (; {k} < {n}; {k} = {k} + 1u) {{");
                let _ = writeln!(out, "{pad}    l{} = {start} + {ty}({k}) * {step};", lv.var);
                self.break_flags.push(Some(broke.clone()));
                let r = rest(self, out);
                self.break_flags.pop();
                r?;
                let _ = writeln!(out, "{pad}}}");
                let _ = writeln!(
                    out,
                    "{pad}if (!{broke} && {k} < {n}) {{ acc_loop_cut(); }} }}"
                );
            }
        }
        Ok(())
    }
}
