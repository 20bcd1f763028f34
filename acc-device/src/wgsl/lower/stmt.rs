//! Statements in WGSL: assignments, stores, branches and loops (the sequential ones with
//! the driver's iteration limit checked), and the 64-bit comparisons done on 32-bit halves.

use super::*;

impl Writer<'_> {
    pub(super) fn block(&mut self, out: &mut String, b: &[Stmt], depth: usize) -> Result<()> {
        for s in b {
            self.stmt(out, s, depth)?;
        }
        Ok(())
    }

    pub(super) fn stmt(&mut self, out: &mut String, s: &Stmt, depth: usize) -> Result<()> {
        let pad = "    ".repeat(depth);
        match s {
            Stmt::Assign { local, value } => {
                let v = self.expr(*value)?;
                let _ = writeln!(out, "{pad}l{local} = {v};");
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } => {
                let (i, v) = (self.local_index(*index)?, self.expr(*value)?);
                let v = if self.shared_bool(*local) {
                    format!("select(0u, 1u, {v})")
                } else {
                    v
                };
                let _ = writeln!(out, "{pad}{} = {v};", self.private_element(*local, &i));
            }
            Stmt::Store {
                array,
                field,
                index,
                value,
            } => {
                let member = self.member_at(*array, *field, *index)?;
                let (i, mut v) = (self.expr(*index)?, self.expr(*value)?);
                if let Some(p) = self.packed(*array, *field) {
                    // A compare-exchange on the field's word (see `Packed`).
                    let place = format!(
                        "p{array}[params.b{array} + {}]{member}",
                        self.index32("acc_i", false)
                    );
                    let check = self.bounds_check(*array, "acc_i");
                    let _ = writeln!(
                        out,
                        "{pad}{{ let acc_i = {i}; let acc_v = {v}; if ({check}) {{ loop {{"
                    );
                    let _ = writeln!(out, "{pad}    let acc_old_w = atomicLoad(&{place});");
                    let _ = writeln!(out, "{pad}    if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{ break; }}", p.insert("acc_old_w", "acc_v"));
                    let _ = writeln!(out, "{pad}}} }} }}");
                    return Ok(());
                }
                if self.types[value.index()] == Scalar::Bool {
                    v = format!("select(0u, 1u, {v})");
                }
                // An element of a nested array out of its range is not stored (as one of the
                // array is not).
                if let Some(ok) = self.nested_in_bounds(*array, *field, *index)? {
                    let _ = writeln!(out, "{pad}if ({ok}) {{");
                }
                let nested = field.is_some_and(|f| split_field(f).1.is_some());
                if self.atomic.contains(&(*array, *field)) {
                    let elem = self.types[value.index()];
                    let w = encode(elem, &v);
                    let ai = self.index32("acc_i", false);
                    let check = self.bounds_check(*array, "acc_i");
                    let _ = writeln!(out, "{pad}{{ let acc_i = {i}; if ({check}) {{ atomicStore(&p{array}[params.b{array} + {ai}]{member}, {w}); }} }}");
                } else if self.k.unchecked || self.fast_index(*array, *index) {
                    let ai = self.index32(&i, self.is_constant(*index));
                    let _ = writeln!(out, "{pad}p{array}[params.b{array} + {ai}]{member} = {v};");
                } else {
                    let ai = self.index32("acc_i", false);
                    let _ = writeln!(out, "{pad}{{ let acc_i = {i}; if (acc_in_bounds({array}u, acc_i, params.n{array})) {{ p{array}[params.b{array} + {ai}]{member} = {v}; }} }}");
                    self.bounds_helper();
                }
                if nested && !self.k.unchecked {
                    let _ = writeln!(out, "{pad}}}");
                }
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let c = self.expr(*cond)?;
                let _ = writeln!(out, "{pad}if ({c}) {{");
                self.block(out, accept, depth + 1)?;
                if !reject.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    self.block(out, reject, depth + 1)?;
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::For { levels, body, .. } => {
                // Inside a parallel loop every loop runs sequentially in its invocation; the
                // levels of a collapsed nest as the nested loops they were written as.
                self.sequential_loop(out, levels, body, depth)?;
            }
            Stmt::Loop { body } => match self.target.loop_limit {
                None => {
                    let _ = writeln!(out, "{pad}loop {{");
                    self.break_flags.push(None);
                    self.block(out, body, depth + 1)?;
                    self.break_flags.pop();
                    let _ = writeln!(out, "{pad}}}");
                }
                Some(_) => {
                    // Only a `break` leaves this loop: leaving it otherwise is the driver's cut.
                    let broke = format!("acc_broke{depth}");
                    self.loop_cut_helper();
                    let _ = writeln!(out, "{pad}{{ var {broke} = false;");
                    let _ = writeln!(out, "{pad}loop {{");
                    self.break_flags.push(Some(broke.clone()));
                    self.block(out, body, depth + 1)?;
                    self.break_flags.pop();
                    let _ = writeln!(out, "{pad}}}");
                    let _ = writeln!(out, "{pad}if (!{broke}) {{ acc_loop_cut(); }} }}");
                }
            },
            Stmt::Break => match self.break_flags.last() {
                Some(Some(flag)) => {
                    let _ = writeln!(out, "{pad}{flag} = true; break;");
                }
                _ => {
                    let _ = writeln!(out, "{pad}break;");
                }
            },
            Stmt::Continue => {
                let _ = writeln!(out, "{pad}continue;");
            }
            Stmt::Atomic {
                array,
                field,
                index,
                op,
                value,
                old,
                new,
            } => {
                self.atomic_stmt(out, &pad, (*array, *field), *index, *op, *value, *old, *new)?;
            }
        }
        Ok(())
    }

    /// Trip counts of 64-bit loops as u32 loop counters: `acc_trips32` for a loop of one
    /// invocation, `acc_chunks_of` for the grid loop's chunks of 2^31 iterations. A count beyond
    /// them (2^32 iterations in one invocation, 2^63 over the grid) sets status 3 and runs nothing.
    /// Its tests compare 32-bit words: on NVIDIA's Vulkan driver a `u64` comparison with zero
    /// came out true now and then for a small count when other work ran beside it, stopping
    /// the launch with status 3 (every test the lowering writes on a 64-bit value does so).
    pub(super) fn long_loop_helpers(&mut self) {
        if self.helpers.contains("fn acc_trips32") {
            return;
        }
        self.helpers.push_str(
            "fn acc_trips32(n: u64) -> u32 {\n\
             \x20   if (u32(n >> 32u) != 0u) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }\n\
             \x20   return u32(n);\n\
             }\n\
             fn acc_chunks_of(n: u64) -> u32 {\n\
             \x20   let c = (n >> 31u) + select(0lu, 1lu, (u32(n) & 2147483647u) != 0u);\n\
             \x20   return acc_trips32(c);\n\
             }\n",
        );
    }

    /// Whether values of type `t` are ordered on their 32-bit halves (see
    /// [`Target::int64_compare_by_halves`]); if so, the helpers that do it are written.
    pub(super) fn by_halves(&mut self, t: Scalar) -> bool {
        let wide = matches!(device_scalar(t, self.target), Scalar::U64 | Scalar::I64);
        if !(wide && self.target.int64_compare_by_halves) {
            return false;
        }
        if !self.helpers.contains("fn acc_lt_u64(") {
            for (s, high) in [("u64", "u32"), ("i64", "i32")] {
                let _ = write!(
                    self.helpers,
                    "fn acc_lt_{s}(a: {s}, b: {s}) -> bool {{\n\
                     \x20   let ah = {high}(a >> 32u);\n\
                     \x20   let bh = {high}(b >> 32u);\n\
                     \x20   return (ah < bh) || ((ah == bh) && (u32(a) < u32(b)));\n\
                     }}\n\
                     fn acc_min_{s}(a: {s}, b: {s}) -> {s} {{\n    return select(a, b, acc_lt_{s}(b, a));\n}}\n\
                     fn acc_max_{s}(a: {s}, b: {s}) -> {s} {{\n    return select(a, b, acc_lt_{s}(a, b));\n}}\n"
                );
            }
        }
        true
    }

    /// `a < b` on values of type `t`, as WGSL (on halves where [`Writer::by_halves`] says).
    pub(super) fn less(&mut self, t: Scalar, a: &str, b: &str) -> String {
        if self.by_halves(t) {
            format!(
                "acc_lt_{}({a}, {b})",
                int64_name(device_scalar(t, self.target))
            )
        } else {
            format!("({a} < {b})")
        }
    }

    pub(super) fn loop_cut_helper(&mut self) {
        if self.helpers.contains("fn acc_loop_cut") {
            return;
        }
        self.helpers.push_str(
            "fn acc_loop_cut() {\n    atomicCompareExchangeWeak(&acc_status[0], 0u, 2u);\n}\n",
        );
    }
}
