//! The numbers a bounds proof computes with ([`Num`]): plain values (`i128`), or values that
//! also know themselves as affine functions of the launch's inputs ([`Sym`]: integer scalars
//! and array lengths) and record every comparison the proof decides on them ([`Record`]).
//!
//! The proof is a deterministic walk whose path depends only on the outcomes of its
//! comparisons; the values it compares are sums and constant multiples of inputs. So where
//! each comparison's two sides are affine in the inputs, the walk takes the same path, and
//! reaches the same verdict, for every launch whose inputs give each comparison the same
//! outcome: the proof holds wherever its recorded guards do ([`Guards::hold`]), which a launch
//! checks in a few operations per guard instead of walking the kernel again (a wavefront,
//! whose scalars change at every launch, proves once per shape of its bounds). A comparison
//! of a value that is not affine (a product of two inputs, a quotient) makes the record
//! not general: that proof holds for its own inputs only.

use std::cmp::Ordering;

/// An input a form refers to: integer scalar parameter `p` is key `p`; the length of array
/// parameter `a` is key `params + a` (`params`: the kernel's parameter count).
pub(super) type Key = u16;

/// Most inputs one form refers to.
const TERMS: usize = 4;

/// `c + Σ coeffs[i] · input(keys[i])`, its keys sorted and its coefficients nonzero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Form {
    c: i128,
    n: u8,
    keys: [Key; TERMS],
    coeffs: [i64; TERMS],
}

impl Form {
    fn constant(c: i128) -> Form {
        Form {
            c,
            n: 0,
            keys: [0; TERMS],
            coeffs: [0; TERMS],
        }
    }

    fn input(key: Key) -> Form {
        let mut f = Form::constant(0);
        f.n = 1;
        f.keys[0] = key;
        f.coeffs[0] = 1;
        f
    }

    fn is_constant(&self) -> bool {
        self.n == 0
    }

    fn terms(&self) -> impl Iterator<Item = (Key, i64)> + '_ {
        (0..self.n as usize).map(|i| (self.keys[i], self.coeffs[i]))
    }

    /// `self + sign · o`; `None` where it needs more than [`TERMS`] inputs or overflows.
    fn plus(&self, o: &Form, sign: i64) -> Option<Form> {
        let mut out = Form::constant(self.c.checked_add(o.c.checked_mul(sign as i128)?)?);
        let (mut i, mut j) = (0, 0);
        let (a, b) = (self.n as usize, o.n as usize);
        while i < a || j < b {
            let (key, coeff) = if j >= b || (i < a && self.keys[i] < o.keys[j]) {
                i += 1;
                (self.keys[i - 1], self.coeffs[i - 1])
            } else if i >= a || o.keys[j] < self.keys[i] {
                j += 1;
                (o.keys[j - 1], o.coeffs[j - 1].checked_mul(sign)?)
            } else {
                i += 1;
                j += 1;
                (
                    self.keys[i - 1],
                    self.coeffs[i - 1].checked_add(o.coeffs[j - 1].checked_mul(sign)?)?,
                )
            };
            if coeff != 0 {
                let k = out.n as usize;
                if k == TERMS {
                    return None;
                }
                out.keys[k] = key;
                out.coeffs[k] = coeff;
                out.n += 1;
            }
        }
        Some(out)
    }

    /// `k · self`.
    fn scaled(&self, k: i128) -> Option<Form> {
        if k == 0 {
            return Some(Form::constant(0));
        }
        let mut out = Form::constant(self.c.checked_mul(k)?);
        let k = i64::try_from(k).ok()?;
        for (i, (key, coeff)) in self.terms().enumerate() {
            out.keys[i] = key;
            out.coeffs[i] = coeff.checked_mul(k)?;
        }
        out.n = self.n;
        Some(out)
    }

    /// Its value for `inputs` (by key); `None` where an input is missing or it overflows.
    fn eval(&self, inputs: &[i128]) -> Option<i128> {
        let mut v = self.c;
        for (key, coeff) in self.terms() {
            v = v.checked_add(inputs.get(key as usize)?.checked_mul(coeff as i128)?)?;
        }
        Some(v)
    }
}

/// The comparisons a proof decided: each the form of `a - b` and the sign it had.
#[derive(Debug, Default)]
pub(super) struct Record {
    guards: Vec<(Form, Ordering)>,
    /// False once a comparison involved a value that is not affine in the inputs.
    not_general: bool,
}

