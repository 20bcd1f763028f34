//! Host data as the data clauses see it (OpenACC 3.3 sections 2.6 and 2.7): which types may
//! appear in a data clause, the host memory a variable occupies, and subarrays.
//!
//! On devices that share host memory (host, multicore) the data clauses and data routines move
//! nothing: "if var is in shared memory, no action is taken" (3.3 L1758 and the same sentence
//! for each clause). Devices with their own memory keep a present table over these host ranges.

use crate::error::{Error, Location, Result};

/// Element types that can live in device memory: plain data, copied bit for bit.
///
/// # Safety
/// Implementors must be `Copy`, contain no pointers or references, and be valid for any bit
/// pattern a device computation can produce from valid values. `#[derive(acc::DeviceCopy)]`
/// implements it for structs whose fields all implement it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used on an OpenACC device",
    note = "device data are the scalars `f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 isize usize bool`, \
            `#[derive(acc::DeviceCopy)]` structs of them, and slices, `Vec`s and arrays of those"
)]
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {
    /// The kernel IR scalar this type is, if it is one (structs and arrays are not).
    const SCALAR: Option<crate::ir::Scalar> = None;
    /// The layout of a `#[derive(DeviceCopy)]` struct: what kernels need to access its
    /// fields in arrays of it.
    const LAYOUT: Option<&'static crate::ir::StructLayout> = None;
    /// The type of each part, for `num_complex::Complex<f32>` and `Complex<f64>`: a struct
    /// field of such a type is also recorded as its two parts (`z.re`, `z.im`), which kernels
    /// access as the complex field.
    const COMPLEX_PART: Option<crate::ir::Scalar> = None;
    /// For a fixed-size array of scalars (`[f32; 3]`, a row of a 2-D array `[[f32; 3]; 5]`):
    /// the scalar and how many of it the array holds. Kernels see an array of such rows as
    /// its scalars, row after row.
    const ROW: Option<(crate::ir::Scalar, usize)> = None;
    /// For a fixed-size array `[T; N]` (a struct's array field): its elements, which kernels
    /// index in arrays of the struct (`boxes[l].nei[k].number`).
    const ARRAY: Option<crate::ir::FieldArray> = None;
}

macro_rules! device_copy {
    ($($t:ty => $ir:ident),*) => {$( #[diagnostic::do_not_recommend] unsafe impl DeviceCopy for $t { const SCALAR: Option<crate::ir::Scalar> = Some(crate::ir::Scalar::$ir); } )*};
}
device_copy!(f32 => F32, f64 => F64, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16,
    u32 => U32, u64 => U64, isize => ISize, usize => USize, bool => Bool);
#[diagnostic::do_not_recommend]
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {
    const ROW: Option<(crate::ir::Scalar, usize)> = match T::SCALAR {
        Some(s) => Some((s, N)),
        None => None,
    };
    // Kernels address at most 2^32 bytes of an element.
    const ARRAY: Option<crate::ir::FieldArray> =
        if N <= u32::MAX as usize && std::mem::size_of::<T>() <= u32::MAX as usize {
            Some(crate::ir::FieldArray {
                len: N as u32,
                stride: std::mem::size_of::<T>() as u32,
                scalar: T::SCALAR,
                layout: T::LAYOUT,
            })
        } else {
            None
        };
}
// The 16-bit floats of the `half` crate (feature `half`): stored as their bits on devices,
// computed in f32 and rounded after each operation in kernels, as `half` computes them.
#[cfg(feature = "half")]
device_copy!(half::f16 => F16, half::bf16 => BF16);
// Plain data, reducible on the host devices; kernels do not take them (no IR scalar).
#[diagnostic::do_not_recommend]
unsafe impl DeviceCopy for i128 {}
#[diagnostic::do_not_recommend]
unsafe impl DeviceCopy for u128 {}

/// A variable that may appear in a data clause: a device scalar, or an array of them (a slice,
/// a `Vec`, a fixed-size array), or a reference to one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in a data clause",
    label = "not device data",
    note = "data clauses take scalars, slices, `Vec`s and fixed-size arrays of device types \
            (`f32 f64 i8 .. u64 isize usize bool` and `#[derive(acc::DeviceCopy)]` structs)"
)]
pub trait DataVar {
    /// The element type.
    type Elem: DeviceCopy;
    /// Whether the variable is one scalar rather than an array of elements.
    const IS_SCALAR: bool = false;
    /// The length, when the type fixes it (`[T; N]`): what a private copy in a kernel needs.
    const FIXED_LEN: Option<usize> = None;
    /// The elements, as one contiguous host range.
    fn elems(&self) -> &[Self::Elem];
    /// Why the variable's elements are not one contiguous host range in index order (an
    /// `ndarray` view with strides), or `None` when they are: acc checks this, naming the
    /// variable, before it calls [`DataVar::elems`].
    fn layout_problem(&self) -> Option<String> {
        None
    }
}

