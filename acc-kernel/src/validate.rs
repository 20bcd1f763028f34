//! Checks a [`Kernel`] is well formed, separately from how it was built (like naga's
//! validator): handles in range, every expression typed consistently, parameters used as
//! what they are, `break`/`continue` inside loops.

use super::*;

/// Validates `k`; the error says what and where.
pub fn validate(k: &Kernel) -> Result<(), IrError> {
    expr_types(k).map(|_| ())
}

/// Validates `k` and returns the type of each of its function's expressions, by handle index
/// (what a backend needs to lower them).
pub fn expr_types(k: &Kernel) -> Result<Vec<Scalar>, IrError> {
    let mut v = Validator {
        k,
        f: &k.function,
        errors: Vec::new(),
        types: Vec::new(),
    };
    v.function();
    for (red, p) in &k.reductions {
        if k.function.locals.get(red.local as usize).is_none() {
            v.errors
                .push(format!("reduction of undefined local {}", red.local));
        }
        v.complex_pair(*red);
        // A scalar reduces into a scalar parameter, an array local (element-wise) into an
        // array parameter of the same length.
        let array = k
            .function
            .locals
            .get(red.local as usize)
            .is_some_and(|l| l.len.is_some());
        match (k.params.get(*p as usize).map(|p| &p.kind), array) {
            (Some(ParamKind::Scalar(_)), false) | (Some(ParamKind::Array { .. }), true) => {}
            _ => v.errors.push(format!(
                "reduction of local {} into parameter {p}, which is not of its shape",
                red.local
            )),
        }
    }
    if v.errors.is_empty() {
        Ok(v.types
            .into_iter()
            .map(|t| t.unwrap_or(Scalar::Bool))
            .collect())
    } else {
        Err(IrError {
            message: format!("kernel `{}`: {}", k.name, v.errors.join("; ")),
        })
    }
}

struct Validator<'a> {
    k: &'a Kernel,
    f: &'a Function,
    errors: Vec<String>,
    /// The type of each expression, computed in order (operands come first in the arena).
    types: Vec<Option<Scalar>>,
}

