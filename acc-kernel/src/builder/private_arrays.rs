//! Private arrays of a kernel (`let mut t = [0.0; 4]`, `private(t)`, an element-wise
//! reduction's copy): declaring them, their elements, filling them, and loops over them.

use super::{ArrayRef, KernelBuilder, Ty, Value, Var};
use crate::{Expr, Local, LocalId, Scalar, Stmt};

/// Elements up to which [`KernelBuilder::fill`] assigns each element in turn rather than loop.
const FILL_UNROLLED: u32 = 8;

impl KernelBuilder {
    /// A private array local `[elem; len]` (its elements are set by the body).
    pub fn local_array(&mut self, name: &str, elem: Scalar, len: u32) -> Var {
        let t = self.new_var(Ty::Known(elem));
        let id = self.function.locals.len() as LocalId;
        self.function.locals.push(Local {
            name: name.to_string(),
            ty: elem,
            len: Some(len),
        });
        self.local_ty.push(t);
        Var { id, ty: t }
    }

    /// A private array local `[T; len]` declared in the region (`let mut t = [0.0; 4]`), its
    /// element type given or inferred from its use, as a scalar local's is.
    pub fn local_array_of(&mut self, name: &str, elem: Option<Scalar>, len: u32) -> Var {
        let t = self.new_var(elem.map_or(Ty::Unknown, Ty::Known));
        let id = self.function.locals.len() as LocalId;
        self.function.locals.push(Local {
            name: name.to_string(),
            ty: elem.unwrap_or(Scalar::I32),
            len: Some(len),
        });
        self.local_ty.push(t);
        Var { id, ty: t }
    }

    /// The length of private array `v`, as a number.
    pub fn local_len_of(&self, v: Var) -> u32 {
        self.function.locals[v.id as usize].len.unwrap_or(0)
    }

    /// A private array of the same type and length as private array `v`, named `name`.
    pub fn local_array_like(&mut self, name: &str, v: Var) -> Var {
        let (ty, len) = {
            let l = &self.function.locals[v.id as usize];
            (l.ty, l.len.unwrap_or(0))
        };
        self.local_array(name, ty, len)
    }

    /// The length of a private array (`t.len()`), a constant.
    pub fn local_len(&mut self, v: Var) -> Value {
        let len = self.function.locals[v.id as usize].len.unwrap_or(1);
        self.lit_int(i128::from(len), Some(Scalar::USize))
    }

    /// Element `index` of a private array.
    pub fn get_elem(&mut self, v: Var, index: Value) -> Value {
        self.index_type(index);
        self.push_expr(
            Expr::LocalElem {
                local: v.id,
                index: index.expr,
            },
            v.ty,
        )
    }

    /// `v[index] = value` on a private array.
    pub fn set_elem(&mut self, v: Var, index: Value, value: Value) {
        self.index_type(index);
        self.unify(v.ty, value.ty, "array element assignment");
        self.emit(Stmt::AssignElem {
            local: v.id,
            index: index.expr,
            value: value.expr,
        });
    }

    /// `v = [value; len]`: every element of private array `v` set to `value`, evaluated once.
    /// A long array is filled by a sequential loop over its elements rather than one
    /// assignment per element, so that the kernel does not grow with the array (and a GPU
    /// block shares the loop where the array is a gang's, see
    /// [`GangPhases::shared_arrays`](crate::GangPhases::shared_arrays)).
    pub fn fill(&mut self, v: Var, value: Value) {
        let len = self.function.locals[v.id as usize].len.unwrap_or(1);
        let t = self.local("element", None, Some(value));
        if len <= FILL_UNROLLED {
            for k in 0..len {
                let i = self.lit_int(i128::from(k), Some(Scalar::USize));
                let x = self.get(t);
                self.set_elem(v, i, x);
            }
            return;
        }
        let name = format!("{} (fill)", self.function.locals[v.id as usize].name);
        self.for_each_element(&name, len, |b, k| {
            let (i, x) = (b.get(k), b.get(t));
            b.set_elem(v, i, x);
        });
    }

    /// `v`'s elements set from the first ones of array `a` (a `firstprivate` copy's initial
    /// values, 3.3 section 2.5.14): one assignment each for a short array, else a loop, so
    /// that the kernel does not grow with the array.
    pub fn copy_into(&mut self, v: Var, a: ArrayRef) {
        let len = self.function.locals[v.id as usize].len.unwrap_or(0);
        if len <= FILL_UNROLLED {
            for k in 0..len {
                let i = self.lit_int(i128::from(k), Some(Scalar::USize));
                let x = self.load(a, i);
                let i = self.lit_int(i128::from(k), Some(Scalar::USize));
                self.set_elem(v, i, x);
            }
            return;
        }
        let name = format!(
            "{} (firstprivate copy)",
            self.function.locals[v.id as usize].name
        );
        self.for_each_element(&name, len, |b, k| {
            let i = b.get(k);
            let x = b.load(a, i);
            let i = b.get(k);
            b.set_elem(v, i, x);
        });
    }

    /// A sequential loop over `0..len`, `body(b, k)` with `k` the `usize` loop variable: a
    /// loop of the kernel's own (over a private array's elements), not of the source, so the
    /// next nest's source lines stay pending for it.
    pub fn for_each_element(&mut self, name: &str, len: u32, body: impl FnOnce(&mut Self, Var)) {
        let lines = std::mem::take(&mut self.pending_lines);
        let start = self.lit_int(0, Some(Scalar::USize));
        let end = self.lit_int(i128::from(len), Some(Scalar::USize));
        self.for_range(
            name,
            Some(Scalar::USize),
            start,
            end,
            false,
            None,
            &[],
            &[],
            |b, lv| body(b, lv[0]),
        );
        self.pending_lines = lines;
    }
}