impl Record {
    /// The guards under which the proof holds; `None` where it holds for its own inputs
    /// only.
    pub(super) fn guards(self) -> Option<Guards> {
        if self.not_general {
            return None;
        }
        // A guard on one input is a range of it: those of each input are intersected.
        let mut ranges: Vec<(Key, i128, i128)> = Vec::new();
        let mut multi = Vec::new();
        for (f, sign) in self.guards {
            if f.n != 1 || f.c.unsigned_abs() >= 1 << 120 {
                if !multi.contains(&(f, sign)) {
                    multi.push((f, sign));
                }
                continue;
            }
            // k·x + c against 0, as x against -c/k.
            let (key, k, c) = (f.keys[0], f.coeffs[0] as i128, f.c);
            let (k, c, sign) = if k < 0 {
                (-k, -c, sign.reverse())
            } else {
                (k, c, sign)
            };
            let (lo, hi) = match sign {
                Ordering::Greater => ((-c).div_euclid(k) + 1, i128::MAX),
                Ordering::Less => (i128::MIN, -c.div_euclid(k) - 1),
                Ordering::Equal if c % k == 0 => (-c / k, -c / k),
                Ordering::Equal => (1, 0),
            };
            match ranges.iter_mut().find(|r| r.0 == key) {
                Some(r) => {
                    r.1 = r.1.max(lo);
                    r.2 = r.2.min(hi);
                }
                None => ranges.push((key, lo, hi)),
            }
        }
        // Guards whose terms cannot overflow (small coefficients and constant) are evaluated
        // without checks.
        let small = |f: &Form| {
            f.c.unsigned_abs() < 1 << 100 && f.terms().all(|(_, k)| k.unsigned_abs() < 1 << 20)
        };
        let (fast, checked) = multi.into_iter().partition(|(f, _)| small(f));
        Some(Guards {
            ranges,
            fast,
            checked,
        })
    }
}

/// Conditions on a launch's inputs under which a recorded proof's verdict holds: ranges of
/// single inputs, and signs of affine forms of several.
#[derive(Debug)]
pub(super) struct Guards {
    ranges: Vec<(Key, i128, i128)>,
    /// Forms whose value cannot overflow for inputs of 64 bits.
    fast: Vec<(Form, Ordering)>,
    checked: Vec<(Form, Ordering)>,
}

impl Guards {
    /// Whether every comparison of the recorded proof comes out the same for `inputs`
    /// (values of at most 64 bits, by key).
    pub(super) fn hold(&self, inputs: &[i128]) -> bool {
        self.ranges.iter().all(|&(key, lo, hi)| {
            inputs
                .get(key as usize)
                .is_some_and(|&x| lo <= x && x <= hi)
        }) && self.fast.iter().all(|(f, sign)| {
            let mut v = f.c;
            for i in 0..f.n as usize {
                match inputs.get(f.keys[i] as usize) {
                    // |x| < 2^64, |k| < 2^20, at most four terms and |c| < 2^100: no overflow.
                    Some(&x) => v += x * f.coeffs[i] as i128,
                    None => return false,
                }
            }
            v.cmp(&0) == *sign
        }) && self
            .checked
            .iter()
            .all(|(f, sign)| f.eval(inputs).is_some_and(|v| v.cmp(&0) == *sign))
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.ranges.len() + self.fast.len() + self.checked.len()
    }
}

/// A number of the proof.
pub(super) trait Num: Clone + std::fmt::Debug {
    fn int(v: i128) -> Self;
    /// Input `key`, whose value in this launch is `v`.
    fn input(key: Key, v: i128) -> Self;
    /// Its value in this launch.
    fn value(&self) -> i128;
    fn add(&self, o: &Self) -> Self;
    fn sub(&self, o: &Self) -> Self;
    fn neg(&self) -> Self;
    /// `None` on overflow.
    fn mul(&self, o: &Self) -> Option<Self>;
    /// Rust's `/` (the proof divides non-negative by positive values only).
    fn div(&self, o: &Self) -> Self;
    /// `self · 2^k`; `None` on overflow.
    fn shl(&self, k: u32) -> Option<Self>;
    /// `self >> k` (of a non-negative value).
    fn shr(&self, k: u32) -> Self;
    /// Compares, recording the outcome in `rec` where the number knows its form.
    fn compare(&self, o: &Self, rec: &mut Record) -> Ordering;
}

impl Num for i128 {
    fn int(v: i128) -> Self {
        v
    }
    fn input(_: Key, v: i128) -> Self {
        v
    }
    fn value(&self) -> i128 {
        *self
    }
    fn add(&self, o: &Self) -> Self {
        self + o
    }
    fn sub(&self, o: &Self) -> Self {
        self - o
    }
    fn neg(&self) -> Self {
        -self
    }
    fn mul(&self, o: &Self) -> Option<Self> {
        self.checked_mul(*o)
    }
    fn div(&self, o: &Self) -> Self {
        self / o
    }
    fn shl(&self, k: u32) -> Option<Self> {
        self.checked_mul(1i128.checked_shl(k)?)
    }
    fn shr(&self, k: u32) -> Self {
        self >> k
    }
    #[inline]
    fn compare(&self, o: &Self, _: &mut Record) -> Ordering {
        self.cmp(o)
    }
}

