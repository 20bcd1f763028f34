//! Building a [`Kernel`]: the API the expansion of a compute region calls, once per call site
//! and type signature, to describe the region's body.
//!
//! rustc has already type-checked the body (it is also the host twin), so types here follow
//! from the parameters' types and Rust's rules; the one thing left to infer is the type of
//! unsuffixed literals (`2.0`, `1`), which take the type of what they meet, like in Rust, and
//! default to `f64` / `i32`. A mismatch is reported as an [`IrError`]: it means the front end
//! produced IR rustc would not have accepted.

use super::*;
use std::collections::HashMap;

mod arrays;
mod complex;
mod fmod;
pub mod half;
mod methods;
mod private_arrays;
mod reductions;
mod tuples;

pub use super::validate::IrError;

/// What is known of a value's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Known(Scalar),
    /// An unsuffixed integer literal, or something equal to one.
    AnyInt,
    /// An unsuffixed float literal, or something equal to one.
    AnyFloat,
    /// Nothing yet (`let x;` before its first assignment).
    Unknown,
    /// A complex number whose parts have the given type (`builder::complex`).
    Complex(TyVar),
}

/// A type variable (union-find), so a literal's type can be fixed by a later use.
type TyVar = usize;

/// A value under construction: an expression and its type variable.
#[derive(Clone, Copy, Debug)]
pub struct Value {
    /// The expression (of a complex number: its real part).
    expr: Handle<Expr>,
    ty: TyVar,
    /// The imaginary part of a complex number (`builder::complex`).
    im: Option<Handle<Expr>>,
}

/// A local variable under construction.
#[derive(Clone, Copy, Debug)]
pub struct Var {
    id: LocalId,
    ty: TyVar,
}

impl Var {
    /// The local's index.
    pub fn id(self) -> LocalId {
        self.id
    }
}

/// An array parameter under construction.
#[derive(Clone, Copy, Debug)]
pub struct ArrayRef {
    id: ParamId,
    elem: Elem,
    /// For an array of structs: the field accessed, and its type.
    field: Option<(FieldId, Scalar)>,
    /// For an array of structs: the complex field accessed, as the fields of its real and
    /// imaginary parts and their type.
    parts: Option<(FieldId, FieldId, Scalar)>,
    /// A subslice `a[start..start + len]` of the parameter (locals holding `usize`s).
    view: Option<(LocalId, LocalId)>,
    /// The parameter holds only part of the array, from element `start` on, of an array
    /// `len` long (locals holding `usize`s): the present part of an array of which only a
    /// subarray is on the device (3.3 section 2.7.1).
    window: Option<(LocalId, LocalId)>,
    /// A private array of the kernel seen as an array (a routine's slice parameter given the
    /// caller's private array): loads and stores are of its elements, `id` means nothing.
    local: Option<Var>,
    /// An array field of one element of the parameter (`boxes[l].nei`): the element's index
    /// in the parameter and the field; `elem` is then the field's element type.
    outer: Option<(Value, FieldId)>,
}

impl ArrayRef {
    /// The element type.
    pub fn elem(self) -> Elem {
        self.elem
    }
}

/// The largest (`max`) or smallest value of an integer type.
fn int_limit(t: Scalar, max: bool) -> i128 {
    let bits = t.size() * 8;
    match (t.is_signed(), max) {
        (true, true) => (1i128 << (bits - 1)) - 1,
        (true, false) => -(1i128 << (bits - 1)),
        (false, true) => (1i128 << bits) - 1,
        (false, false) => 0,
    }
}

