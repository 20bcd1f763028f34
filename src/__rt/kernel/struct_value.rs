//! A `DeviceCopy` struct value in a kernel (`let p = ps[i]; p.x + p.m`, `ps[j] = p`): one local
//! per scalar field, loaded together, read and written by field, stored back field by field.

use acc_core::ir::builder::{ArrayRef, KernelBuilder, Value, Var};
use acc_core::ir::{Elem, Scalar};

/// The fields of a struct value, each in a local of the kernel.
pub struct StructValue {
    name: String,
    fields: Vec<(&'static str, Var)>,
}

impl StructValue {
    /// Element `i` of `a`, an array of structs, as a value named `name` (each scalar field
    /// loaded into its own local). Records the kernel's error when `a` holds scalars.
    pub fn load(b: &mut KernelBuilder, a: ArrayRef, i: Value, name: &str) -> StructValue {
        let mut fields = Vec::new();
        match a.elem() {
            Elem::Struct(layout) => {
                for f in layout.fields {
                    if f.ty.is_none() {
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
                "`{}.{field}`: no such field of a scalar type in the struct",
                self.name
            ));
        }
        found
    }

    /// `p.field`.
    pub fn field(&self, b: &mut KernelBuilder, field: &str) -> Value {
        match self.var(b, field) {
            Some(v) => b.get(v),
            None => b.lit_int(0, Some(Scalar::I32)),
        }
    }

    /// `p.field = value`.
    pub fn set_field(&self, b: &mut KernelBuilder, field: &str, value: Value) {
        if let Some(v) = self.var(b, field) {
            b.set(v, value);
        }
    }

    /// `a[i] = p`: every field stored into element `i` of `a`.
    pub fn store(&self, b: &mut KernelBuilder, a: ArrayRef, i: Value) {
        for (name, var) in &self.fields {
            let fa = b.field(a, name);
            let v = b.get(*var);
            b.store(fa, i, v);
        }
    }
}
