//! The layout of `#[derive(DeviceCopy)]` structs as kernels see them: fields, their offsets
//! and types, array fields' elements, and the ids of fields (of nested arrays' elements too).

use super::Scalar;

/// The layout of a `#[repr(C)]` struct as array elements (what `#[derive(DeviceCopy)]`
/// records): its size and its fields' offsets and types.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct StructLayout {
    /// The struct's name.
    pub name: &'static str,
    /// `size_of` the struct.
    pub size: u32,
    pub fields: &'static [StructField],
}

/// A field of a [`StructLayout`].
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct StructField {
    /// Its name (`"0"`, `"1"` .. in a tuple struct).
    pub name: &'static str,
    /// Byte offset in the struct.
    pub offset: u32,
    /// Its scalar type; `None` for a field kernels cannot access as one value (a nested
    /// struct, an array).
    pub ty: Option<Scalar>,
    /// For a fixed-size array field (`nei: [Nei; 26]`, `pos: [f64; 3]`): its elements, which
    /// kernels index (`boxes[l].nei[k].number`, `p[i].pos[d]`).
    pub array: Option<FieldArray>,
}

/// The elements of a fixed-size array field of a struct ([`StructField::array`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldArray {
    /// How many.
    pub len: u32,
    /// Bytes between consecutive elements.
    pub stride: u32,
    /// The element type, for an array of scalars.
    pub scalar: Option<Scalar>,
    /// The element's layout, for an array of `#[derive(DeviceCopy)]` structs.
    pub layout: Option<&'static StructLayout>,
}

/// A field of an element of a nested array, as a [`FieldId`]: field `array` of the struct
/// (an array field), then field `inner` of its element (`None`: the element itself, a
/// scalar). The bits above 16 hold `inner + 1` (`0xFFFF` for the element itself), so a
/// plain field's id is unchanged. Such an access's index is an
/// [`Expr::NestedIndex`](super::Expr::NestedIndex).
pub fn nested_field(array: FieldId, inner: Option<FieldId>) -> FieldId {
    let inner = inner.map_or(0xFFFF, |f| f + 1);
    array | (inner << 16)
}

/// The parts of a [`FieldId`]: the struct's field, and for a field of a nested array's
/// element, `Some(inner)` ([`nested_field`]).
pub fn split_field(f: FieldId) -> (FieldId, Option<Option<FieldId>>) {
    match f >> 16 {
        0 => (f, None),
        0xFFFF => (f & 0xFFFF, Some(None)),
        inner => (f & 0xFFFF, Some(Some(inner - 1))),
    }
}

impl StructLayout {
    /// The part type of `num_complex::Complex<f32>` / `Complex<f64>` (the layouts
    /// `acc_core::data` gives them), which kernels compute with as complex numbers.
    pub fn complex(&self) -> Option<Scalar> {
        match (self.name, self.fields) {
            (
                "Complex<f32>" | "Complex<f64>",
                [StructField {
                    name: "re",
                    ty: Some(t),
                    ..
                }, StructField { name: "im", .. }],
            ) => Some(*t),
            _ => None,
        }
    }
    /// The field named `name`, by index.
    pub fn field(&self, name: &str) -> Option<(FieldId, &'static StructField)> {
        self.fields
            .iter()
            .enumerate()
            .find(|(_, f)| f.name == name)
            .map(|(i, f)| (i as FieldId, f))
    }
}

/// Index of a field in a [`StructLayout`].
pub type FieldId = u32;
