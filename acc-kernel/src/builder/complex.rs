//! Complex numbers in kernels (`num_complex::Complex<f32>` and `Complex<f64>`, feature
//! `num-complex`, issue 18 item 5): a complex value is a pair of real expressions of one float
//! type, and a complex local a pair of real locals, so the IR and the backends see only reals.
//!
//! Each operation is written as `num_complex` writes it, in the same order, so every device
//! gives the host's bits: `(a + ib)(c + id) = (ac - bd) + i(ad + bc)`, division through
//! `c*c + d*d`, `real - z` as `(real - re, 0 - im)`, `norm` as `re.hypot(im)`, `arg` as
//! `im.atan2(re)`. A complex value's type is `Ty::Complex(component)`, so a complex value where
//! a real one is expected (or the reverse) is a type error of the kernel, never a silent use of
//! one part. A pair written with two statements (a local, an element) is held in locals first:
//! the IR is a tree evaluated at each use, and the second part may read what the first wrote.

use super::*;

impl KernelBuilder {
    /// `Complex::new(re, im)` (and `Complex { re, im }`).
    pub fn complex(&mut self, re: Value, im: Value) -> Value {
        self.unify(re.ty, im.ty, "Complex::new");
        let f = self.new_var(Ty::AnyFloat);
        self.unify(
            re.ty,
            f,
            "Complex::new (kernels take Complex<f32> and Complex<f64>)",
        );
        let t = self.new_var(Ty::Complex(re.ty));
        Value {
            expr: re.expr,
            ty: t,
            im: Some(im.expr),
        }
    }

    /// The type of the parts of complex type `t`.
    fn part_ty(&mut self, t: TyVar) -> Option<TyVar> {
        match self.ty(t) {
            Ty::Complex(c) => Some(c),
            _ => None,
        }
    }

    /// The real and imaginary parts of complex `v`.
    fn parts(&mut self, v: Value) -> (Value, Value) {
        let c = self.part_ty(v.ty).unwrap_or(v.ty);
        let re = Value {
            expr: v.expr,
            ty: c,
            im: None,
        };
        let im = Value {
            expr: v.im.unwrap_or(v.expr),
            ty: c,
            im: None,
        };
        (re, im)
    }

    /// `z.re` / `z.im` of a complex value.
    pub fn component(&mut self, v: Value, name: &str) -> Value {
        if v.im.is_none() {
            self.fail(format!("`.{name}` of a value that is not a complex number"));
            return v;
        }
        let (re, im) = self.parts(v);
        match name {
            "re" => re,
            "im" => im,
            _ => {
                self.fail(format!(
                    "`.{name}` of a complex number (it has `re` and `im`)"
                ));
                re
            }
        }
    }

    /// `z.re = value` / `z.im = value` of complex local `v`.
    pub fn set_component(&mut self, v: Var, name: &str, value: Value) {
        let Some(&im) = self.complex_locals.get(&v.id) else {
            self.fail(format!(
                "`.{name} = ..` of a value that is not a complex number"
            ));
            return;
        };
        let local = match name {
            "re" => v.id,
            "im" => im,
            _ => {
                self.fail(format!(
                    "`.{name}` of a complex number (it has `re` and `im`)"
                ));
                return;
            }
        };
        // (Not through `set`: the real part's local is the complex local's own id.)
        let ty = self.local_ty[local as usize];
        self.unify(ty, value.ty, "assignment");
        self.emit(Stmt::Assign {
            local,
            value: value.expr,
        });
    }