/// A [`DataVar`] whose elements can be written (what `copyout` and kernels writing an array
/// need).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written back by a data clause",
    label = "not writable",
    note = "`copy`, `copyout` and `update self` write the host's data when they end: pass the \
            variable as `&mut` (or own it in a `mut` binding), or use `copyin` for data the \
            region only reads"
)]
pub trait DataVarMut: DataVar {
    /// The elements, writable.
    fn elems_mut(&mut self) -> &mut [Self::Elem];
}

#[diagnostic::do_not_recommend]
impl<T: DeviceCopy> DataVarMut for [T] {
    fn elems_mut(&mut self) -> &mut [T] {
        self
    }
}
#[diagnostic::do_not_recommend]
impl<T: DeviceCopy> DataVarMut for Vec<T> {
    fn elems_mut(&mut self) -> &mut [T] {
        self
    }
}
#[diagnostic::do_not_recommend]
impl<T: DeviceCopy> DataVarMut for Box<[T]> {
    fn elems_mut(&mut self) -> &mut [T] {
        self
    }
}
#[diagnostic::do_not_recommend]
impl<T: DeviceCopy, const N: usize> DataVarMut for [T; N] {
    fn elems_mut(&mut self) -> &mut [T] {
        self
    }
}
#[diagnostic::do_not_recommend]
impl<T: DataVarMut + ?Sized> DataVarMut for &mut T {
    fn elems_mut(&mut self) -> &mut [T::Elem] {
        (**self).elems_mut()
    }
}

impl<T: DeviceCopy, const N: usize> DataVar for [T; N] {
    type Elem = T;
    const FIXED_LEN: Option<usize> = Some(N);
    fn elems(&self) -> &[T] {
        self
    }
}

impl<T: DeviceCopy> DataVar for [T] {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
}
impl<T: DeviceCopy> DataVar for Vec<T> {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
}
impl<T: DeviceCopy> DataVar for Box<[T]> {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
}
impl<T: DataVar + ?Sized> DataVar for &T {
    type Elem = T::Elem;
    const IS_SCALAR: bool = T::IS_SCALAR;
    const FIXED_LEN: Option<usize> = T::FIXED_LEN;
    fn elems(&self) -> &[T::Elem] {
        (**self).elems()
    }
    fn layout_problem(&self) -> Option<String> {
        (**self).layout_problem()
    }
}
impl<T: DataVar + ?Sized> DataVar for &mut T {
    type Elem = T::Elem;
    const IS_SCALAR: bool = T::IS_SCALAR;
    const FIXED_LEN: Option<usize> = T::FIXED_LEN;
    fn elems(&self) -> &[T::Elem] {
        (**self).elems()
    }
    fn layout_problem(&self) -> Option<String> {
        (**self).layout_problem()
    }
}
macro_rules! scalar_data_var {
    ($($t:ty),*) => {$(
        impl DataVar for $t {
            type Elem = $t;
            const IS_SCALAR: bool = true;
            fn elems(&self) -> &[$t] { std::slice::from_ref(self) }
        }
        #[diagnostic::do_not_recommend]
        impl DataVarMut for $t {
            fn elems_mut(&mut self) -> &mut [$t] { std::slice::from_mut(self) }
        }
    )*};
}
scalar_data_var!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, isize, usize, bool);

