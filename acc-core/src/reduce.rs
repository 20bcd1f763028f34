//! Reduction operators (OpenACC 3.3 section 2.5.15 and the table at L1219-1229).
//!
//! Each operator is a marker type; [`Reduce<Op>`] gives a type's initial value for the operator
//! and how two partial results combine. Arrays reduce element-wise (3.3 L1214-1217).

/// `+`: initial value 0.
pub struct Add;
/// `*`: initial value 1.
pub struct Mul;
/// `max`: initial value the least representable value (`-inf` for floats).
pub struct Max;
/// `min`: initial value the largest representable value (`+inf` for floats).
pub struct Min;
/// `&`: initial value all bits set (`true` for `bool`).
pub struct BitAnd;
/// `|`: initial value 0 (`false`).
pub struct BitOr;
/// `^`: initial value 0 (`false`).
pub struct BitXor;
/// `&&`: initial value `true`.
pub struct And;
/// `||`: initial value `false`.
pub struct Or;

/// A type that reduction operator `Op` applies to.
#[diagnostic::on_unimplemented(
    message = "this reduction operator does not apply to `{Self}`",
    label = "reduction variable of type `{Self}`",
    note = "reductions (OpenACC 3.3 section 2.5.15): `+ * max min` on integers and floats; \
            `& | ^` on integers and bool; `&& ||` on bool; arrays of those element-wise"
)]
// Every reducible type is device data, so that a generic `T: Reduce<Op>` may be reduced in
// kernels too.
pub trait Reduce<Op>: Sized + crate::data::DeviceCopy {
    /// The operator's initial value for this type.
    fn identity() -> Self;
    /// Combines two partial results.
    fn combine(a: Self, b: Self) -> Self;
}

macro_rules! reduce_impl {
    ($op:ty, [$($t:ty),*], |$a:ident, $b:ident| $comb:expr, $id:expr) => {$(
        #[diagnostic::do_not_recommend]
        impl Reduce<$op> for $t {
            #[inline(always)]
            fn identity() -> Self { $id }
            #[inline(always)]
            fn combine($a: Self, $b: Self) -> Self { $comb }
        }
    )*};
}

macro_rules! int_reductions {
    ($($t:ty),*) => {
        reduce_impl!(Add, [$($t),*], |a, b| a + b, 0);
        reduce_impl!(Mul, [$($t),*], |a, b| a * b, 1);
        $(
            reduce_impl!(Max, [$t], |a, b| if b > a { b } else { a }, <$t>::MIN);
            reduce_impl!(Min, [$t], |a, b| if b < a { b } else { a }, <$t>::MAX);
        )*
        reduce_impl!(BitAnd, [$($t),*], |a, b| a & b, !0);
        reduce_impl!(BitOr, [$($t),*], |a, b| a | b, 0);
        reduce_impl!(BitXor, [$($t),*], |a, b| a ^ b, 0);
    };
}
int_reductions!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

// Floats: max and min ignore NaN like f64::max/min; the initial values are the infinities so
// that a reduction over no iterations leaves the original value unchanged.
reduce_impl!(Add, [f32, f64], |a, b| a + b, 0.0);
reduce_impl!(Mul, [f32, f64], |a, b| a * b, 1.0);
reduce_impl!(Max, [f32], |a, b| a.max(b), f32::NEG_INFINITY);
reduce_impl!(Max, [f64], |a, b| a.max(b), f64::NEG_INFINITY);
reduce_impl!(Min, [f32], |a, b| a.min(b), f32::INFINITY);
reduce_impl!(Min, [f64], |a, b| a.min(b), f64::INFINITY);

reduce_impl!(BitAnd, [bool], |a, b| a & b, true);
reduce_impl!(BitOr, [bool], |a, b| a | b, false);
reduce_impl!(BitXor, [bool], |a, b| a ^ b, false);
reduce_impl!(And, [bool], |a, b| a && b, true);
reduce_impl!(Or, [bool], |a, b| a || b, false);
reduce_impl!(Max, [bool], |a, b| a | b, false);
reduce_impl!(Min, [bool], |a, b| a & b, true);

// The 16-bit floats of `half` (feature `half`): each combination is `half`'s own operation
// (computed in f32, rounded to the type); max and min ignore NaN as f32's do.
#[cfg(feature = "half")]
reduce_impl!(Add, [half::f16, half::bf16], |a, b| a + b, Self::ZERO);
#[cfg(feature = "half")]
reduce_impl!(Mul, [half::f16, half::bf16], |a, b| a * b, Self::ONE);
#[cfg(feature = "half")]
reduce_impl!(
    Max,
    [half::f16, half::bf16],
    |a, b| a.max(b),
    Self::NEG_INFINITY
);
#[cfg(feature = "half")]
reduce_impl!(
    Min,
    [half::f16, half::bf16],
    |a, b| a.min(b),
    Self::INFINITY
);

// Complex numbers (feature `num-complex`): `+` and `*` as num_complex computes them.
#[cfg(feature = "num-complex")]
reduce_impl!(Add, [num_complex::Complex<f32>, num_complex::Complex<f64>], |a, b| a + b, num_complex::Complex::new(0.0, 0.0));
#[cfg(feature = "num-complex")]
reduce_impl!(Mul, [num_complex::Complex<f32>, num_complex::Complex<f64>], |a, b| a * b, num_complex::Complex::new(1.0, 0.0));

#[diagnostic::do_not_recommend]
impl<Op, T: Reduce<Op>, const N: usize> Reduce<Op> for [T; N] {
    fn identity() -> Self {
        std::array::from_fn(|_| T::identity())
    }
    fn combine(a: Self, b: Self) -> Self {
        let mut b = b.into_iter();
        a.map(|x| T::combine(x, b.next().expect("arrays of equal length")))
    }
}

/// The initial value of `Op` for the type of `like` (which is only used for its type).
#[inline(always)]
pub fn identity_like<Op, T: Reduce<Op>>(_like: &T) -> T {
    T::identity()
}

/// Combines two partial results of operator `Op`.
#[inline(always)]
pub fn combine<Op, T: Reduce<Op>>(a: T, b: T) -> T {
    T::combine(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities() {
        assert_eq!(<i32 as Reduce<Max>>::identity(), i32::MIN);
        assert_eq!(<u8 as Reduce<BitAnd>>::identity(), 255);
        assert_eq!(<f64 as Reduce<Min>>::identity(), f64::INFINITY);
        assert!(<bool as Reduce<And>>::identity());
        assert_eq!(<[f32; 2] as Reduce<Mul>>::identity(), [1.0, 1.0]);
    }

    #[cfg(feature = "half")]
    #[test]
    fn halves_combine_as_half_computes() {
        use half::{bf16, f16};
        assert_eq!(<f16 as Reduce<Max>>::identity(), f16::NEG_INFINITY);
        assert_eq!(<bf16 as Reduce<Mul>>::identity(), bf16::ONE);
        assert_eq!(<f16 as Reduce<Min>>::combine(f16::NAN, f16::ONE), f16::ONE);
        // 2048 + 1 is not an f16: the sum rounds to even, as `half`'s `+` does.
        let big = f16::from_f32(2048.0);
        assert_eq!(<f16 as Reduce<Add>>::combine(big, f16::ONE), big);
    }

    #[test]
    fn combines() {
        assert_eq!(<i64 as Reduce<Min>>::combine(3, -4), -4);
        assert_eq!(<f32 as Reduce<Max>>::combine(f32::NAN, 2.0), 2.0);
        assert_eq!(
            <[u16; 2] as Reduce<BitXor>>::combine([1, 2], [3, 2]),
            [2, 0]
        );
    }
}