    /// The private copy of a complex reduction variable (`reduction(+: z)`), whose parts
    /// reduce into scalar parameters `re` and `im`. `+` adds part by part; `*` does not
    /// (a complex product mixes the parts) and is refused.
    pub fn complex_reduction_local(
        &mut self,
        name: &str,
        ty: Scalar,
        op: ReduceOp,
        re: ParamId,
        im: ParamId,
    ) -> Var {
        let (r, i) = match op {
            ReduceOp::Add => {
                let r = self.reduction_local(&format!("{name}.re"), ty, ReduceOp::Add);
                let i = self.reduction_local(&format!("{name}.im"), ty, ReduceOp::Add);
                self.reduce_into(r, ReduceOp::Add, re);
                self.reduce_into(i, ReduceOp::Add, im);
                (r, i)
            }
            ReduceOp::Mul => {
                // One reduction of the pair (the imaginary part in the next local), from 1 + 0i.
                let r = self.reduction_local(&format!("{name}.re"), ty, ReduceOp::ComplexMul);
                let zero = self.lit_float(0.0, Some(ty));
                let i = self.local(&format!("{name}.im"), Some(ty), Some(zero));
                if i.id != r.id + 1 {
                    self.fail(format!("internal error: the parts of the complex reduction `{name}` are not adjacent locals"));
                }
                self.reduce_into(r, ReduceOp::ComplexMul, re);
                (r, i)
            }
            op => {
                self.fail(format!(
                    "the reduction `{}` of the complex number `{name}` (complex numbers reduce with `+` and `*`)",
                    op.symbol()
                ));
                let r = self.reduction_local(&format!("{name}.re"), ty, ReduceOp::Add);
                let i = self.reduction_local(&format!("{name}.im"), ty, ReduceOp::Add);
                (r, i)
            }
        };
        self.complex_locals.insert(r.id, i.id);
        let c = self.new_var(Ty::Complex(r.ty));
        Var { id: r.id, ty: c }
    }

    /// `v` held in a new local (of the type its value gives it).
    fn hold(&mut self, v: Value) -> Value {
        let l = self.local("acc_c", None, Some(v));
        self.get(l)
    }

    /// Complex `v` with both parts held in locals.
    fn hold_pair(&mut self, v: Value) -> Value {
        let (re, im) = self.parts(v);
        let (re, im) = (self.hold(re), self.hold(im));
        self.complex(re, im)
    }

    fn zero_like(&mut self, v: Value) -> Value {
        let z = self.lit_float(0.0, None);
        self.unify(z.ty, v.ty, "0");
        z
    }