/// The bytes of device data.
pub fn bytes_of<T: DeviceCopy>(s: &[T]) -> &[u8] {
    // SAFETY: `DeviceCopy` types are plain data: every byte of them may be read.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), std::mem::size_of_val(s)) }
}

/// The bytes of device data, writable. Only values of the elements' own type may be written
/// through it (what a device computed from values of that type, or a copy of them).
pub fn bytes_of_mut<T: DeviceCopy>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; writers keep to the rule in the doc comment.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), std::mem::size_of_val(s)) }
}

/// A host range named by a data clause: a whole variable or a subarray of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRange {
    /// Address of the first byte.
    pub addr: usize,
    /// Length in bytes.
    pub bytes: usize,
}

/// A variable as a data clause names it: its name and source location for errors, and the host
/// range it covers.
#[derive(Clone, Copy, Debug)]
pub struct ClauseVar {
    /// The variable as written in the clause, subarray included (`a[0..n]`).
    pub name: &'static str,
    /// Where the clause is written.
    pub location: Location,
    /// The host memory it covers.
    pub range: HostRange,
}

impl ClauseVar {
    /// The whole of `var`.
    pub fn whole<V: DataVar + ?Sized>(
        var: &V,
        name: &'static str,
        location: Location,
    ) -> ClauseVar {
        let e = var.elems();
        let range = HostRange {
            addr: e.as_ptr() as usize,
            bytes: std::mem::size_of_val(e),
        };
        ClauseVar {
            name,
            location,
            range,
        }
    }

    /// Elements `start..end` of `var` (a subarray `var[start..end]`); an error when they are not
    /// all inside `var`.
    pub fn subarray<V: DataVar + ?Sized>(
        var: &V,
        start: usize,
        end: usize,
        name: &'static str,
        location: Location,
    ) -> Result<ClauseVar> {
        let e = var.elems();
        if start > end || end > e.len() {
            return Err(Error::SubarrayOutOfBounds {
                // (A clause's name is its text, `a[2..40]`; the error writes the range.)
                var: name.split('[').next().unwrap_or(name).to_string(),
                start,
                end,
                len: e.len(),
                location,
            });
        }
        let size = std::mem::size_of::<V::Elem>();
        let range = HostRange {
            addr: e.as_ptr() as usize + start * size,
            bytes: (end - start) * size,
        };
        Ok(ClauseVar {
            name,
            location,
            range,
        })
    }
}

/// Resolves a Rust range written in a subarray (`a..b`, `..b`, `a..`, `..`, `a..=b`) against the
/// array's length into `(start, end)`.
pub fn subarray_bounds(range: impl std::ops::RangeBounds<usize>, len: usize) -> (usize, usize) {
    use std::ops::Bound::*;
    let start = match range.start_bound() {
        Included(&s) => s,
        Excluded(&s) => s.saturating_add(1),
        Unbounded => 0,
    };
    let end = match range.end_bound() {
        Included(&e) => e.saturating_add(1),
        Excluded(&e) => e,
        Unbounded => len,
    };
    (start, end)
}

#[cfg(feature = "num-complex")]
mod complex;
#[cfg(feature = "ndarray")]
mod ndarray_arrays;

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location {
            file: "x.rs",
            line: 1,
            column: 1,
        }
    }

    #[test]
    fn subarray_in_and_out_of_bounds() {
        let v = vec![0f64; 10];
        let c = ClauseVar::subarray(&v, 2, 5, "v[2..5]", loc()).unwrap();
        assert_eq!(c.range.bytes, 24);
        assert_eq!(c.range.addr, v.as_ptr() as usize + 16);
        let e = ClauseVar::subarray(&v, 4, 11, "v[4..11]", loc())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("v[4..11]") && e.contains("length 10") && e.contains("x.rs:1:1"),
            "{e}"
        );
        assert_eq!(subarray_bounds(..3, 10), (0, 3));
        assert_eq!(subarray_bounds(4.., 10), (4, 10));
        assert_eq!(subarray_bounds(1..=3, 10), (1, 4));
    }
}
