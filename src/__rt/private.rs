//! Private copies of variables (3.3 sections 2.5.13, 2.5.14, 2.9.10) on the host and
//! multicore: a clone of the original, except that an array the code holds through a `&mut`
//! reference (a slice, a `Vec`) gets an owned copy, which the region writes without touching
//! the original. Chosen by method resolution (`(&Private(&x)).private_copy()`): the owned
//! impls match the receiver as it is, the clone only after one more borrow.

/// A variable to privatize.
pub struct Private<'a, T: ?Sized>(pub &'a T);

/// An owned copy of an array held through `&mut`.
pub trait PrivateOwned {
    /// The copy's type.
    type Copy;
    /// The copy.
    fn private_copy(&self) -> Self::Copy;
}

impl<T: Clone> PrivateOwned for Private<'_, &mut [T]> {
    type Copy = Vec<T>;
    fn private_copy(&self) -> Vec<T> {
        self.0.to_vec()
    }
}

impl<T: Clone> PrivateOwned for Private<'_, &mut Vec<T>> {
    type Copy = Vec<T>;
    fn private_copy(&self) -> Vec<T> {
        self.0.to_vec()
    }
}

/// A clone of anything else.
pub trait PrivateClone {
    /// The copy's type.
    type Copy;
    /// The copy.
    fn private_copy(&self) -> Self::Copy;
}

impl<T: Clone> PrivateClone for &Private<'_, T> {
    type Copy = T;
    fn private_copy(&self) -> T {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The borrow picks the impl, as the expansion writes it.
    #[allow(clippy::needless_borrow)]
    #[test]
    fn slices_held_by_mut_get_owned_copies_and_the_rest_clones() {
        let mut data = [1.0, 2.0];
        let s: &mut [f64] = &mut data;
        let mut c = (&Private(&s)).private_copy();
        c[0] = 5.0;
        assert_eq!((c, &*s), (vec![5.0, 2.0], &[1.0, 2.0][..]));
        let a = [1u8; 3];
        let b: [u8; 3] = (&Private(&a)).private_copy();
        assert_eq!(b, a);
        let v = vec![1, 2];
        assert_eq!((&Private(&v)).private_copy(), v);
    }
}