impl Validator<'_> {
    /// A complex product reduces a float local and the next, of the same type.
    fn complex_pair(&mut self, r: Reduction) {
        if r.op != ReduceOp::ComplexMul {
            return;
        }
        let ty = |l: LocalId| {
            self.f
                .locals
                .get(l as usize)
                .filter(|l| l.len.is_none())
                .map(|l| l.ty)
        };
        match (ty(r.local), ty(r.local + 1)) {
            (Some(a), Some(b)) if a == b && a.is_float() => {}
            _ => self.errors.push(format!(
                "complex product reduction of local {}: it and the next are not float scalars of one type",
                r.local
            )),
        }
    }

    fn err(&mut self, m: String) {
        self.errors.push(m);
    }

    fn function(&mut self) {
        for (h, e) in self.f.exprs.iter() {
            let t = self.expr_type(h, e);
            self.types.push(t);
        }
        let body = &self.f.body;
        self.block(body, 0);
    }

    fn operand(&mut self, at: Handle<Expr>, h: Handle<Expr>) -> Option<Scalar> {
        if h.index() >= at.index() {
            self.err(format!("{at:?} uses {h:?}, which does not come before it"));
            return None;
        }
        self.types[h.index()]
    }

    fn local(&mut self, id: LocalId) -> Option<&Local> {
        let l = self.f.locals.get(id as usize);
        if l.is_none() {
            self.errors.push(format!("undefined local {id}"));
        }
        l
    }

    /// The type an access of `id` (and `field`) touches.
    fn array(&mut self, id: ParamId, field: Option<FieldId>) -> Option<Scalar> {
        if let Some(a) = self.k.access(id, field) {
            return Some(a.ty);
        }
        match (self.k.params.get(id as usize).map(|p| &p.kind), field) {
            (
                Some(ParamKind::Array {
                    elem: Elem::Struct(l),
                    ..
                }),
                None,
            ) => self.err(format!(
                "the whole element of array {id} (of `{}` structs) accessed as a scalar",
                l.name
            )),
            (
                Some(ParamKind::Array {
                    elem: Elem::Struct(l),
                    ..
                }),
                Some(f),
            ) => self.err(format!(
                "field {f} of `{}`, which kernels cannot access",
                l.name
            )),
            (
                Some(ParamKind::Array {
                    elem: Elem::Scalar(_),
                    ..
                }),
                Some(f),
            ) => self.err(format!(
                "field {f} of array {id}, whose elements are scalars"
            )),
            _ => self.err(format!("parameter {id} is not an array")),
        }
        None
    }

    /// Checks `id` is an array parameter.
    fn is_array(&mut self, id: ParamId) {
        if !matches!(
            self.k.params.get(id as usize).map(|p| &p.kind),
            Some(ParamKind::Array { .. })
        ) {
            self.err(format!("parameter {id} is not an array"));
        }
    }

    fn expr_type(&mut self, h: Handle<Expr>, e: &Expr) -> Option<Scalar> {
        Some(match e {
            Expr::Literal(l) => l.ty(),
            Expr::Param(p) => match self.k.params.get(*p as usize).map(|p| &p.kind) {
                Some(ParamKind::Scalar(s)) => *s,
                _ => {
                    self.err(format!("{h:?}: parameter {p} is not a scalar"));
                    return None;
                }
            },
            Expr::Local(l) => {
                let local = self.local(*l)?;
                if local.len.is_some() {
                    let name = local.name.clone();
                    self.err(format!("{h:?}: `{name}` is an array; read an element"));
                }
                self.f.locals[*l as usize].ty
            }
            Expr::LocalElem { local, index } => {
                self.index(h, *index);
                let l = self.local(*local)?;
                if l.len.is_none() {
                    let name = l.name.clone();
                    self.err(format!("{h:?}: `{name}` is not an array"));
                }
                self.f.locals[*local as usize].ty
            }
            Expr::Load {
                array,
                field,
                index,
            } => {
                self.index(h, *index);
                self.array(*array, *field)?
            }
            Expr::Len(a) => {
                self.is_array(*a);
                Scalar::USize
            }
            Expr::GangIndex => Scalar::USize,
            // Its value as a number is `element`'s.
            Expr::NestedIndex { element, sub } => {
                self.index(h, *element);
                self.index(h, *sub);
                self.operand(h, *element)?
            }
            Expr::Unary(op, a) => {
                let t = self.operand(h, *a)?;
                match (op, t) {
                    (UnaryOp::Neg, t) if t.is_float() || t.is_signed() => t,
                    (UnaryOp::Not, t) if t == Scalar::Bool || t.is_int() => t,
                    _ => {
                        self.err(format!("{h:?}: {op:?} does not apply to {t}"));
                        t
                    }
                }
            }
            Expr::Binary(op, a, b) => {
                let (ta, tb) = (self.operand(h, *a)?, self.operand(h, *b)?);
                let shift = matches!(op, BinaryOp::Shl | BinaryOp::Shr);
                if !shift && ta != tb {
                    self.err(format!("{h:?}: `{}` on {ta} and {tb}", op.symbol()));
                }
                if shift && !(ta.is_int() && tb.is_int()) {
                    self.err(format!("{h:?}: shift of {ta} by {tb}"));
                }
                let ok = match op {
                    BinaryOp::And | BinaryOp::Or => ta == Scalar::Bool,
                    BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                        ta.is_int() || ta == Scalar::Bool
                    }
                    BinaryOp::Eq | BinaryOp::Ne => true,
                    BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => ta != Scalar::Bool,
                    _ => ta != Scalar::Bool,
                };
                if !ok {
                    self.err(format!("{h:?}: `{}` does not apply to {ta}", op.symbol()));
                }
                if op.is_comparison() {
                    Scalar::Bool
                } else {
                    ta
                }
            }
            Expr::Select {
                cond,
                accept,
                reject,
            } => {
                let c = self.operand(h, *cond)?;
                let (a, r) = (self.operand(h, *accept)?, self.operand(h, *reject)?);
                if c != Scalar::Bool || a != r {
                    self.err(format!("{h:?}: select on {c} between {a} and {r}"));
                }
                a
            }
            Expr::Cast(a, t) => {
                self.operand(h, *a)?;
                *t
            }
            Expr::Bitcast(a, t) => {
                let from = self.operand(h, *a)?;
                let same_bits = |x: Scalar, y: Scalar| {
                    matches!(
                        (x, y),
                        (Scalar::F32, Scalar::U32) | (Scalar::F64, Scalar::U64)
                    )
                };
                if !same_bits(from, *t) && !same_bits(*t, from) {
                    self.err(format!("{h:?}: bitcast from {from} to {t}"));
                }
                *t
            }
            Expr::Math(f, args) => {
                if args.len() != f.arity() {
                    self.err(format!(
                        "{h:?}: `{}` with {} arguments",
                        f.name(),
                        args.len()
                    ));
                }
                let ts: Vec<Option<Scalar>> = args.iter().map(|a| self.operand(h, *a)).collect();
                let t = ts.first().copied().flatten()?;
                if (f.float_only() && !t.is_float()) || (f.u32_only() && t != Scalar::U32) {
                    self.err(format!("{h:?}: `{}` on {t}", f.name()));
                }
                t
            }
        })
    }

    fn index(&mut self, at: Handle<Expr>, index: Handle<Expr>) {
        if let Some(t) = self.operand(at, index) {
            // (`u32` in a kernel narrowed to 32-bit indices, see `narrow`.)
            if t != Scalar::USize && t != Scalar::U32 {
                self.err(format!("{at:?}: index of type {t}, not usize"));
            }
        }
    }

    fn type_of(&mut self, h: Handle<Expr>) -> Option<Scalar> {
        match self.types.get(h.index()) {
            Some(t) => *t,
            None => {
                self.err(format!("statement uses undefined expression {h:?}"));
                None
            }
        }
    }

    /// An index of a statement: `usize` (`u32` in a kernel narrowed to 32-bit indices).
    fn expect_index(&mut self, h: Handle<Expr>) {
        if let Some(t) = self.type_of(h) {
            if t != Scalar::USize && t != Scalar::U32 {
                self.err(format!("index: {t}, expected usize"));
            }
        }
    }

    fn expect(&mut self, h: Handle<Expr>, want: Scalar, what: &str) {
        if let Some(t) = self.type_of(h) {
            if t != want {
                self.err(format!("{what}: {t}, expected {want}"));
            }
        }
    }

    fn block(&mut self, b: &[Stmt], loops: u32) {
        for s in b {
            self.stmt(s, loops);
        }
    }

    fn stmt(&mut self, s: &Stmt, loops: u32) {
        match s {
            Stmt::Assign { local, value } => {
                if let Some(l) = self.local(*local).cloned() {
                    if l.len.is_some() {
                        self.err(format!("assignment to array `{}` as a whole", l.name));
                    }
                    self.expect(*value, l.ty, &format!("assignment to `{}`", l.name));
                }
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } => {
                if let Some(l) = self.local(*local).cloned() {
                    self.expect_index(*index);
                    self.expect(*value, l.ty, &format!("assignment to `{}[..]`", l.name));
                }
            }
            Stmt::Store {
                array,
                field,
                index,
                value,
            } => {
                if let Some(elem) = self.array(*array, *field) {
                    if matches!(
                        self.k.params[*array as usize].kind,
                        ParamKind::Array {
                            writable: false,
                            ..
                        }
                    ) {
                        let n = self.k.params[*array as usize].name.clone();
                        self.err(format!("store to read-only `{n}`"));
                    }
                    self.expect_index(*index);
                    self.expect(*value, elem, "stored value");
                }
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                self.expect(*cond, Scalar::Bool, "condition");
                self.block(accept, loops);
                self.block(reject, loops);
            }
            Stmt::For {
                levels,
                reductions,
                private,
                tile,
                body,
                ..
            } => {
                if !tile.is_empty() && tile.len() != levels.len() {
                    self.err(format!(
                        "a nest of {} loops with {} tile sizes",
                        levels.len(),
                        tile.len()
                    ));
                }
                if tile.contains(&0) {
                    self.err("a tile size of 0".into());
                }
                for l in levels {
                    if let Some(local) = self.local(l.var).cloned() {
                        self.expect(l.start, local.ty, "loop start");
                        self.expect(l.step, local.ty, "loop step");
                    }
                    // (`u32` in a kernel narrowed to 32-bit indices, see `narrow`.)
                    if let Some(t) = self.type_of(l.trips) {
                        if t != Scalar::USize && t != Scalar::U32 {
                            self.err(format!("trip count: {t}, expected usize"));
                        }
                    }
                }
                for id in reductions
                    .iter()
                    .map(|r| r.local)
                    .chain(private.iter().copied())
                {
                    self.local(id);
                }
                for r in reductions {
                    self.complex_pair(*r);
                }
                self.block(body, loops + 1);
            }
            Stmt::Loop { body } => self.block(body, loops + 1),
            Stmt::Break | Stmt::Continue if loops == 0 => {
                self.err("`break`/`continue` outside a loop".into())
            }
            Stmt::Break | Stmt::Continue => {}
            Stmt::Atomic {
                array,
                field,
                index,
                value,
                old,
                new,
                op,
            } => {
                if let Some(elem) = self.array(*array, *field) {
                    self.expect_index(*index);
                    if *op != AtomicOp::Read {
                        self.expect(*value, elem, "atomic operand");
                    }
                    for l in old
                        .iter()
                        .chain(new.iter())
                        .chain(op.combine_local().iter())
                    {
                        if let Some(local) = self.local(*l).cloned() {
                            if local.ty != elem {
                                self.err(format!(
                                    "atomic capture into `{}` of type {}",
                                    local.name, local.ty
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A problem found while building or validating IR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrError {
    /// What is wrong, and where in the region.
    pub message: String,
}

impl std::fmt::Display for IrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for IrError {}