/// Builds a [`Kernel`]: its parameters, locals, expressions and statements. Routines called
/// by the region are inlined: their IR is built by calling their builder function on this one.
pub struct KernelBuilder {
    name: String,
    params: Vec<Param>,
    reductions: Vec<(Var, ReduceOp, ParamId)>,
    /// The private arrays of the construct's element-wise reductions (combined on the host).
    reduction_arrays: Vec<LocalId>,
    unchecked: bool,
    function: Function,
    local_ty: Vec<TyVar>,
    expr_ty: Vec<TyVar>,
    /// Type variables: each points to its parent, or is a root holding a type.
    parent: Vec<TyVar>,
    types: Vec<Ty>,
    blocks: Vec<Block>,
    errors: Vec<String>,
    /// Complex locals: the local of each one's real part, to that of its imaginary part.
    complex_locals: HashMap<LocalId, LocalId>,
    /// `vector_length(n)` of the construct ([`Kernel::vector_length`]).
    vector_length: Option<u32>,
    /// Source lines of the levels of the next loop nest ([`KernelBuilder::at_lines`]).
    pending_lines: Vec<u32>,
    loop_depth: u32,
    /// The innermost variable of each loop nest whose body is being built, innermost last.
    loop_vars: Vec<LocalId>,
    /// The `cache` directives met so far ([`KernelBuilder::cache`]).
    caches: Vec<super::cache_staging::Cache>,
    result: Option<LocalId>,
    /// Scalar parameters of a 16-bit float type (passed as their f32): their type.
    half_params: Vec<(ParamId, Scalar)>,
    /// The elements of the tuple the last routine call returned ([`Self::set_tuple_result`]).
    tuple_result: Option<Vec<Value>>,
}

impl KernelBuilder {
    /// A kernel named `name` (function and location of the region).
    pub fn new(name: impl Into<String>) -> KernelBuilder {
        KernelBuilder {
            name: name.into(),
            params: Vec::new(),
            reductions: Vec::new(),
            reduction_arrays: Vec::new(),
            unchecked: false,
            result: None,
            half_params: Vec::new(),
            tuple_result: None,
            function: Function::default(),
            local_ty: Vec::new(),
            expr_ty: Vec::new(),
            parent: Vec::new(),
            types: Vec::new(),
            blocks: Vec::new(),
            errors: Vec::new(),
            complex_locals: HashMap::new(),
            loop_depth: 0,
            loop_vars: Vec::new(),
            caches: Vec::new(),
            pending_lines: Vec::new(),
            vector_length: None,
        }
    }

    fn new_var(&mut self, t: Ty) -> TyVar {
        self.parent.push(self.parent.len());
        self.types.push(t);
        self.parent.len() - 1
    }

    fn root(&mut self, v: TyVar) -> TyVar {
        let mut r = v;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut c = v;
        while self.parent[c] != r {
            let n = self.parent[c];
            self.parent[c] = r;
            c = n;
        }
        r
    }

    fn ty(&mut self, v: TyVar) -> Ty {
        let r = self.root(v);
        self.types[r]
    }

