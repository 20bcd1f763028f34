//! `num_complex::Complex<f32>` and `Complex<f64>` as device data (feature `num-complex`): a
//! `#[repr(C)]` pair `re, im`, laid out for kernels as a struct of two fields whose layout
//! name marks it complex (`StructLayout::complex`), so that kernels compute with whole values
//! (`ir::builder::complex`) as well as reading `z.re`. A complex scalar is a data-clause
//! variable and reduces with `+` and `*` (`crate::reduce`).

use num_complex::Complex;

use super::{DataVar, DataVarMut, DeviceCopy};
use crate::ir::{Scalar, StructField, StructLayout};

macro_rules! complex_device_copy {
    ($($t:ty => $ir:ident, $layout:ident);*) => {$(
        static $layout: StructLayout = StructLayout {
            name: concat!("Complex<", stringify!($t), ">"),
            size: 2 * std::mem::size_of::<$t>() as u32,
            fields: &[
                StructField { name: "re", offset: 0, ty: Some(Scalar::$ir), array: None },
                StructField { name: "im", offset: std::mem::size_of::<$t>() as u32, ty: Some(Scalar::$ir), array: None },
            ],
        };
        // SAFETY: `Complex<T>` is `#[repr(C)]` `{ re: T, im: T }` of a plain float.
        #[diagnostic::do_not_recommend]
        unsafe impl DeviceCopy for Complex<$t> {
            const LAYOUT: Option<&'static StructLayout> = Some(&$layout);
            const COMPLEX_PART: Option<Scalar> = Some(Scalar::$ir);
        }
        impl DataVar for Complex<$t> {
            type Elem = Complex<$t>;
            const IS_SCALAR: bool = true;
            fn elems(&self) -> &[Complex<$t>] {
                std::slice::from_ref(self)
            }
        }
        #[diagnostic::do_not_recommend]
        impl DataVarMut for Complex<$t> {
            fn elems_mut(&mut self) -> &mut [Complex<$t>] {
                std::slice::from_mut(self)
            }
        }
    )*};
}
complex_device_copy!(f32 => F32, COMPLEX_F32; f64 => F64, COMPLEX_F64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layouts_match_the_type_and_are_marked_complex() {
        for (l, t, size) in [
            (<Complex<f32> as DeviceCopy>::LAYOUT, Scalar::F32, 8),
            (<Complex<f64> as DeviceCopy>::LAYOUT, Scalar::F64, 16),
        ] {
            let l = l.expect("a layout");
            assert_eq!(l.complex(), Some(t));
            assert_eq!(l.size, size);
        }
        let z = Complex::new(1.5f64, -2.0);
        let base = &z as *const _ as usize;
        assert_eq!(&z.im as *const f64 as usize - base, 8);
    }
}
