//! A `DeviceCopy` struct value in a kernel (`let p = ps[i]; p.x + p.m`, `ps[j] = p`): one local
//! per scalar field, loaded together, read and written by field, stored back field by field.

use acc_core::ir::builder::{ArrayRef, KernelBuilder, Value, Var};
use acc_core::ir::{Elem, Scalar, StructLayout};

/// The fields of a struct value, each in a local of the kernel; a complex number
/// (`num_complex::Complex`) is one complex local, which is also used as a whole (`p * q`), and
/// so is a scalar element loaded by [`StructValue::load_any`].
/// A clone names the same locals (a routine's argument, copied by the routine).
#[derive(Clone)]
pub struct StructValue {
    name: String,
    fields: Vec<(&'static str, Var)>,
    /// Its array fields (`nei: [Nei; 26]`), each in private arrays: the field, the element's
    /// field for an array of structs (one private array each), and the private array.
    elements: Vec<(NestedPlace, Var)>,
    complex: Option<Var>,
}

/// An array field of a struct value: the field, and the element's field for an array of
/// structs.
type NestedPlace = (&'static str, Option<&'static str>);

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
                elements: Vec::new(),
                complex: Some(var),
            };
        }
        let mut elements = Vec::new();
        match a.elem() {
            Elem::Struct(layout) => {
                elements = load_array_fields(b, a, i, name, layout);
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
            elements,
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
            elements: Vec::new(),
            complex: Some(var),
        }
    }

    /// A struct literal `P { x: .., v: .. }` of a `DeviceCopy` struct whose layout is
    /// `layout`: each scalar field a local set from its value in `given`. A field the literal
    /// does not give, or a struct kernels cannot hold, is the kernel's error.
    pub fn literal(
        b: &mut KernelBuilder,
        layout: Option<&'static StructLayout>,
        name: &str,
        given: &[(&str, Value)],
    ) -> StructValue {
        let mut fields = Vec::new();
        let Some(layout) = layout.filter(|l| l.complex().is_none()) else {
            b.fail(format!("the struct value `{name}`: kernels build values of `#[derive(acc::DeviceCopy)]` structs only"));
            return StructValue {
                name: name.to_string(),
                fields,
                elements: Vec::new(),
                complex: None,
            };
        };
        for f in layout.fields.iter().filter(|f| !f.name.contains('.')) {
            let Some(ty) = f.ty else {
                b.fail(format!("the field `{}` of `{}` in a struct value: kernels hold struct values of scalar fields", f.name, layout.name));
                continue;
            };
            let Some(&(_, v)) = given.iter().find(|(n, _)| *n == f.name) else {
                b.fail(format!(
                    "the field `{}` of `{}` is not given in the struct literal `{name}`",
                    f.name, layout.name
                ));
                continue;
            };
            let var = b.local(&format!("{name}.{}", f.name), Some(ty), Some(v));
            fields.push((f.name, var));
        }
        StructValue {
            name: name.to_string(),
            fields,
            elements: Vec::new(),
            complex: None,
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
        let elements = self
            .elements
            .iter()
            .map(|&(at, arr)| {
                let len = b.local_len_of(arr);
                let copy = b.local_array_like(&format!("{name}.{}", at.0), arr);
                b.for_each_element(&format!("{name}.{} (copy)", at.0), len, |b, k| {
                    let (from, to) = (b.get(k), b.get(k));
                    let x = b.get_elem(arr, from);
                    b.set_elem(copy, to, x);
                });
                (at, copy)
            })
            .collect();
        StructValue {
            name: name.to_string(),
            fields,
            elements,
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
        field_var(b, &self.fields, field, || format!("{}.{field}", self.name))
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
        for &((field, inner), arr) in &self.elements {
            let len = b.local_len_of(arr);
            b.for_each_element(&format!("{}.{field} (copy)", self.name), len, |b, k| {
                let na = b.nested(a, i, field);
                let fa = match inner {
                    Some(g) => b.field(na, g),
                    None => na,
                };
                let (at, to) = (b.get(k), b.get(k));
                let v = b.get_elem(arr, at);
                b.store(fa, to, v);
            });
        }
    }
}

/// The array fields of element `i` of `a` (of struct `layout`), each (each field of their
/// elements) loaded into a private array by a loop, for a struct value copied whole
/// (`b[j] = a[i]`); an array of arrays is the kernel's error.
fn load_array_fields(
    b: &mut KernelBuilder,
    a: ArrayRef,
    i: Value,
    name: &str,
    layout: &'static StructLayout,
) -> Vec<(NestedPlace, Var)> {
    let mut out = Vec::new();
    for f in layout.fields {
        let Some(fa) = f.array else { continue };
        let inner: Vec<(Option<&'static str>, Scalar)> = match (fa.scalar, fa.layout) {
            (Some(t), _) => vec![(None, t)],
            (_, Some(sub)) => sub
                .fields
                .iter()
                .filter(|g| !g.name.contains('.'))
                .filter_map(|g| Some((Some(g.name), g.ty?)))
                .collect(),
            _ => {
                b.fail(format!("the struct value `{name}`: its field `{}` is an array of arrays, which kernels do not hold", f.name));
                continue;
            }
        };
        for (g, ty) in inner {
            let shown = match g {
                Some(g) => format!("{name}.{}[..].{g}", f.name),
                None => format!("{name}.{}", f.name),
            };
            let arr = b.local_array(&shown, ty, fa.len);
            b.for_each_element(&format!("{shown} (copy)"), fa.len, |b, k| {
                let na = b.nested(a, i, f.name);
                let fa = match g {
                    Some(g) => b.field(na, g),
                    None => na,
                };
                let (at, to) = (b.get(k), b.get(k));
                let v = b.load(fa, at);
                b.set_elem(arr, to, v);
            });
            out.push(((f.name, g), arr));
        }
    }
    out
}

/// The local (or private array) of `field` among `fields`; the kernel's error, naming the
/// access as `shown` gives it (`p.x`, `ps[..].x`), where the struct has no such field of a
/// scalar or complex type.
fn field_var(
    b: &mut KernelBuilder,
    fields: &[(&'static str, Var)],
    field: &str,
    shown: impl FnOnce() -> String,
) -> Option<Var> {
    let found = fields.iter().find(|(n, _)| *n == field).map(|(_, v)| *v);
    if found.is_none() {
        b.fail(format!(
            "`{}`: no such field of a scalar or complex type in the struct",
            shown()
        ));
    }
    found
}

/// Whether the elements of `a` are structs other than complex numbers: copied field by field
/// (`b[j] = a[i]`), not loaded as one value.
pub fn whole_struct(a: &ArrayRef) -> bool {
    matches!(a.elem(), Elem::Struct(l) if l.complex().is_none())
}

/// A private array of structs in a kernel (`let mut ps = [P { x: 0.0, v: 1.0 }; 4];`): one
/// private array per scalar field, indexed together.
#[derive(Clone)]
pub struct StructArray {
    name: String,
    fields: Vec<(&'static str, Var)>,
    len: u32,
}

impl StructArray {
    /// `[value; len]`, named `name`.
    pub fn filled(b: &mut KernelBuilder, value: &StructValue, len: u32, name: &str) -> StructArray {
        if value.complex.is_some() {
            b.fail(format!("the private array `{name}` of complex numbers"));
        }
        let mut fields = Vec::new();
        for (f, var) in &value.fields {
            let elem = b.local_array_of(&format!("{name}.{f}"), None, len);
            let x = b.get(*var);
            b.fill(elem, x);
            fields.push((*f, elem));
        }
        StructArray {
            name: name.to_string(),
            fields,
            len,
        }
    }

    fn var(&self, b: &mut KernelBuilder, field: &str) -> Option<Var> {
        field_var(b, &self.fields, field, || {
            format!("{}[..].{field}", self.name)
        })
    }

    /// `ps[i].field`.
    pub fn get(&self, b: &mut KernelBuilder, field: &str, i: Value) -> Value {
        match self.var(b, field) {
            Some(v) => b.get_elem(v, i),
            None => b.lit_int(0, Some(Scalar::I32)),
        }
    }

    /// `ps[i].field = value`.
    pub fn set(&self, b: &mut KernelBuilder, field: &str, i: Value, value: Value) {
        if let Some(v) = self.var(b, field) {
            b.set_elem(v, i, value);
        }
    }

    /// `let p = ps[i];`: a struct value named `name`, a copy of element `i`.
    pub fn load(&self, b: &mut KernelBuilder, i: Value, name: &str) -> StructValue {
        let idx = b.local(&format!("{name} (index)"), Some(Scalar::USize), Some(i));
        let mut fields = Vec::new();
        for (f, arr) in &self.fields {
            let i = b.get(idx);
            let x = b.get_elem(*arr, i);
            fields.push((*f, b.local(&format!("{name}.{f}"), None, Some(x))));
        }
        StructValue {
            name: name.to_string(),
            fields,
            elements: Vec::new(),
            complex: None,
        }
    }

    /// `ps[i] = p`: every field of `p` stored into element `i`.
    pub fn store(&self, b: &mut KernelBuilder, i: Value, value: &StructValue) {
        let idx = b.local(
            &format!("{} (index)", self.name),
            Some(Scalar::USize),
            Some(i),
        );
        if let Some(((field, _), _)) = value.elements.first() {
            b.fail(format!("storing `{}` into the private array of structs `{}`: its array field `{field}` (private arrays of structs hold scalar fields)", value.name, self.name));
        }
        for (f, arr) in &self.fields {
            let x = value.field(b, f);
            let i = b.get(idx);
            b.set_elem(*arr, i, x);
        }
    }

    /// `ps.len()`.
    pub fn len(&self, b: &mut KernelBuilder) -> Value {
        b.lit_int(i128::from(self.len), Some(Scalar::USize))
    }
}
