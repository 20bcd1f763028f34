//! A `DeviceCopy` struct value in a kernel (`let p = ps[i]; p.x + p.m`, `ps[j] = p`): one local
//! per scalar field, loaded together, read and written by field, stored back field by field.

use acc_core::ir::builder::{ArrayRef, KernelBuilder, Value, Var};
use acc_core::ir::{Elem, Scalar};

/// The fields of a struct value, each in a local of the kernel; a complex number
/// (`num_complex::Complex`) is one complex local, which is also used as a whole (`p * q`), and
/// so is a scalar element loaded by [`StructValue::load_any`].
/// A clone names the same locals (a routine's argument, copied by the routine).
#[derive(Clone)]
pub struct StructValue {
    name: String,
    fields: Vec<(&'static str, Var)>,
    complex: Option<Var>,
}

impl StructValue {
    /// Element `i` of `a`, an array of structs, as a value named `name` (each scalar field
    /// loaded into its own local). Records the kernel's error when `a` holds scalars.
    pub fn load(b: &mut KernelBuilder, a: ArrayRef, i: Value, name: &str) -> StructValue {
        let mut fields = Vec::new();
        if matches!(a.elem(), Elem::Struct(l) if l.complex().is_some()) {
            let v = b.load(a, i);
            let var = b.local(name, None, Some(v));
            return StructValue {
                name: name.to_string(),
                fields,
                complex: Some(var),
            };
        }
        match a.elem() {
            Elem::Struct(layout) => {
                for f in layout.fields {
                    // A complex field is loaded whole (its parts, recorded beside it, are
                    // not fields of their own).
                    let complex = f.ty.is_none()
                        && layout
                            .field(&format!("{}.re", f.name))
                            .is_some_and(|(_, p)| p.ty.is_some());
                    if (f.ty.is_none() && !complex) || f.name.contains('.') {
                        continue;
                    }
                    let fa = b.field(a, f.name);
                    let v = b.load(fa, i);
                    let var = b.local(&format!("{name}.{}", f.name), None, Some(v));
                    fields.push((f.name, var));
                }
            }
            Elem::Scalar(t) => b.fail(format!(
                "`{name}` is used with fields, but it is an element of an array of {t}"
            )),
        }
        StructValue {
            name: name.to_string(),
            fields,
            complex: None,
        }
    }

    /// Element `i` of `a` as a value named `name` whatever its type: a struct's fields as
    /// [`StructValue::load`] loads them, a scalar or complex element whole (`let p = a[i];`
    /// that the code only stores whole, `b[j] = p`, or uses as a value).
    pub fn load_any(b: &mut KernelBuilder, a: ArrayRef, i: Value, name: &str) -> StructValue {
        if whole_struct(&a) {
            return StructValue::load(b, a, i, name);
        }
        let v = b.load(a, i);
        let var = b.local(name, None, Some(v));
        StructValue {
            name: name.to_string(),
            fields: Vec::new(),
            complex: Some(var),
        }
    }

    /// A copy in locals of its own, named `name`: a routine's parameter passed by value,
    /// whose changes the caller's value does not see.
    pub fn copy(&self, b: &mut KernelBuilder, name: &str) -> StructValue {
        let complex = self.complex.map(|v| {
            let z = b.get(v);
            b.local(name, None, Some(z))
        });
        let fields = self
            .fields
            .iter()
            .map(|(f, v)| {
                let x = b.get(*v);
                (*f, b.local(&format!("{name}.{f}"), None, Some(x)))
            })
            .collect();
        StructValue {
            name: name.to_string(),
            fields,
            complex,
        }
    }

    /// `p` used as a whole: a complex number's value (anything else is the kernel's error).
    pub fn value(&self, b: &mut KernelBuilder) -> Value {
        match self.complex {
            Some(v) => b.get(v),
            None => {
                b.fail(format!("the struct value `{}` used as a whole (its fields, and `a[i] = {}`, are supported)", self.name, self.name));
                b.lit_int(0, Some(Scalar::I32))
            }
        }
    }

    /// `p = value` (a complex number; anything else is the kernel's error).
    pub fn assign(&self, b: &mut KernelBuilder, value: Value) {
        match self.complex {
            Some(v) => b.set(v, value),
            None => b.fail(format!(
                "assigning the struct value `{}` as a whole (assign its fields)",
                self.name
            )),
        }
    }

    fn var(&self, b: &mut KernelBuilder, field: &str) -> Option<Var> {
        let found = self
            .fields
            .iter()
            .find(|(n, _)| *n == field)
            .map(|(_, v)| *v);
        if found.is_none() {
            b.fail(format!(
                "`{}.{field}`: no such field of a scalar or complex type in the struct",
                self.name
            ));
        }
        found
    }

    /// `p.field`.
    pub fn field(&self, b: &mut KernelBuilder, field: &str) -> Value {
        if let Some(v) = self.complex {
            let z = b.get(v);
            return b.component(z, field);
        }
        match self.var(b, field) {
            Some(v) => b.get(v),
            None => b.lit_int(0, Some(Scalar::I32)),
        }
    }

    /// `p.field = value`.
    pub fn set_field(&self, b: &mut KernelBuilder, field: &str, value: Value) {
        if let Some(v) = self.complex {
            b.set_component(v, field, value);
            return;
        }
        if let Some(v) = self.var(b, field) {
            b.set(v, value);
        }
    }

    /// `a[i] = p`: every field stored into element `i` of `a`.
    pub fn store(&self, b: &mut KernelBuilder, a: ArrayRef, i: Value) {
        if let Some(v) = self.complex {
            let z = b.get(v);
            b.store(a, i, z);
            return;
        }
        for (name, var) in &self.fields {
            let fa = b.field(a, name);
            let v = b.get(*var);
            b.store(fa, i, v);
        }
    }
}

/// Whether the elements of `a` are structs other than complex numbers: copied field by field
/// (`b[j] = a[i]`), not loaded as one value.
pub fn whole_struct(a: &ArrayRef) -> bool {
    matches!(a.elem(), Elem::Struct(l) if l.complex().is_none())
}
