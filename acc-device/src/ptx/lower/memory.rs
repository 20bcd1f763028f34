//! Memory in PTX: array elements addressed with their bounds checked (a failed check recorded in
//! the status word), words stored and loaded in each state space, and the thread's private arrays
//! in local memory.

use super::*;

impl Writer<'_> {
    /// Loads the element at `addr` (a relaxed atomic load with `atomic`).
    pub(super) fn load_element(&mut self, addr: &str, elem: Scalar, atomic: bool) -> String {
        let sem = if atomic { ".relaxed.gpu" } else { "" };
        if elem == Scalar::Bool {
            let (w, d) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("ld{sem}.global.u8 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {d}, {w}, 0;"));
            return d;
        }
        let r = repr(elem);
        let d = self.reg(r.class);
        self.emit(format!("ld{sem}.global{} {d}, [{addr}];", mem_type(elem)));
        d
    }

    /// What an access of array `a` (and `field`) touches.
    pub(super) fn array(&self, a: ParamId, field: Option<FieldId>) -> Result<Access> {
        self.k.access(a, field).ok_or_else(|| {
            unsupported(format!(
                "internal error: parameter {a} is not an array (of structs with field {field:?})"
            ))
        })
    }

    /// The predicate "index `i` is in bounds of `array`" (recording the first access that is
    /// not, for the host to report) and the element's address.
    pub(super) fn checked_address(
        &mut self,
        array: ParamId,
        index: Handle<Expr>,
        i: &str,
        access: Access,
    ) -> Result<(Option<String>, String)> {
        // Unchecked kernels (`unchecked`, or launches proven in bounds on the host) access
        // without a predicate at all.
        let fast = self.k.unchecked
            || match (&self.fast, &self.k.function.exprs[index]) {
                (Some((var, arrays)), Expr::Local(l)) => l == var && arrays.contains(&array),
                _ => false,
            };
        let base = self.reg("%rd");
        self.emit(format!("ld.param.u64 {base}, [acc_a{array}];"));
        let ok = if fast {
            None
        } else {
            let n = self.reg("%rd");
            self.emit(format!("ld.param.u64 {n}, [acc_n{array}];"));
            Some(self.bounds_check(array, i, &n))
        };
        let addr = self.reg("%rd");
        self.emit(format!(
            "mad.lo.u64 {addr}, {i}, {}, {base};",
            access.stride
        ));
        if access.offset != 0 {
            self.emit(format!("add.u64 {addr}, {addr}, {};", access.offset));
        }
        // An element of a nested array (`boxes[l].nei[k]`): its index checked against the
        // field's length too, and its offset added.
        let ok = match (access.nested, &self.k.function.exprs[index]) {
            (Some((len, stride)), &Expr::NestedIndex { sub, .. }) => {
                let s = self.index_expr(sub)?;
                let n = self.reg("%rd");
                self.emit(format!("mov.u64 {n}, {len};"));
                let sub_ok = self.bounds_check(array, &s, &n);
                self.emit(format!("mad.lo.u64 {addr}, {s}, {stride}, {addr};"));
                Some(match ok {
                    Some(ok) => {
                        let both = self.reg("%p");
                        self.emit(format!("and.pred {both}, {ok}, {sub_ok};"));
                        both
                    }
                    None => sub_ok,
                })
            }
            (Some(_), _) | (None, &Expr::NestedIndex { .. }) => {
                return Err(unsupported(format!(
                    "internal error: an access of parameter {array} whose field and index disagree on nesting"
                )))
            }
            _ => ok,
        };
        Ok((ok, addr))
    }

    /// The predicate `i < n`; where it is false, the first such access of the launch is
    /// recorded in the status words ([`status`] words: code, `what`, index, length) for the host to report.
    pub(super) fn bounds_check(&mut self, what: u32, i: &str, n: &str) -> String {
        let ok = self.reg("%p");
        self.emit(format!("setp.lt.u64 {ok}, {i}, {n};"));
        if self.k.unchecked {
            self.emit(format!("setp.eq.u64 {ok}, {n}, {n};"));
            return ok;
        }
        // Predicated moves into the thread's registers, no branch: the accesses of a loop body
        // stay one basic block ptxas can schedule, and the common case costs three issue slots.
        let (w, x, y) = self.bad.clone();
        self.emit(format!("@!{ok} mov.u32 {w}, {what};"));
        self.emit(format!("@!{ok} mov.u64 {x}, {i};"));
        self.emit(format!("@!{ok} mov.u64 {y}, {n};"));
        ok
    }

    /// Records the thread's out-of-range access, if any, unless another thread recorded one
    /// first, in the [`status`] words.
    pub(super) fn report_bad(&mut self) {
        if self.k.unchecked {
            return;
        }
        let (w, x, y) = self.bad.clone();
        let any = self.reg("%p");
        self.emit(format!("setp.ne.u32 {any}, {w}, -1;"));
        let (status, old) = (self.reg("%rd"), self.reg("%r"));
        self.emit(format!("ld.param.u64 {status}, [acc_status];"));
        self.emit(format!("mov.u32 {old}, {};", status::OUT_OF_BOUNDS));
        self.emit(format!(
            "@{any} atom.global.cas.b32 {old}, [{status}], 0, {};",
            status::OUT_OF_BOUNDS
        ));
        let first = self.reg("%p");
        self.emit(format!("setp.eq.u32 {first}, {old}, 0;"));
        // Only the index's low word: keeping its high word too costs the kernel a register
        // across its loops (measured: 48 -> 52 per thread in the CSR SpMV, one block less per
        // SM, 15% slower). The high status word stays 0.
        let (a, b) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("cvt.u32.u64 {a}, {x};"));
        self.emit(format!("cvt.u32.u64 {b}, {y};"));
        for (word, v) in [(1, &w), (2, &a), (3, &b)] {
            self.emit(format!(
                "@{first} st.global.u32 [{status}+{}], {v};",
                status::offset(word)
            ));
        }
    }

    pub(super) fn store_global_if(
        &mut self,
        addr: &str,
        ty: Scalar,
        v: &str,
        pred: &str,
    ) -> Result<()> {
        if ty == Scalar::Bool {
            let w = self.reg("%r");
            self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
            self.emit(format!("{pred}st.global.u8 [{addr}], {w};"));
        } else {
            self.emit(format!("{pred}st.global{} [{addr}], {v};", store_type(ty)));
        }
        Ok(())
    }

    /// Stores a value as a reduction word (`bool` as a `u32` 0 or 1) in `space` (`.shared` for
    /// the block's tree, `.global` for the block's partial).
    pub(super) fn store_word(
        &mut self,
        space: &str,
        addr: &str,
        ty: Scalar,
        v: &str,
    ) -> Result<()> {
        if ty == Scalar::Bool {
            let w = self.reg("%r");
            self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
            self.emit(format!("st{space}.u32 [{addr}], {w};"));
        } else {
            self.emit(format!("st{space}{} [{addr}], {v};", repr(ty).ty));
        }
        Ok(())
    }

    /// Loads a reduction word (`bool` from a `u32` 0 or 1) from `space`.
    pub(super) fn load_word(&mut self, space: &str, addr: &str, ty: Scalar) -> String {
        if ty == Scalar::Bool {
            let (w, p) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("ld{space}.u32 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {p}, {w}, 0;"));
            return p;
        }
        let r = repr(ty);
        let d = self.reg(r.class);
        self.emit(format!("ld{space}{} {d}, [{addr}];", r.ty));
        d
    }

    /// Index (or trip count) expression `h` in a 64-bit register: a kernel whose indices
    /// were narrowed to 32 bits ([`acc_core::ir::narrow`]) computes them in `u32`, which
    /// addresses then widen.
    pub(super) fn index_expr(&mut self, h: Handle<Expr>) -> Result<String> {
        if let Expr::Local(l) = self.k.function.exprs[h] {
            if let Some(wide) = self.wide_vars.get(&l) {
                return Ok(wide.clone());
            }
        }
        let i = self.expr(h)?;
        if i.starts_with("%rd") {
            return Ok(i);
        }
        let wide = self.reg("%rd");
        self.emit(format!("cvt.u64.u32 {wide}, {i};"));
        Ok(wide)
    }

    /// The state space and symbol of private array `l`: the block's copy in shared memory for
    /// a gang's array its threads share ([`GangPhases::shared_arrays`]), else the thread's own.
    fn private_home(&self, l: LocalId) -> (&'static str, String) {
        if self.gang_arrays.contains(&l) {
            (".shared", format!("acc_sa{l}"))
        } else if let Some((start, _)) = self.spill_regs.get(&l) {
            (".global", start.clone())
        } else {
            (".local", format!("acc_pa{l}"))
        }
    }

    /// The address of element `e` (a constant) of private array `l`.
    pub(super) fn private_address_const(&mut self, l: LocalId, e: u32) -> String {
        if let Some((start, stride)) = self.spill_regs.get(&l).cloned() {
            let a = self.reg("%rd");
            self.emit(format!("mad.lo.u64 {a}, {stride}, {e}, {start};"));
            return a;
        }
        let ty = self.k.function.locals[l as usize].ty;
        let (space, sym) = self.private_home(l);
        let wide = if space == ".shared" { "" } else { "d" };
        let a = self.reg(if wide.is_empty() { "%r" } else { "%rd" });
        let bits = if wide.is_empty() { "u32" } else { "u64" };
        self.emit(format!("mov.{bits} {a}, {sym};"));
        self.emit(format!("add.{bits} {a}, {a}, {};", e * elem_size(ty)));
        a
    }

    /// The predicate "`index` is in bounds of private array `l`" and the element's address
    /// (an operand of `ld`/`st`). For an array in shared memory whose index is `x + c`, `c` a
    /// constant (a literal, or the variable of a loop written out whole), the address is
    /// `x`'s and `c` goes into the access's offset (`[%r+64]`): the unrolled reads of a row
    /// share one address register, where computing each address took two instructions.
    pub(super) fn private_access(
        &mut self,
        l: LocalId,
        index: Handle<Expr>,
    ) -> Result<(String, String)> {
        let ty = self.k.function.locals[l as usize].ty;
        if self.gang_arrays.contains(&l) {
            if let Some((rest, c)) = self.constant_part(index) {
                let offset = c * i128::from(elem_size(ty));
                if (0..1 << 20).contains(&offset) {
                    let i = self.index_expr(index)?;
                    let local = &self.k.function.locals[l as usize];
                    let len = local.len.unwrap_or(0);
                    let n = self.reg("%rd");
                    self.emit(format!("mov.u64 {n}, {len};"));
                    let ok = self.bounds_check(PRIVATE_ARRAY_BIT | l, &i, &n);
                    let x = self.index_expr(rest)?;
                    let (x32, a) = (self.reg("%r"), self.reg("%r"));
                    self.emit(format!("cvt.u32.u64 {x32}, {x};"));
                    self.emit(format!("mov.u32 {a}, acc_sa{l};"));
                    self.emit(format!("mad.lo.u32 {a}, {x32}, {}, {a};", elem_size(ty)));
                    return Ok((ok, format!("{a}+{offset}")));
                }
            }
        }
        let i = self.index_expr(index)?;
        Ok(self.private_address(l, &i))
    }

    /// `index` as `x + c` with `c` a constant other than 0 (see [`Writer::private_access`]).
    fn constant_part(&self, index: Handle<Expr>) -> Option<(Handle<Expr>, i128)> {
        match self.k.function.exprs[index] {
            Expr::Binary(BinaryOp::Add, a, b) => match (self.constant(a), self.constant(b)) {
                (_, Some(c)) if c != 0 => Some((a, c)),
                (Some(c), _) if c != 0 => Some((b, c)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value of `h` where it is a constant: integer literals, the variables of a loop
    /// being written out whole, and sums and products of those.
    fn constant(&self, h: Handle<Expr>) -> Option<i128> {
        match &self.k.function.exprs[h] {
            Expr::Literal(Literal::Int(_, v)) => Some(*v),
            Expr::Local(l) => self.const_vars.get(l).copied(),
            Expr::Cast(x, t) if t.is_int() => self.constant(*x),
            Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Mul), a, b) => {
                let (a, b) = (self.constant(*a)?, self.constant(*b)?);
                if *op == BinaryOp::Add {
                    a.checked_add(b)
                } else {
                    a.checked_mul(b)
                }
            }
            _ => None,
        }
    }

    /// The predicate "index `i` is in bounds of private array `l`" (recording the first access
    /// that is not) and the element's address.
    pub(super) fn private_address(&mut self, l: LocalId, i: &str) -> (String, String) {
        let local = &self.k.function.locals[l as usize];
        let (ty, len) = (local.ty, local.len.unwrap_or(0));
        let n = self.reg("%rd");
        self.emit(format!("mov.u64 {n}, {len};"));
        let ok = self.bounds_check(PRIVATE_ARRAY_BIT | l, i, &n);
        let (space, sym) = self.private_home(l);
        if space == ".shared" {
            // Shared memory is addressed in 32 bits: the index's constant parts then fold
            // into the access's offset (`ld.shared [r + 64]`), one address register for the
            // unrolled reads of a row, where a 64-bit address took an addition per access.
            let (i32, a) = (self.reg("%r"), self.reg("%r"));
            self.emit(format!("cvt.u32.u64 {i32}, {i};"));
            self.emit(format!("mov.u32 {a}, {sym};"));
            self.emit(format!("mad.lo.u32 {a}, {i32}, {}, {a};", elem_size(ty)));
            return (ok, a);
        }
        let a = self.reg("%rd");
        if let Some((_, stride)) = self.spill_regs.get(&l) {
            self.emit(format!("mad.lo.u64 {a}, {i}, {stride}, {sym};"));
            return (ok, a);
        }
        self.emit(format!("mov.u64 {a}, {sym};"));
        self.emit(format!("mad.lo.u64 {a}, {i}, {}, {a};", elem_size(ty)));
        (ok, a)
    }

    /// Stores `v` to element address `addr` of private array `l` (where `pred`, an `@p `
    /// prefix or empty, holds).
    pub(super) fn store_private(&mut self, l: LocalId, addr: &str, v: &str, pred: &str) {
        let ty = self.k.function.locals[l as usize].ty;
        let (space, _) = self.private_home(l);
        if ty == Scalar::Bool {
            let w = self.reg("%r");
            self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
            self.emit(format!("{pred}st{space}.u8 [{addr}], {w};"));
        } else {
            self.emit(format!("{pred}st{space}{} [{addr}], {v};", store_type(ty)));
        }
    }

    pub(super) fn load_private(&mut self, l: LocalId, addr: &str) -> String {
        self.load_private_if(l, addr, None)
    }

    /// Loads an element of private array `l` (zero where `pred` is false).
    pub(super) fn load_private_if(&mut self, l: LocalId, addr: &str, pred: Option<&str>) -> String {
        let ty = self.k.function.locals[l as usize].ty;
        let (space, _) = self.private_home(l);
        let pad = pred.map(|p| format!("@{p} ")).unwrap_or_default();
        if ty == Scalar::Bool {
            let (w, d) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("mov.u32 {w}, 0;"));
            self.emit(format!("{pad}ld{space}.u8 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {d}, {w}, 0;"));
            return d;
        }
        let r = repr(ty);
        let d = self.reg(r.class);
        self.emit(format!("mov{} {d}, 0;", r.bits));
        self.emit(format!("{pad}ld{space}{} {d}, [{addr}];", mem_type(ty)));
        d
    }
}