/// A value and, where it is affine in the inputs, its form.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sym {
    v: i128,
    f: Option<Form>,
}

impl Sym {
    /// `op` on the values, and on the forms where both are constant (a constant's any
    /// operation is a constant).
    fn lift(&self, o: &Sym, v: i128) -> Sym {
        let constant =
            self.f.is_some_and(|f| f.is_constant()) && o.f.is_some_and(|f| f.is_constant());
        Sym {
            v,
            f: constant.then(|| Form::constant(v)),
        }
    }
}

impl Num for Sym {
    fn int(v: i128) -> Self {
        Sym {
            v,
            f: Some(Form::constant(v)),
        }
    }
    fn input(key: Key, v: i128) -> Self {
        Sym {
            v,
            f: Some(Form::input(key)),
        }
    }
    fn value(&self) -> i128 {
        self.v
    }
    fn add(&self, o: &Self) -> Self {
        Sym {
            v: self.v + o.v,
            f: self.f.zip(o.f).and_then(|(a, b)| a.plus(&b, 1)),
        }
    }
    fn sub(&self, o: &Self) -> Self {
        Sym {
            v: self.v - o.v,
            f: self.f.zip(o.f).and_then(|(a, b)| a.plus(&b, -1)),
        }
    }
    fn neg(&self) -> Self {
        Sym {
            v: -self.v,
            f: self.f.and_then(|a| a.scaled(-1)),
        }
    }
    fn mul(&self, o: &Self) -> Option<Self> {
        let v = self.v.checked_mul(o.v)?;
        let f = match (self.f, o.f) {
            (Some(a), Some(b)) if a.is_constant() => b.scaled(a.c),
            (Some(a), Some(b)) if b.is_constant() => a.scaled(b.c),
            _ => None,
        };
        Some(Sym { v, f })
    }
    fn div(&self, o: &Self) -> Self {
        let v = self.v / o.v;
        match o.f {
            Some(b) if b.is_constant() && b.c == 1 => Sym { v, f: self.f },
            _ => self.lift(o, v),
        }
    }
    fn shl(&self, k: u32) -> Option<Self> {
        self.mul(&Sym::int(1i128.checked_shl(k)?))
    }
    fn shr(&self, k: u32) -> Self {
        let v = self.v >> k;
        if k == 0 {
            return *self;
        }
        self.lift(&Sym::int(0), v)
    }
    fn compare(&self, o: &Self, rec: &mut Record) -> Ordering {
        let ord = self.v.cmp(&o.v);
        match self.f.zip(o.f).and_then(|(a, b)| a.plus(&b, -1)) {
            Some(d) if d.is_constant() => {}
            Some(d) => rec.guards.push((d, ord)),
            None => rec.not_general = true,
        }
        ord
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_add_scale_and_evaluate() {
        let (a, b) = (Sym::input(0, 5), Sym::input(2, 7));
        // 3a - (b - 1) + 2b = 3a + b + 1
        let x = a
            .mul(&Sym::int(3))
            .unwrap()
            .sub(&b.sub(&Sym::int(1)))
            .add(&b.mul(&Sym::int(2)).unwrap());
        assert_eq!(x.v, 3 * 5 + 7 + 1);
        let f = x.f.expect("affine");
        assert_eq!(f.eval(&[5, 0, 7]), Some(x.v));
        assert_eq!(f.eval(&[1, 0, 2]), Some(3 + 2 + 1));
        // a - a is the constant 0: comparing it records nothing.
        let mut rec = Record::default();
        assert_eq!(a.sub(&a).compare(&Sym::int(0), &mut rec), Ordering::Equal);
        assert_eq!(rec.guards.len(), 0);
        // A product of two inputs is not affine: comparing it is not general.
        let p = a.mul(&b).unwrap();
        assert!(p.f.is_none());
        p.compare(&Sym::int(0), &mut rec);
        assert!(rec.guards().is_none());
    }

    #[test]
    fn guards_hold_where_every_comparison_comes_out_the_same() {
        let (d, n) = (Sym::input(0, 10), Sym::input(1, 100));
        let mut rec = Record::default();
        // d < n and d + 1 > 0.
        assert_eq!(d.compare(&n, &mut rec), Ordering::Less);
        assert_eq!(
            d.add(&Sym::int(1)).compare(&Sym::int(0), &mut rec),
            Ordering::Greater
        );
        let g = rec.guards().expect("affine");
        assert!(g.hold(&[10, 100]));
        assert!(g.hold(&[0, 1]));
        assert!(!g.hold(&[100, 100]), "d < n no longer holds");
        assert!(!g.hold(&[-1, 100]), "d + 1 > 0 no longer holds");
        assert!(!g.hold(&[0]), "a missing input holds nothing");
    }
}