    /// Makes `a` and `b` the same type, as Rust requires of the operands of `+` or `=`.
    fn unify(&mut self, a: TyVar, b: TyVar, what: &str) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra == rb {
            return;
        }
        let merged = match (self.types[ra], self.types[rb]) {
            (Ty::Unknown, t) | (t, Ty::Unknown) => t,
            (Ty::Known(x), Ty::Known(y)) if x == y => Ty::Known(x),
            (Ty::Known(x), Ty::AnyInt) | (Ty::AnyInt, Ty::Known(x)) if x.is_int() => Ty::Known(x),
            (Ty::Known(x), Ty::AnyFloat) | (Ty::AnyFloat, Ty::Known(x)) if x.is_float() => {
                Ty::Known(x)
            }
            (Ty::AnyInt, Ty::AnyInt) => Ty::AnyInt,
            (Ty::AnyFloat, Ty::AnyFloat) => Ty::AnyFloat,
            (Ty::Complex(x), Ty::Complex(y)) => {
                self.unify(x, y, what);
                Ty::Complex(x)
            }
            (x, y) => {
                self.errors
                    .push(format!("{what}: types {x:?} and {y:?} differ"));
                x
            }
        };
        self.parent[rb] = ra;
        self.types[ra] = merged;
    }

    fn push_expr(&mut self, e: Expr, ty: TyVar) -> Value {
        let h = self.function.exprs.append(e);
        self.expr_ty.push(ty);
        Value {
            expr: h,
            ty,
            im: None,
        }
    }

    fn emit(&mut self, s: Stmt) {
        match self.blocks.last_mut() {
            Some(b) => b.push(s),
            None => self.function.body.push(s),
        }
    }

    fn block(&mut self, f: impl FnOnce(&mut Self)) -> Block {
        self.blocks.push(Vec::new());
        f(self);
        self.blocks.pop().unwrap_or_default()
    }

    /// Records a problem found while building (a routine called with arguments it does not
    /// take, say); [`KernelBuilder::finish`] reports it.
    pub fn fail(&mut self, message: impl Into<String>) {
        self.errors.push(message.into());
    }

    /// A typed or unsuffixed integer literal.
    pub fn lit_int(&mut self, v: i128, ty: Option<Scalar>) -> Value {
        let t = self.new_var(ty.map_or(Ty::AnyInt, Ty::Known));
        self.push_expr(Expr::Literal(Literal::Int(ty.unwrap_or(Scalar::I32), v)), t)
    }

    /// A typed or unsuffixed float literal.
    pub fn lit_float(&mut self, v: f64, ty: Option<Scalar>) -> Value {
        let t = self.new_var(ty.map_or(Ty::AnyFloat, Ty::Known));
        self.push_expr(
            Expr::Literal(Literal::Float(ty.unwrap_or(Scalar::F64), v)),
            t,
        )
    }

    /// A boolean literal.
    pub fn lit_bool(&mut self, v: bool) -> Value {
        let t = self.new_var(Ty::Known(Scalar::Bool));
        self.push_expr(Expr::Literal(Literal::Bool(v)), t)
    }

    /// `let name = init;` (or a declared-later `let name;` when `init` is `None`).
    pub fn local(&mut self, name: &str, ty: Option<Scalar>, init: Option<Value>) -> Var {
        if let Some(v) = init.filter(|v| v.im.is_some()) {
            if let Some(t) = ty {
                self.fail(format!("`{name}` of type {t} given a complex number"));
            }
            return self.complex_local(name, v);
        }
        // Without a type, the initializer or the first assignment gives it.
        let t = self.new_var(ty.map_or(Ty::Unknown, Ty::Known));
        let id = self.function.locals.len() as LocalId;
        self.function.locals.push(Local {
            name: name.to_string(),
            ty: ty.unwrap_or(Scalar::I32),
            len: None,
        });
        self.local_ty.push(t);
        let var = Var { id, ty: t };
        if let Some(v) = init {
            self.set(var, v);
        }
        var
    }

    /// The index of the gang running the code (`acc::gang_idx()`).
    pub fn gang_index(&mut self) -> Value {
        let t = self.new_var(Ty::Known(Scalar::USize));
        self.push_expr(Expr::GangIndex, t)
    }

    /// A fresh, unset local of the same type (and length, for an array) as `of`: a private
    /// copy (3.3 section 2.5.13).
    pub fn local_like(&mut self, name: &str, of: Var) -> Var {
        let l = &self.function.locals[of.id as usize];
        match l.len {
            Some(len) => {
                let elem = l.ty;
                self.local_array(name, elem, len)
            }
            None => {
                let t = self.new_var(Ty::Unknown);
                self.unify(t, of.ty, "private copy");
                let id = self.function.locals.len() as LocalId;
                self.function.locals.push(Local {
                    name: name.to_string(),
                    ty: Scalar::I32,
                    len: None,
                });
                self.local_ty.push(t);
                Var { id, ty: t }
            }
        }
    }

    /// The value of a scalar local.
    pub fn get(&mut self, v: Var) -> Value {
        if let Some(c) = self.complex_get(v) {
            return c;
        }
        self.push_expr(Expr::Local(v.id), v.ty)
    }

    /// `v = value`.
    pub fn set(&mut self, v: Var, value: Value) {
        if self.complex_set(v, value) {
            return;
        }
        self.unify(v.ty, value.ty, "assignment");
        self.emit(Stmt::Assign {
            local: v.id,
            value: value.expr,
        });
    }

    pub(super) fn index_type(&mut self, index: Value) {
        let u = self.new_var(Ty::Known(Scalar::USize));
        self.unify(index.ty, u, "index (usize)");
    }

    /// `-v`, `!v`.
    pub fn unary(&mut self, op: UnaryOp, v: Value) -> Value {
        if v.im.is_some() {
            return self.complex_unary(op, v);
        }
        let t = v.ty;
        self.push_expr(Expr::Unary(op, v.expr), t)
    }

    /// `a op b`. Shifts keep the left type; comparisons give `bool`.
    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        if a.im.is_some() || b.im.is_some() {
            return self.complex_binary(op, a, b);
        }
        let ty = match op {
            BinaryOp::Shl | BinaryOp::Shr => a.ty,
            _ => {
                self.unify(a.ty, b.ty, op.symbol());
                if let Ty::Known(t) = self.ty(a.ty) {
                    if t.is_half() {
                        return self.half_binary(op, a, b, t);
                    }
                    // Rust's `%` on floats: exact, unlike `a - trunc(a / b) * b`.
                    if op == BinaryOp::Rem && matches!(t, Scalar::F32 | Scalar::F64) {
                        return self.float_rem(a, b, t);
                    }
                }
                if op.is_comparison() {
                    self.new_var(Ty::Known(Scalar::Bool))
                } else {
                    a.ty
                }
            }
        };
        self.push_expr(Expr::Binary(op, a.expr, b.expr), ty)
    }

    /// `v as ty`.
    pub fn cast(&mut self, v: Value, ty: Scalar) -> Value {
        let t = self.new_var(Ty::Known(ty));
        self.push_expr(Expr::Cast(v.expr, ty), t)
    }

    /// The bits of `v` as `ty`, a type of the same size: `f32` and `u32`, `f64` and `u64`.
    pub fn bitcast(&mut self, v: Value, ty: Scalar) -> Value {
        let t = self.new_var(Ty::Known(ty));
        self.push_expr(Expr::Bitcast(v.expr, ty), t)
    }

    /// A math function; all arguments share the receiver's type except `powi`'s exponent
    /// (`i32`).
    pub fn math(&mut self, f: MathFn, args: &[Value]) -> Value {
        if args.len() != f.arity() {
            self.errors.push(format!(
                "`{}` takes {} arguments, got {}",
                f.name(),
                f.arity(),
                args.len()
            ));
        }
        for (i, a) in args.iter().enumerate().skip(1) {
            if f == MathFn::Powi || (f == MathFn::Pow && i == 1) {
                let t = self.new_var(Ty::Known(if f == MathFn::Pow {
                    Scalar::U32
                } else {
                    Scalar::I32
                }));
                self.unify(a.ty, t, f.name());
            } else {
                self.unify(args[0].ty, a.ty, f.name());
            }
        }
        let ty = args
            .first()
            .map_or_else(|| self.new_var(Ty::AnyFloat), |a| a.ty);
        self.push_expr(Expr::Math(f, args.iter().map(|a| a.expr).collect()), ty)
    }

    /// `if cond { accept } else { reject }` on values.
    pub fn select(&mut self, cond: Value, accept: Value, reject: Value) -> Value {
        if accept.im.is_some() || reject.im.is_some() {
            return self.complex_select(cond, accept, reject);
        }
        let b = self.new_var(Ty::Known(Scalar::Bool));
        self.unify(cond.ty, b, "condition");
        self.unify(accept.ty, reject.ty, "if/else arms");
        self.push_expr(
            Expr::Select {
                cond: cond.expr,
                accept: accept.expr,
                reject: reject.expr,
            },
            accept.ty,
        )
    }

    /// `if cond { .. } else { .. }` on statements.
    pub fn if_(
        &mut self,
        cond: Value,
        accept: impl FnOnce(&mut Self),
        reject: impl FnOnce(&mut Self),
    ) {
        let b = self.new_var(Ty::Known(Scalar::Bool));
        self.unify(cond.ty, b, "condition");
        let a = self.block(accept);
        let r = self.block(reject);
        self.emit(Stmt::If {
            cond: cond.expr,
            accept: a,
            reject: r,
        });
    }

    /// `loop { .. }`.
    pub fn loop_(&mut self, body: impl FnOnce(&mut Self)) {
        self.loop_depth += 1;
        let b = self.block(body);
        self.loop_depth -= 1;
        self.emit(Stmt::Loop { body: b });
    }

    /// `break` of the innermost loop.
    pub fn break_(&mut self) {
        if self.loop_depth == 0 {
            self.errors.push("`break` outside a loop".into());
        }
        self.emit(Stmt::Break);
    }

    /// `continue` of the innermost loop.
    pub fn continue_(&mut self) {
        if self.loop_depth == 0 {
            self.errors.push("`continue` outside a loop".into());
        }
        self.emit(Stmt::Continue);
    }

    /// A counted loop nest: each level is `(name, type, start, step, trips)`; `body` gets the
    /// loop variables.
    pub fn for_(
        &mut self,
        levels: &[(&str, Option<Scalar>, Value, Value, Value)],
        schedule: Option<Schedule>,
        reductions: &[(Var, ReduceOp)],
        private: &[Var],
        body: impl FnOnce(&mut Self, &[Var]),
    ) {
        self.for_tiled(levels, &[], schedule, reductions, private, body)
    }

    /// `acc::cache!(a[start..start + len])` at the top of the body being built (3.3 section
    /// 2.10): the GPU backends may stage that window of `a` in shared memory for the loop
    /// ([`cache_staging::stage`]). Outside a loop, or on a subslice or a field, it
    /// stays a hint.
    pub fn cache(&mut self, a: ArrayRef, start: Value, len: u32, line: u32) {
        self.index_type(start);
        let Some(&loop_var) = self.loop_vars.last() else {
            return;
        };
        let outcome = if a.local.is_some() {
            super::cache_staging::CacheOutcome::Hint("it names a private array".into())
        } else if a.view.is_some() || a.window.is_some() || a.field.is_some() {
            super::cache_staging::CacheOutcome::Hint(
                "it names a subslice, a field or a partly present array".into(),
            )
        } else {
            super::cache_staging::CacheOutcome::Pending
        };
        self.caches.push(super::cache_staging::Cache {
            loop_var,
            array: a.id,
            start: start.expr,
            len,
            line,
            outcome,
        });
    }

    /// `vector_length(n)` of the compute construct, a constant ([`Kernel::vector_length`]).
    pub fn set_vector_length(&mut self, n: u32) {
        self.vector_length = Some(n);
    }

    /// The source lines of the levels of the next loop nest this builder makes, outermost
    /// first (`ACC_INFO` reports loops by line).
    pub fn at_lines(&mut self, lines: &[u32]) {
        self.pending_lines = lines.to_vec();
    }

    /// [`KernelBuilder::for_`] with `tile` sizes (3.3 section 2.9.8), as `tile(..)` lists
    /// them: the innermost level's first, `None` for `*` (the backend's choice, see
    /// [`tile::default_sizes`]).
    pub fn for_tiled(
        &mut self,
        levels: &[(&str, Option<Scalar>, Value, Value, Value)],
        tile: &[Option<u32>],
        schedule: Option<Schedule>,
        reductions: &[(Var, ReduceOp)],
        private: &[Var],
        body: impl FnOnce(&mut Self, &[Var]),
    ) {
        if !tile.is_empty() && tile.len() != levels.len() {
            self.fail(format!(
                "`tile` with {} sizes on a nest of {} loops",
                tile.len(),
                levels.len()
            ));
        }
        let defaults = super::tile::default_sizes(tile.len());
        let tile: Vec<u32> = tile
            .iter()
            .zip(defaults)
            .rev()
            .map(|(s, d)| s.unwrap_or(d))
            .collect();
        let mut ir_levels = Vec::new();
        let mut vars = Vec::new();
        for &(name, ty, start, step, trips) in levels {
            let var = self.local(name, ty, None);
            self.unify(start.ty, var.ty, "loop start");
            self.unify(step.ty, var.ty, "loop step");
            let trips = self.as_usize(trips);
            ir_levels.push(LoopLevel {
                var: var.id,
                start: start.expr,
                step: step.expr,
                trips: trips.expr,
                line: self
                    .pending_lines
                    .get(ir_levels.len())
                    .copied()
                    .unwrap_or(0),
            });
            vars.push(var);
        }
        self.pending_lines.clear();
        self.loop_depth += 1;
        if let Some(v) = vars.last() {
            self.loop_vars.push(v.id);
        }
        let b = self.block(|fb| body(fb, &vars));
        if !vars.is_empty() {
            self.loop_vars.pop();
        }
        self.loop_depth -= 1;
        // A complex local is two: both parts are private (and reduce, `loop_reductions`).
        let ir_reductions = self.loop_reductions(reductions);
        let mut ir_private = Vec::new();
        for v in private {
            ir_private.push(v.id);
            ir_private.extend(self.complex_locals.get(&v.id).copied());
        }
        self.emit(Stmt::For {
            levels: ir_levels,
            schedule,
            reductions: ir_reductions,
            private: ir_private,
            tile,
            body: b,
        });
        // A 16-bit float's partial results combine in f32; the combined value is rounded to
        // its type, so that the local again holds a value of it.
        for &(v, _) in reductions {
            self.round_half_reduction(v);
        }
    }

    /// `v` as `usize` (unchanged when it already is).
    fn as_usize(&mut self, v: Value) -> Value {
        match self.ty(v.ty) {
            Ty::Known(Scalar::USize) => v,
            Ty::AnyInt | Ty::Unknown => {
                let u = self.new_var(Ty::Known(Scalar::USize));
                self.unify(v.ty, u, "trip count");
                v
            }
            _ => self.cast(v, Scalar::USize),
        }
    }

    /// `for name in start..end` (`..=end` when `inclusive`) with step 1: the trip count is
    /// `end - start` (plus one), or 0 when the range is empty.
    #[allow(clippy::too_many_arguments)]
    pub fn for_range(
        &mut self,
        name: &str,
        ty: Option<Scalar>,
        start: Value,
        end: Value,
        inclusive: bool,
        schedule: Option<Schedule>,
        reductions: &[(Var, ReduceOp)],
        private: &[Var],
        body: impl FnOnce(&mut Self, &[Var]),
    ) {
        let (start, step, trips) = self.range_space(start, end, inclusive, ty);
        self.for_(
            &[(name, ty, start, step, trips)],
            schedule,
            reductions,
            private,
            body,
        );
    }

    /// The start, step (1) and trip count of `start..end` (`..=end` when `inclusive`), for a
    /// level of [`KernelBuilder::for_`]; the trip count is 0 for an empty range.
    pub fn range_space(
        &mut self,
        start: Value,
        end: Value,
        inclusive: bool,
        ty: Option<Scalar>,
    ) -> (Value, Value, Value) {
        let s = self.local("__start", ty, Some(start));
        let e = self.local("__end", ty, Some(end));
        self.unify(s.ty, e.ty, "range bounds");
        let (sv, ev) = (self.get(s), self.get(e));
        let nonempty = self.binary(
            if inclusive {
                BinaryOp::Le
            } else {
                BinaryOp::Lt
            },
            sv,
            ev,
        );
        let (sv, ev) = (self.get(s), self.get(e));
        let span = self.binary(BinaryOp::Sub, ev, sv);
        let mut count = self.cast(span, Scalar::USize);
        if inclusive {
            let one = self.lit_int(1, Some(Scalar::USize));
            count = self.binary(BinaryOp::Add, count, one);
        }
        let zero = self.lit_int(0, Some(Scalar::USize));
        let trips = self.select(nonempty, count, zero);
        let step = self.lit_int(1, None);
        self.unify(step.ty, s.ty, "loop step");
        let sv = self.get(s);
        (sv, step, trips)
    }

    /// The space of `.rev()` applied to `(start, step, trips)`: the last value first, stepping
    /// back (in the loop variable's wrapping arithmetic).
    pub fn space_rev(&mut self, start: Value, step: Value, trips: Value) -> (Value, Value, Value) {
        let t = self.local("__trips", Some(Scalar::USize), Some(trips));
        let tv = self.get(t);
        let one = self.lit_int(1, Some(Scalar::USize));
        let zero = self.lit_int(0, Some(Scalar::USize));
        let empty = self.binary(BinaryOp::Eq, tv, zero);
        let tv = self.get(t);
        let one2 = self.lit_int(1, Some(Scalar::USize));
        let last_k = self.binary(BinaryOp::Sub, tv, one);
        let zero2 = self.lit_int(0, Some(Scalar::USize));
        let last_k = self.select(empty, zero2, last_k);
        let _ = one2;
        // start + last_k * step, in the loop variable's type.
        let st = self.local("__step", None, Some(step));
        let stv = self.get(st);
        let k = self.cast_like(last_k, stv);
        let stv = self.get(st);
        let off = self.binary(BinaryOp::Mul, k, stv);
        let new_start = self.binary(BinaryOp::Add, start, off);
        let stv = self.get(st);
        let zero_like = self.lit_int(0, None);
        let neg = self.binary(BinaryOp::Sub, zero_like, stv);
        let tv = self.get(t);
        (new_start, neg, tv)
    }

    /// The space of `.step_by(s)` applied to `(start, step, trips)`.
    pub fn space_step_by(
        &mut self,
        start: Value,
        step: Value,
        trips: Value,
        s: Value,
    ) -> (Value, Value, Value) {
        let u = self.new_var(Ty::Known(Scalar::USize));
        self.unify(s.ty, u, "step_by (usize)");
        let sv = self.local("__by", Some(Scalar::USize), Some(s));
        let by = self.get(sv);
        let one = self.lit_int(1, Some(Scalar::USize));
        let by_minus = self.binary(BinaryOp::Sub, by, one);
        let sum = self.binary(BinaryOp::Add, trips, by_minus);
        let by = self.get(sv);
        let new_trips = self.binary(BinaryOp::Div, sum, by);
        let by = self.get(sv);
        let by_like = self.cast_like(by, step);
        let new_step = self.binary(BinaryOp::Mul, step, by_like);
        (start, new_step, new_trips)
    }

    /// `v` cast to the type of `like` (when that is known, else left for unification).
    fn cast_like(&mut self, v: Value, like: Value) -> Value {
        match self.ty(like.ty) {
            Ty::Known(t) if self.ty(v.ty) != Ty::Known(t) => self.cast(v, t),
            Ty::Known(_) => v,
            _ => {
                self.unify(v.ty, like.ty, "loop step");
                v
            }
        }
    }

    /// Defaults unconstrained literal types (`i32`, `f64`) and writes every local's and
    /// literal's resolved type.
    fn resolve_types(&mut self) {
        for i in 0..self.local_ty.len() {
            // A 16-bit float's value is held as its f32.
            let t = match self.resolved(self.local_ty[i]) {
                t if t.is_half() => Scalar::F32,
                t => t,
            };
            self.function.locals[i].ty = t;
        }
        for (i, tv) in self.expr_ty.clone().into_iter().enumerate() {
            // A 16-bit float literal (a reduction's identity) is its f32, which is exact.
            let t = match self.resolved(tv) {
                t if t.is_half() => Scalar::F32,
                t => t,
            };
            let h = Handle::<Expr>::new(i);
            if let Some(Expr::Literal(l)) = self.function.exprs.items.get_mut(h.index()) {
                *l = match *l {
                    Literal::Int(_, v) if t.is_float() => Literal::Float(t, v as f64),
                    Literal::Int(_, v) => Literal::Int(t, v),
                    Literal::Float(_, v) => Literal::Float(t, v),
                    b => b,
                };
            }
        }
    }

    fn resolved(&mut self, v: TyVar) -> Scalar {
        match self.ty(v) {
            Ty::Known(s) => s,
            Ty::AnyInt | Ty::Unknown => Scalar::I32,
            Ty::AnyFloat => Scalar::F64,
            // Only after a type error (a complex value where a real one goes).
            Ty::Complex(_) => Scalar::F64,
        }
    }

    /// Turns bounds checks off (`unchecked` on the construct).
    pub fn set_unchecked(&mut self, unchecked: bool) {
        self.unchecked = unchecked;
    }

    /// A scalar captured by value.
    pub fn param_scalar(&mut self, name: &str, ty: Scalar) -> Value {
        let id = self.params.len() as ParamId;
        self.params.push(Param {
            name: name.to_string(),
            // A 16-bit float arrives as the f32 it stands for.
            kind: ParamKind::Scalar(if ty.is_half() { Scalar::F32 } else { ty }),
        });
        if ty.is_half() {
            self.half_params.push((id, ty));
        }
        let t = self.new_var(Ty::Known(ty));
        self.push_expr(Expr::Param(id), t)
    }

    /// The type of parameter `id` (an array's element type); a 16-bit float scalar's own
    /// type, though it arrives as its `f32`.
    pub fn param_type(&self, id: ParamId) -> Scalar {
        if let Some(&(_, half)) = self.half_params.iter().find(|p| p.0 == id) {
            return half;
        }
        match self.params.get(id as usize).map(|p| &p.kind) {
            Some(ParamKind::Scalar(s))
            | Some(ParamKind::Array {
                elem: Elem::Scalar(s),
                ..
            }) => *s,
            Some(ParamKind::Array {
                elem: Elem::Struct(_),
                ..
            })
            | None => Scalar::Bool,
        }
    }

    /// The value of scalar parameter `id` again (a fresh expression, for another use).
    pub fn param_scalar_value(&mut self, id: ParamId) -> Value {
        let half = self.half_params.iter().find(|p| p.0 == id).map(|p| p.1);
        let ty = match self.params.get(id as usize).map(|p| &p.kind) {
            Some(ParamKind::Scalar(s)) => half.unwrap_or(*s),
            _ => {
                self.errors.push(format!("parameter {id} is not a scalar"));
                Scalar::Bool
            }
        };
        let t = self.new_var(Ty::Known(ty));
        self.push_expr(Expr::Param(id), t)
    }

    /// The region's value: `v`, as the body's last statement computes it.
    pub fn result(&mut self, v: Value) {
        if v.im.is_some() {
            self.fail("a region whose value is a complex number: make the region's value its parts (`z.re`, `z.im`) or write it to an array");
        }
        if let Ty::Known(t) = self.ty(v.ty) {
            if t.is_half() {
                self.fail(format!(
                    "a region whose value is a `{t}`: make it the `f32` (`.to_f32()`)"
                ));
            }
        }
        let r = self.local("region value", None, Some(v));
        self.result = Some(r.id);
    }

    /// The finished, validated kernel.
    pub fn finish(mut self) -> Result<Kernel, IrError> {
        self.resolve_types();
        if !self.errors.is_empty() {
            return Err(IrError {
                message: format!("kernel `{}`: {}", self.name, self.errors.join("; ")),
            });
        }
        let kernel = Kernel {
            name: self.name,
            params: self.params,
            function: self.function,
            reductions: self
                .reductions
                .into_iter()
                .map(|(v, op, p)| (Reduction { local: v.id, op }, p))
                .collect(),
            unchecked: self.unchecked,
            result: self.result,
            vector_length: self.vector_length,
            auto_tiled: Vec::new(),
            kept_in_registers: Vec::new(),
            caches: self.caches,
        };
        // The passes run per target, in the plan (`plan::prepare`).
        super::validate::validate(&kernel)?;
        Ok(kernel)
    }
}
