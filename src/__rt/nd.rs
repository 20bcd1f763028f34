//! The shape of an `ndarray` array a kernel indexes as `a[[i, j]]` (feature `ndarray`): the
//! kernel builder sees the array as its elements (a data-clause variable, see
//! `acc_core::data`) and computes each element's offset from the lengths of its axes, which
//! the expansion reads here before the launch and passes as scalars.

/// An array whose axes' lengths a kernel needs (`ndarray::ArrayBase`, or a reference to one).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is indexed `[[i, j]]` in a compute region, but it is not an `ndarray` array",
    note = "kernels index `ndarray` arrays (acc's `ndarray` feature) with `a[[i, j]]` or \
            `a[(i, j)]`; index slices and `Vec`s with one `usize`"
)]
pub trait NdShape {
    /// The length of axis `axis`; panics, naming the variable, when the array has `ndim`
    /// axes other than `expect` (an `IxDyn` array indexed with another number of indices:
    /// the host's indexing panics there too).
    fn acc_nd_len(&self, axis: usize, expect: usize, name: &str) -> usize;
}

impl<T: NdShape + ?Sized> NdShape for &T {
    fn acc_nd_len(&self, axis: usize, expect: usize, name: &str) -> usize {
        (**self).acc_nd_len(axis, expect, name)
    }
}

impl<T: NdShape + ?Sized> NdShape for &mut T {
    fn acc_nd_len(&self, axis: usize, expect: usize, name: &str) -> usize {
        (**self).acc_nd_len(axis, expect, name)
    }
}

#[cfg(feature = "ndarray")]
impl<S: ndarray::RawData, D: ndarray::Dimension> NdShape for ndarray::ArrayBase<S, D> {
    #[track_caller]
    fn acc_nd_len(&self, axis: usize, expect: usize, name: &str) -> usize {
        let shape = self.shape();
        if expect != 0 && shape.len() != expect {
            panic!(
                "acc: the region indexes `{name}` with {expect} indices, but it has {} axes (shape {shape:?})",
                shape.len()
            );
        }
        match shape.get(axis) {
            Some(&n) => n,
            None => panic!(
                "acc: the region reads the length of axis {axis} of `{name}`, which has {} axes (shape {shape:?})",
                shape.len()
            ),
        }
    }
}