    /// `a op b` where `a` or `b` (or both) is complex, as `num_complex` computes it.
    pub(super) fn complex_binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        use BinaryOp::*;
        let pair = |s: &mut Self, re, im| s.complex(re, im);
        match (a.im.is_some(), b.im.is_some()) {
            (true, true) => {
                self.unify(a.ty, b.ty, op.symbol());
                let ((ar, ai), (br, bi)) = (self.parts(a), self.parts(b));
                match op {
                    Add | Sub => {
                        let re = self.binary(op, ar, br);
                        let im = self.binary(op, ai, bi);
                        pair(self, re, im)
                    }
                    Mul => {
                        let (x, y) = (self.binary(Mul, ar, br), self.binary(Mul, ai, bi));
                        let re = self.binary(Sub, x, y);
                        let (x, y) = (self.binary(Mul, ar, bi), self.binary(Mul, ai, br));
                        let im = self.binary(Add, x, y);
                        pair(self, re, im)
                    }
                    Div => {
                        let ns = self.norm_sqr(br, bi);
                        let ns = self.hold(ns);
                        let (x, y) = (self.binary(Mul, ar, br), self.binary(Mul, ai, bi));
                        let re = self.binary(Add, x, y);
                        let (x, y) = (self.binary(Mul, ai, br), self.binary(Mul, ar, bi));
                        let im = self.binary(Sub, x, y);
                        let re = self.binary(Div, re, ns);
                        let im = self.binary(Div, im, ns);
                        pair(self, re, im)
                    }
                    Eq | Ne => {
                        let (x, y) = (self.binary(op, ar, br), self.binary(op, ai, bi));
                        self.binary(if op == Eq { And } else { Or }, x, y)
                    }
                    _ => self.complex_refused(op),
                }
            }
            // `z op x` with a real `x`.
            (true, false) => {
                let (ar, ai) = self.parts(a);
                self.unify(ar.ty, b.ty, op.symbol());
                match op {
                    Add | Sub => {
                        let re = self.binary(op, ar, b);
                        pair(self, re, ai)
                    }
                    Mul | Div => {
                        let re = self.binary(op, ar, b);
                        let im = self.binary(op, ai, b);
                        pair(self, re, im)
                    }
                    _ => self.complex_refused(op),
                }
            }
            // `x op z` with a real `x`.
            _ => {
                let (br, bi) = self.parts(b);
                self.unify(a.ty, br.ty, op.symbol());
                match op {
                    Add => {
                        let re = self.binary(Add, a, br);
                        pair(self, re, bi)
                    }
                    Sub => {
                        let re = self.binary(Sub, a, br);
                        let zero = self.zero_like(bi);
                        let im = self.binary(Sub, zero, bi);
                        pair(self, re, im)
                    }
                    Mul => {
                        let re = self.binary(Mul, a, br);
                        let im = self.binary(Mul, a, bi);
                        pair(self, re, im)
                    }
                    Div => {
                        let ns = self.norm_sqr(br, bi);
                        let ns = self.hold(ns);
                        let x = self.binary(Mul, a, br);
                        let re = self.binary(Div, x, ns);
                        let y = self.binary(Mul, a, bi);
                        let y = self.binary(Div, y, ns);
                        let zero = self.zero_like(bi);
                        let im = self.binary(Sub, zero, y);
                        pair(self, re, im)
                    }
                    _ => self.complex_refused(op),
                }
            }
        }
    }

    fn complex_refused(&mut self, op: BinaryOp) -> Value {
        self.fail(format!(
            "`{}` on complex numbers in a kernel (kernels take `+ - * / == !=`)",
            op.symbol()
        ));
        self.lit_bool(false)
    }

    fn norm_sqr(&mut self, re: Value, im: Value) -> Value {
        let x = self.binary(BinaryOp::Mul, re, re);
        let y = self.binary(BinaryOp::Mul, im, im);
        self.binary(BinaryOp::Add, x, y)
    }

    /// `-z`.
    pub(super) fn complex_unary(&mut self, op: UnaryOp, v: Value) -> Value {
        let (re, im) = self.parts(v);
        if op != UnaryOp::Neg {
            self.fail("`!` of a complex number");
            return v;
        }
        let re = self.unary(UnaryOp::Neg, re);
        let im = self.unary(UnaryOp::Neg, im);
        self.complex(re, im)
    }

    /// `z.name(args[1..])`, a method of `num_complex::Complex` (`args[0]` is `z`).
    pub(super) fn complex_method(&mut self, name: &str, args: &[Value]) -> Value {
        let (re, im) = self.parts(args[0]);
        let arg = |s: &mut Self| -> Option<Value> {
            match args.get(1) {
                Some(&t) if t.im.is_none() => {
                    s.unify(t.ty, re.ty, name);
                    Some(t)
                }
                _ => {
                    s.fail(format!("`Complex::{name}` takes one real argument"));
                    None
                }
            }
        };
        match name {
            "conj" => {
                let im = self.unary(UnaryOp::Neg, im);
                self.complex(re, im)
            }
            "norm_sqr" => self.norm_sqr(re, im),
            "norm" => self.math(MathFn::Hypot, &[re, im]),
            "arg" => self.math(MathFn::Atan2, &[im, re]),
            "l1_norm" => {
                let (x, y) = (self.math(MathFn::Abs, &[re]), self.math(MathFn::Abs, &[im]));
                self.binary(BinaryOp::Add, x, y)
            }
            "inv" => {
                let ns = self.norm_sqr(re, im);
                let ns = self.hold(ns);
                let r = self.binary(BinaryOp::Div, re, ns);
                let n = self.unary(UnaryOp::Neg, im);
                let i = self.binary(BinaryOp::Div, n, ns);
                self.complex(r, i)
            }
            "scale" | "unscale" => {
                let Some(t) = arg(self) else { return args[0] };
                let op = if name == "scale" {
                    BinaryOp::Mul
                } else {
                    BinaryOp::Div
                };
                let (r, i) = (self.binary(op, re, t), self.binary(op, im, t));
                self.complex(r, i)
            }
            _ => {
                self.fail(format!(
                    "`Complex::{name}` in a kernel (kernels take `conj`, `norm`, `norm_sqr`, `arg`, `l1_norm`, `inv`, `scale`, `unscale`, `re`, `im` and `+ - * /`)"
                ));
                args[0]
            }
        }
    }

    /// `if c { a } else { b }` of complex values.
    pub(super) fn complex_select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        self.unify(a.ty, b.ty, "if/else arms");
        let ((ar, ai), (br, bi)) = (self.parts(a), self.parts(b));
        let re = self.select(cond, ar, br);
        let im = self.select(cond, ai, bi);
        self.complex(re, im)
    }

    /// `let name = v;` of complex `v`: a local per part.
    pub(super) fn complex_local(&mut self, name: &str, v: Value) -> Var {
        let (re, im) = self.parts(v);
        let r = self.local(&format!("{name}.re"), None, Some(re));
        let i = self.local(&format!("{name}.im"), None, Some(im));
        self.complex_locals.insert(r.id, i.id);
        Var { id: r.id, ty: v.ty }
    }

    /// The value of complex local `v` (`None`: `v` is not one).
    pub(super) fn complex_get(&mut self, v: Var) -> Option<Value> {
        let im = *self.complex_locals.get(&v.id)?;
        let c = self.local_ty[v.id as usize];
        let re = self.push_expr(Expr::Local(v.id), c);
        let ic = self.local_ty[im as usize];
        let i = self.push_expr(Expr::Local(im), ic);
        Some(self.complex(re, i))
    }

    /// `v = value` of complex local `v` (`false`: `v` is not one). A local declared without a
    /// value (`let t;`, the builder's own `if` temporaries) becomes complex at its first
    /// complex assignment.
    pub(super) fn complex_set(&mut self, v: Var, value: Value) -> bool {
        let known = self.complex_locals.get(&v.id).copied();
        let im = match known {
            Some(im) => im,
            None if value.im.is_some() && {
                let t = self.local_ty[v.id as usize];
                self.ty(t) == Ty::Unknown
            } =>
            {
                let Some(c) = self.part_ty(value.ty) else {
                    return false;
                };
                let name = format!("{}.im", self.function.locals[v.id as usize].name);
                let im = self.local(&name, None, None);
                self.unify(im.ty, c, "assignment");
                // The real part's local takes the parts' type; `v.ty` becomes the complex type.
                self.unify(v.ty, value.ty, "assignment");
                self.local_ty[v.id as usize] = c;
                self.complex_locals.insert(v.id, im.id);
                im.id
            }
            None => return false,
        };
        self.unify(v.ty, value.ty, "assignment");
        if value.im.is_none() {
            self.fail("a complex local assigned a value without its imaginary part");
            return true;
        }
        let held = self.hold_pair(value);
        let (re, i) = self.parts(held);
        self.emit(Stmt::Assign {
            local: v.id,
            value: re.expr,
        });
        self.emit(Stmt::Assign {
            local: im,
            value: i.expr,
        });
        true
    }

    /// Whether the elements of `a` (as accessed) are complex numbers.
    pub(super) fn complex_elements(&self, a: ArrayRef) -> Option<Scalar> {
        match (a.elem, a.field, a.parts) {
            (_, None, Some((_, _, t))) => Some(t),
            (Elem::Struct(l), None, None) => l.complex(),
            _ => None,
        }
    }

    /// The real and imaginary parts of complex elements (or complex fields) of `a`.
    fn complex_parts(&mut self, a: ArrayRef) -> (ArrayRef, ArrayRef) {
        match a.parts {
            Some((r, i, t)) => (
                ArrayRef {
                    field: Some((r, t)),
                    parts: None,
                    ..a
                },
                ArrayRef {
                    field: Some((i, t)),
                    parts: None,
                    ..a
                },
            ),
            None => (self.field(a, "re"), self.field(a, "im")),
        }
    }

    /// `a[index]` of an array of complex numbers.
    pub(super) fn complex_load(&mut self, a: ArrayRef, index: Value) -> Value {
        let index = self.hold(index);
        let (fr, fi) = self.complex_parts(a);
        let re = self.load(fr, index);
        let im = self.load(fi, index);
        self.complex(re, im)
    }

    /// `a[index] = value` of an array of complex numbers.
    pub(super) fn complex_store(&mut self, a: ArrayRef, index: Value, value: Value) {
        let t = self.complex_elements(a).unwrap_or(Scalar::F64);
        let c = self.new_var(Ty::Known(t));
        let ct = self.new_var(Ty::Complex(c));
        self.unify(value.ty, ct, "store");
        if value.im.is_none() {
            self.fail("a complex element stored from a value without its imaginary part");
            return;
        }
        let index = self.hold(index);
        let held = self.hold_pair(value);
        let (re, im) = self.parts(held);
        let (fr, fi) = self.complex_parts(a);
        self.store(fr, index, re);
        self.store(fi, index, im);
    }
}
