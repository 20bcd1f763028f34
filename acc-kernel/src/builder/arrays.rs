//! Arrays in the kernel: parameters, fields of struct elements, subslices and windows, and
//! their loads, stores, lengths and atomics.

use super::*;

impl KernelBuilder {
    /// An array in device memory.
    pub fn param_array(&mut self, name: &str, elem: impl Into<Elem>, writable: bool) -> ArrayRef {
        let elem = elem.into();
        let id = self.params.len() as ParamId;
        // 16-bit floats are their bits in device memory (`half`): loads and stores convert.
        let stored = match elem {
            Elem::Scalar(s) => Elem::Scalar(s.storage()),
            e => e,
        };
        self.params.push(Param {
            name: name.to_string(),
            kind: ParamKind::Array {
                elem: stored,
                writable,
            },
        });
        ArrayRef {
            id,
            elem,
            field: None,
            parts: None,
            view: None,
            window: None,
            local: None,
            outer: None,
        }
    }

    /// Private array `v` as an array (`&mut x` of a private array passed to a routine taking a
    /// slice): loads, stores, lengths and subslices of the result are of `v`'s elements.
    pub fn private_as_array(&mut self, v: Var) -> ArrayRef {
        let ty = self.function.locals[v.id as usize].ty;
        ArrayRef {
            id: 0,
            elem: Elem::Scalar(ty),
            field: None,
            parts: None,
            view: None,
            window: None,
            local: Some(v),
            outer: None,
        }
    }

    /// `a` as a window: the parameter holds the array's elements from `start` on (as many as
    /// it has), of an array `len` long. Indices stay the array's; one outside the window is
    /// out of bounds of the parameter.
    pub fn window(&mut self, a: ArrayRef, start: Value, len: Value) -> ArrayRef {
        let s = self.local("present part start", Some(Scalar::USize), Some(start));
        let n = self.local("array length", Some(Scalar::USize), Some(len));
        ArrayRef {
            window: Some((s.id, n.id)),
            ..a
        }
    }

    /// Field `name` of the elements of `a`, an array of structs: loads, stores and atomics on
    /// the result access that field.
    pub fn field(&mut self, a: ArrayRef, name: &str) -> ArrayRef {
        if a.local.is_some() {
            self.errors.push(format!(
                "`.{name}` of an element of a private array passed to a routine"
            ));
            return a;
        }
        let array = self.params[a.id as usize].name.clone();
        match a.elem {
            Elem::Struct(l) => match l.field(name) {
                Some((id, StructField { ty: Some(t), .. })) => return ArrayRef { field: Some((id, *t)), parts: None, ..a },
                Some(_) if a.field.is_none() && a.parts.is_none() => {
                    // A complex field: its parts, recorded beside it (`#[derive(DeviceCopy)]`).
                    match (l.field(&format!("{name}.re")), l.field(&format!("{name}.im"))) {
                        (Some((r, StructField { ty: Some(t), .. })), Some((i, StructField { ty: Some(u), .. }))) if t == u => {
                            return ArrayRef { parts: Some((r, i, *t)), ..a };
                        }
                        _ => self.errors.push(format!("the field `{name}` of `{}` (in `{array}`): kernels access struct fields of the scalar types and complex numbers only", l.name)),
                    }
                }
                Some(_) => self.errors.push(format!("the field `{name}` of `{}` (in `{array}`): kernels access struct fields of the scalar types and complex numbers only", l.name)),
                None => self.errors.push(format!("`{}` (the elements of `{array}`) has no field `{name}`", l.name)),
            },
            Elem::Scalar(t) => self.errors.push(format!("`.{name}` of an element of `{array}`, whose elements are {t}")),
        }
        a
    }

    /// Array field `name` of element `index` of `a`, an array of structs (`boxes[l].nei`,
    /// `p[i].pos`): an array of the field's elements, which loads, stores and atomics index
    /// (`boxes[l].nei[k].number`), both indices bounds-checked.
    pub fn nested(&mut self, a: ArrayRef, index: Value, name: &str) -> ArrayRef {
        let array = self.params[a.id as usize].name.clone();
        let problem = match (a.local, a.outer, a.elem) {
            (Some(_), ..) => Some(format!("`.{name}` of an element of a private array passed to a routine")),
            (_, Some(_), _) => Some(format!("`.{name}` of an element of an array field of `{array}`: kernels index one level of arrays inside struct elements")),
            (_, _, Elem::Scalar(t)) => Some(format!("`.{name}` of an element of `{array}`, whose elements are {t}")),
            (_, _, Elem::Struct(l)) => match l.field(name) {
                Some((id, StructField { array: Some(fa), .. })) => {
                    let elem = match (fa.scalar, fa.layout) {
                        (Some(t), _) => Some(Elem::Scalar(t)),
                        (_, Some(sub)) => Some(Elem::Struct(sub)),
                        _ => None,
                    };
                    if let Some(elem) = elem {
                        self.index_type(index);
                        let index = self.element(a, index);
                        return ArrayRef {
                            elem,
                            field: None,
                            parts: None,
                            view: None,
                            window: None,
                            outer: Some((index, id)),
                            ..a
                        };
                    }
                    Some(format!("the field `{name}` of `{}` (in `{array}`): kernels index arrays of scalars and of `#[derive(DeviceCopy)]` structs inside struct elements, not arrays of arrays", l.name))
                }
                Some(_) => Some(format!("`{name}` of `{}` (in `{array}`) is not an array", l.name)),
                None => Some(format!("`{}` (the elements of `{array}`) has no field `{name}`", l.name)),
            },
        };
        if let Some(p) = problem {
            self.errors.push(p);
        }
        a
    }

