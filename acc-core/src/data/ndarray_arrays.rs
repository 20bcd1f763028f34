//! `ndarray` arrays as data-clause variables (feature `ndarray`): an `ArrayBase` whose
//! elements are one contiguous range in standard (row-major) order — `Array1/2/3/..`,
//! `ArrayView`, `ArrayViewMut`, `ArcArray`, `CowArray`, and the views of them that keep that
//! layout — is a data-clause variable whose elements are that range, as a slice's are. Kernels
//! index it as `a[[i, j]]` (the macro computes the element's offset from the array's shape,
//! which travels with the launch); the present table keys it by its elements' host range, so
//! a data region over an `Array2` and a region reading its elements through a slice of it
//! find the same device copy.
//!
//! Views with other strides (a transposed view, every other column, a reversed axis) are
//! refused, naming the variable: [`DataVar::layout_problem`] says why, and
//! `a.as_standard_layout()` (or `.to_owned()`) makes a copy that can travel.

use ndarray::{ArrayBase, Data, Dimension, OwnedRepr, ViewRepr};

use super::{DataVar, DataVarMut, DeviceCopy};

fn problem(shape: &[usize], strides: &[isize]) -> String {
    format!(
        "an ndarray array of shape {shape:?} with strides {strides:?} is not in standard \
         (row-major, contiguous) layout, so its elements are not one host range: pass \
         `a.as_standard_layout()` or a copy (`a.to_owned()`)"
    )
}

/// # Panics
/// [`DataVar::elems`] panics, with [`DataVar::layout_problem`]'s message, on an array that is
/// not in standard layout; acc checks the layout first and refuses such a variable by name.
impl<A: DeviceCopy, S: Data<Elem = A>, D: Dimension> DataVar for ArrayBase<S, D> {
    type Elem = A;
    fn elems(&self) -> &[A] {
        match self.as_slice() {
            Some(s) => s,
            None => panic!("acc: {}", problem(self.shape(), self.strides())),
        }
    }
    fn layout_problem(&self) -> Option<String> {
        (!self.is_standard_layout()).then(|| problem(self.shape(), self.strides()))
    }
}

/// Owned arrays (`Array<A, D>`) are written in place.
///
/// # Panics
/// As [`DataVar::elems`], on an array not in standard layout.
#[diagnostic::do_not_recommend]
impl<A: DeviceCopy, D: Dimension> DataVarMut for ArrayBase<OwnedRepr<A>, D> {
    fn elems_mut(&mut self) -> &mut [A] {
        if let Some(p) = self.layout_problem() {
            panic!("acc: {p}");
        }
        self.as_slice_mut().unwrap_or_default()
    }
}

/// Mutable views (`ArrayViewMut<A, D>`) are written through.
///
/// # Panics
/// As [`DataVar::elems`], on a view not in standard layout.
#[diagnostic::do_not_recommend]
impl<A: DeviceCopy, D: Dimension> DataVarMut for ArrayBase<ViewRepr<&mut A>, D> {
    fn elems_mut(&mut self) -> &mut [A] {
        if let Some(p) = self.layout_problem() {
            panic!("acc: {p}");
        }
        self.as_slice_mut().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array2};

    #[test]
    fn standard_layout_arrays_are_their_elements() {
        let mut a = Array2::<f64>::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
        assert_eq!(a.layout_problem(), None);
        let expect: Vec<f64> = (0..12).map(|x| x as f64).collect();
        assert_eq!(a.elems(), &expect[..]);
        a.elems_mut()[5] = -1.0;
        assert_eq!(a[[1, 1]], -1.0);
        let base = a.elems()[4..].as_ptr();
        let rows = a.slice(s![1..3, ..]);
        assert_eq!(rows.layout_problem(), None);
        assert_eq!(rows.elems().as_ptr(), base);
        let mut v = a.view_mut();
        v.elems_mut()[0] = 7.0;
        assert_eq!(a[[0, 0]], 7.0);
    }

    #[test]
    fn other_layouts_are_refused_with_the_reason() {
        let a = Array2::<f32>::zeros((3, 4));
        let t = a.t();
        let why = t.layout_problem().expect("a transposed view is refused");
        assert!(
            why.contains("[4, 3]") && why.contains("as_standard_layout"),
            "{why}"
        );
        assert!(a.slice(s![.., ..;2]).layout_problem().is_some());
        assert!(std::panic::catch_unwind(|| t.elems().len()).is_err());
    }
}