    /// The index and field of an access of element `index` (in the whole parameter) of `a`:
    /// of an array field of an element, the pair of indices ([`Expr::NestedIndex`]) and the
    /// field of the nested element ([`crate::nested_field`]).
    fn place(&mut self, a: ArrayRef, index: Value) -> (Handle<Expr>, Option<FieldId>) {
        let Some((outer, array_field)) = a.outer else {
            return (index.expr, a.field.map(|f| f.0));
        };
        let t = self.new_var(Ty::Known(Scalar::USize));
        let pair = self.push_expr(
            Expr::NestedIndex {
                element: outer.expr,
                sub: index.expr,
            },
            t,
        );
        let field = crate::nested_field(array_field, a.field.map(|f| f.0));
        (pair.expr, Some(field))
    }

    /// The type an access of `a` reads or writes.
    fn accessed(&mut self, a: ArrayRef) -> Scalar {
        match (a.elem, a.field) {
            (_, Some((_, t))) | (Elem::Scalar(t), None) => t,
            (Elem::Struct(l), None) if a.parts.is_some() => {
                let array = self.params[a.id as usize].name.clone();
                self.errors.push(format!("a complex field of `{array}` (a `{}` struct) used where kernels take a scalar (atomics on complex numbers are not supported)", l.name));
                Scalar::Bool
            }
            (Elem::Struct(l), None) => {
                let array = self.params[a.id as usize].name.clone();
                self.errors.push(format!("an element of `{array}` (a `{}` struct) as a whole: kernels access its fields one at a time", l.name));
                Scalar::Bool
            }
        }
    }

    /// The subslice `a[start..end]` (a routine argument `&a[start..end]`). Its elements are
    /// the array's from `start` on; an index past its end is reported as out of bounds.
    pub fn subslice(&mut self, a: ArrayRef, start: Value, end: Value) -> ArrayRef {
        self.index_type(start);
        self.index_type(end);
        let (start, len) = match a.view {
            // A subslice of a subslice starts within the outer one.
            Some((s0, _)) => {
                let s0 = self.get(Var {
                    id: s0,
                    ty: self.local_ty[s0 as usize],
                });
                let abs = self.binary(BinaryOp::Add, s0, start);
                let len = self.binary(BinaryOp::Sub, end, start);
                (abs, len)
            }
            None => {
                let len = self.binary(BinaryOp::Sub, end, start);
                (start, len)
            }
        };
        let s = self.local("subslice start", Some(Scalar::USize), Some(start));
        let n = self.local("subslice len", Some(Scalar::USize), Some(len));
        ArrayRef {
            view: Some((s.id, n.id)),
            ..a
        }
    }

    /// The index in the whole parameter of element `index` of `a`.
    fn element(&mut self, a: ArrayRef, index: Value) -> Value {
        let index = self.in_view(a, index);
        let Some((s, _)) = a.window else { return index };
        let start = self.get(Var {
            id: s,
            ty: self.local_ty[s as usize],
        });
        // Below the window: past the parameter's end, so out of bounds.
        let inside = self.binary(BinaryOp::Ge, index, start);
        let rel = self.binary(BinaryOp::Sub, index, start);
        let past = self.lit_int(u64::MAX as i128, Some(Scalar::USize));
        self.select(inside, rel, past)
    }

    /// The index in the whole array of element `index` of `a` (a subslice's start added).
    fn in_view(&mut self, a: ArrayRef, index: Value) -> Value {
        let Some((s, n)) = a.view else { return index };
        let start = self.get(Var {
            id: s,
            ty: self.local_ty[s as usize],
        });
        let len = self.get(Var {
            id: n,
            ty: self.local_ty[n as usize],
        });
        let inside = self.binary(BinaryOp::Lt, index, len);
        let abs = self.binary(BinaryOp::Add, start, index);
        let past = self.lit_int(u64::MAX as i128, Some(Scalar::USize));
        self.select(inside, abs, past)
    }

    /// `array[index]`.
    pub fn load(&mut self, a: ArrayRef, index: Value) -> Value {
        if let Some(v) = a.local {
            self.index_type(index);
            let i = self.in_view(a, index);
            return self.get_elem(v, i);
        }
        if self.complex_elements(a).is_some() {
            return self.complex_load(a, index);
        }
        self.index_type(index);
        let index = self.element(a, index);
        let ty = self.accessed(a);
        let (index, field) = self.place(a, index);
        let t = self.new_var(Ty::Known(ty.storage()));
        let v = self.push_expr(
            Expr::Load {
                array: a.id,
                field,
                index,
            },
            t,
        );
        if ty.is_half() {
            let f = self.half_to_f32(v, ty);
            return self.retype(f, ty);
        }
        v
    }

    /// `array[index] = value`.
    pub fn store(&mut self, a: ArrayRef, index: Value, value: Value) {
        if let Some(v) = a.local {
            self.index_type(index);
            let i = self.in_view(a, index);
            return self.set_elem(v, i, value);
        }
        if self.complex_elements(a).is_some() {
            return self.complex_store(a, index, value);
        }
        self.index_type(index);
        let index = self.element(a, index);
        let ty = self.accessed(a);
        let t = self.new_var(Ty::Known(ty));
        self.unify(value.ty, t, "store");
        let value = if ty.is_half() {
            let f = self.retype(value, Scalar::F32);
            let bits = self.f32_to_half(f, ty);
            self.cast(bits, Scalar::U16)
        } else {
            value
        };
        if !matches!(
            self.params[a.id as usize].kind,
            ParamKind::Array { writable: true, .. }
        ) {
            let name = self.params[a.id as usize].name.clone();
            self.errors
                .push(format!("`{name}` is written but was captured read-only"));
        }
        let (index, field) = self.place(a, index);
        self.emit(Stmt::Store {
            array: a.id,
            field,
            index,
            value: value.expr,
        });
    }

    /// `array.len()` as `usize`.
    pub fn len(&mut self, a: ArrayRef) -> Value {
        if let Some((_, n)) = a.view.or(a.window) {
            return self.get(Var {
                id: n,
                ty: self.local_ty[n as usize],
            });
        }
        if let Some(v) = a.local {
            return self.local_len(v);
        }
        if let Some((_, f)) = a.outer {
            // An array field's length is its type's.
            let n = match self.params[a.id as usize].kind {
                ParamKind::Array {
                    elem: Elem::Struct(l),
                    ..
                } => l
                    .fields
                    .get(f as usize)
                    .and_then(|f| f.array)
                    .map_or(0, |a| a.len),
                _ => 0,
            };
            return self.lit_int(i128::from(n), Some(Scalar::USize));
        }
        let t = self.new_var(Ty::Known(Scalar::USize));
        self.push_expr(Expr::Len(a.id), t)
    }

    /// `array[index] op= value` atomically, keeping the old and/or new value in locals.
    pub fn atomic(
        &mut self,
        a: ArrayRef,
        index: Value,
        op: AtomicOp,
        value: Value,
        old: Option<Var>,
        new: Option<Var>,
    ) {
        if a.local.is_some() {
            self.fail("an atomic operation on a private array passed to a routine (a private array is one thread's: use a plain update)");
            return;
        }
        self.index_type(index);
        let index = self.element(a, index);
        let ty = self.accessed(a);
        if ty.is_half() {
            self.fail(format!("an atomic operation on a `{ty}`: `half` has none"));
        }
        let t = self.new_var(Ty::Known(ty));
        if op != AtomicOp::Read {
            self.unify(value.ty, t, "atomic operand");
        }
        for v in old.iter().chain(new.iter()) {
            self.unify(v.ty, t, "atomic capture");
        }
        let (index, field) = self.place(a, index);
        self.emit(Stmt::Atomic {
            array: a.id,
            field,
            index,
            op,
            value: value.expr,
            old: old.map(|v| v.id),
            new: new.map(|v| v.id),
        });
    }

    /// `array[index] = new` atomically, where `new` is computed from the old value, which it
    /// reads from `old` ([`AtomicOp::Combine`]); keeps the old and/or new value in locals.
    pub fn atomic_combine(
        &mut self,
        a: ArrayRef,
        index: Value,
        old: Var,
        new: Value,
        capture_old: Option<Var>,
        capture_new: Option<Var>,
    ) {
        let ty = self.accessed(a);
        if ty.is_half() {
            self.fail(format!("an atomic operation on a `{ty}`: `half` has none"));
        }
        let t = self.new_var(Ty::Known(ty));
        self.unify(old.ty, t, "atomic old value");
        self.atomic(
            a,
            index,
            AtomicOp::Combine(old.id),
            new,
            capture_old,
            capture_new,
        );
    }
}
