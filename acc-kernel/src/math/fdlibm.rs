//! The algorithms: fdlibm's range reductions and polynomials, as [`MathProgram`]s.

// fdlibm's constants, as fdlibm writes them (they round to the intended doubles).
#![allow(clippy::excessive_precision)]

use super::{Builder, Compare, FUnary, IBinary, MathProgram, Value};
use crate::MathFn;

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const PIO2_1: f64 = 1.57079632673412561417e+00;
const PIO2_2: f64 = 6.07710050650619224932e-11;
const PIO2_3: f64 = 2.02226624879595063154e-21;

/// The program computing `f` in `f64`, for the transcendental functions (`exp exp2 ln log2
/// log10 sin cos tan asin acos atan atan2 sinh cosh tanh cbrt powf`); `None` for the others,
/// which targets compute directly. `for_f32`: the result will be rounded to `f32`, so a shorter
/// series may do where that keeps the error far inside an `f32` unit (`exp`).
pub fn program(f: MathFn, for_f32: bool) -> Option<MathProgram> {
    let mut b = Builder::default();
    let x = b.arg();
    let v = match f {
        MathFn::Exp if for_f32 => exp_for_f32(&mut b, x),
        MathFn::Exp => exp(&mut b, x),
        MathFn::Exp2 => exp2(&mut b, x),
        MathFn::Ln => ln(&mut b, x),
        MathFn::Log2 => {
            let l = ln(&mut b, x);
            b.mulk(l, std::f64::consts::LOG2_E)
        }
        MathFn::Log10 => {
            let l = ln(&mut b, x);
            b.mulk(l, std::f64::consts::LOG10_E)
        }
        MathFn::Sin => sincos(&mut b, x).0,
        MathFn::Cos => sincos(&mut b, x).1,
        MathFn::Tan => {
            let (s, c) = sincos(&mut b, x);
            b.div(s, c)
        }
        MathFn::Atan => atan(&mut b, x),
        MathFn::Atan2 => {
            let y = b.arg();
            atan2(&mut b, x, y)
        }
        MathFn::Asin | MathFn::Acos => {
            let one = b.f(1.0);
            let p = b.sub(one, x);
            let q = b.add(one, x);
            let r = b.mul(p, q);
            let r = b.un(FUnary::Sqrt, r);
            if f == MathFn::Asin {
                atan2(&mut b, x, r)
            } else {
                atan2(&mut b, r, x)
            }
        }
        MathFn::Sinh | MathFn::Cosh | MathFn::Tanh => hyperbolic(&mut b, f, x),
        MathFn::Cbrt => cbrt(&mut b, x),
        MathFn::Powf => {
            let y = b.arg();
            powf(&mut b, x, y)
        }
        _ => return None,
    };
    Some(b.finish(v))
}

/// `2^k` for an integral `k` (an `f64`) in [-1022, 1023].
fn pow2(b: &mut Builder, k: Value) -> Value {
    let i = b.int_of(k);
    let e = b.ibink(IBinary::Add, i, 1023);
    let e = b.shl(e, 52);
    b.float_of_bits(e)
}

/// `p * 2^k` for an integral `k` in [-1100, 1100], rounding once.
fn scale(b: &mut Builder, p: Value, k: Value) -> Value {
    let k1 = b.mulk(k, 0.5);
    let k1 = b.un(FUnary::Floor, k1);
    let k2 = b.sub(k, k1);
    let (s1, s2) = (pow2(b, k1), pow2(b, k2));
    let t = b.mul(p, s1);
    b.mul(t, s2)
}

fn clamp_k(b: &mut Builder, k: Value) -> Value {
    let lo = b.f(-1100.0);
    let k = b.bin(super::FBinary::Max, k, lo);
    let hi = b.f(1100.0);
    b.bin(super::FBinary::Min, k, hi)
}

/// `e^r` for |r| <= ln(2)/2 (Taylor series to degree 13: error below 1e-17).
fn exp_kernel(b: &mut Builder, r: Value) -> Value {
    let mut c = [1.0f64; 14];
    for n in 1..14 {
        c[n] = c[n - 1] / n as f64;
    }
    b.poly(r, &c)
}

/// `x = k ln 2 + r`, |r| <= ln(2)/2: (k, r).
fn reduce_ln2(b: &mut Builder, x: Value) -> (Value, Value) {
    let t = b.mulk(x, std::f64::consts::LOG2_E);
    let k = b.un(FUnary::RoundEven, t);
    let nk = b.neg(k);
    let hi = b.f(LN2_HI);
    let r = b.fma(nk, hi, x);
    let lo = b.f(LN2_LO);
    let r = b.fma(nk, lo, r);
    (k, r)
}

fn exp(b: &mut Builder, x: Value) -> Value {
    let (k, r) = reduce_ln2(b, x);
    let p = exp_kernel(b, r);
    let kc = clamp_k(b, k);
    let v = scale(b, p, kc);
    let big = b.cmpk(Compare::Gt, x, 709.782712893384);
    let v = b.selectk(big, f64::INFINITY, v);
    let small = b.cmpk(Compare::Lt, x, -745.1332191019412);
    b.selectk(small, 0.0, v)
}

/// `e^x` to be rounded to `f32`: the same reduction as [`exp`], a series to degree 10
/// (relative error below 3e-13, far inside an `f32` unit in the last place) and one scaling by
/// `2^k` (exact for the `k` of `f32` results, whose range is far inside the exponent's; beyond
/// it the selects decide).
fn exp_for_f32(b: &mut Builder, x: Value) -> Value {
    let (k, r) = reduce_ln2(b, x);
    let mut c = [1.0f64; 11];
    for n in 1..11 {
        c[n] = c[n - 1] / n as f64;
    }
    let p = b.poly(r, &c);
    let s2 = pow2(b, k);
    let v = b.mul(p, s2);
    let big = b.cmpk(Compare::Gt, x, 709.0);
    let v = b.selectk(big, f64::INFINITY, v);
    let small = b.cmpk(Compare::Lt, x, -708.0);
    b.selectk(small, 0.0, v)
}

fn exp2(b: &mut Builder, x: Value) -> Value {
    let k = b.un(FUnary::RoundEven, x);
    let f = b.sub(x, k);
    let r = b.mulk(f, std::f64::consts::LN_2);
    let p = exp_kernel(b, r);
    let kc = clamp_k(b, k);
    let v = scale(b, p, kc);
    let big = b.cmpk(Compare::Gt, x, 1024.0);
    let v = b.selectk(big, f64::INFINITY, v);
    let small = b.cmpk(Compare::Lt, x, -1080.0);
    b.selectk(small, 0.0, v)
}

/// ln: x = 2^e * m with m in [sqrt(1/2), sqrt(2)); ln(m) = 2 atanh(s), s = (m-1)/(m+1).
fn ln(b: &mut Builder, x: Value) -> Value {
    // Subnormals are scaled into the normal range first.
    let tiny = b.cmpk(Compare::Lt, x, f64::MIN_POSITIVE);
    let xs = b.mulk(x, 2f64.powi(54));
    let xs = b.select(tiny, xs, x);
    let (m54, zero) = (b.i(-54), b.i(0));
    let adj = b.select(tiny, m54, zero);
    let bits = b.bits_of(xs);
    let e = b.shr(bits, 52);
    let e = b.ibink(IBinary::And, e, 2047);
    let e = b.ibink(IBinary::Add, e, -1023);
    let e = b.ibin(IBinary::Add, e, adj);
    let mb = b.ibink(IBinary::And, bits, 4503599627370495);
    let mb = b.ibink(IBinary::Or, mb, 4607182418800017408);
    let m = b.float_of_bits(mb);
    // m in [sqrt(1/2), sqrt(2)).
    let over = b.cmpk(Compare::Gt, m, std::f64::consts::SQRT_2);
    let mh = b.mulk(m, 0.5);
    let m = b.select(over, mh, m);
    let (one, zero) = (b.i(1), b.i(0));
    let inc = b.select(over, one, zero);
    let e = b.ibin(IBinary::Add, e, inc);
    let ef = b.float_of(e);
    let one = b.f(1.0);
    let f = b.sub(m, one);
    let two = b.f(2.0);
    let d = b.add(f, two);
    let s = b.div(f, d);
    let z = b.mul(s, s);
    let c: Vec<f64> = (0..11).map(|n| 1.0 / (2 * n + 3) as f64).collect();
    let p = b.poly(z, &c);
    let zp = b.mul(z, p);
    let s2 = b.add(s, s);
    let lm = b.fma(s2, zp, s2);
    let lo = b.f(LN2_LO);
    let t = b.fma(ef, lo, lm);
    let hi = b.f(LN2_HI);
    let v = b.fma(ef, hi, t);
    // ln(0) = -inf, ln(inf) = inf, ln(x < 0) and ln(NaN) = NaN.
    let is_zero = b.cmpk(Compare::Eq, x, 0.0);
    let v = b.selectk(is_zero, f64::NEG_INFINITY, v);
    let inf = b.cmpk(Compare::Eq, x, f64::INFINITY);
    let v = b.selectk(inf, f64::INFINITY, v);
    let bad = b.cmpk(Compare::LtOrNan, x, 0.0);
    b.selectk(bad, f64::NAN, v)
}

/// sin and cos of x: reduced by pi/2 in three parts, the quadrant k mod 4 picking sin: s, c,
/// -s, -c and cos: c, -s, -c, s.
fn sincos(b: &mut Builder, x: Value) -> (Value, Value) {
    let t = b.mulk(x, std::f64::consts::FRAC_2_PI);
    let k = b.un(FUnary::RoundEven, t);
    let nk = b.neg(k);
    let mut r = x;
    for part in [PIO2_1, PIO2_2, PIO2_3] {
        let p = b.f(part);
        r = b.fma(nk, p, r);
    }
    let z = b.mul(r, r);
    let sp = b.poly(
        z,
        &[
            -1.66666666666666324348e-01,
            8.33333333332248946124e-03,
            -1.98412698298579493134e-04,
            2.75573137070700676789e-06,
            -2.50507602534068634195e-08,
            1.58969099521155010221e-10,
        ],
    );
    let r3 = b.mul(z, r);
    let s = b.fma(r3, sp, r);
    let cp = b.poly(
        z,
        &[
            4.16666666666666019037e-02,
            -1.38888888888741095749e-03,
            2.48015872894767294178e-05,
            -2.75573143513906633035e-07,
            2.08757232129817482790e-09,
            -1.13596475577881948265e-11,
        ],
    );
    let z2 = b.mul(z, z);
    let (half, one) = (b.f(-0.5), b.f(1.0));
    let w = b.fma(half, z, one);
    let c = b.fma(z2, cp, w);
    let q = b.int_of(k);
    let q = b.ibink(IBinary::And, q, 3);
    let low = b.ibink(IBinary::And, q, 1);
    let odd = b.icmpk(Compare::Ne, low, 0);
    let neg_s = b.icmpk(Compare::Ge, q, 2);
    let u = b.ibink(IBinary::Add, q, 1);
    let u = b.ibink(IBinary::And, u, 2);
    let neg_c = b.icmpk(Compare::Ne, u, 0);
    let sv = b.select(odd, c, s);
    let cv = b.select(odd, s, c);
    let nsv = b.neg(sv);
    let ncv = b.neg(cv);
    (b.select(neg_s, nsv, sv), b.select(neg_c, ncv, cv))
}

/// atan: fdlibm's intervals, [0, 7/16) directly, then four reductions to a small argument.
fn atan(b: &mut Builder, x: Value) -> Value {
    let ax = b.abs(x);
    let one = b.f(1.0);
    let two = b.f(2.0);
    let three_halves = b.f(1.5);
    let i = [0.4375, 0.6875, 1.1875, 2.4375].map(|t| b.cmpk(Compare::Ge, ax, t));
    let minus_one = b.f(-1.0);
    let n0 = b.fma(two, ax, minus_one);
    let d0 = b.add(two, ax);
    let t0 = b.div(n0, d0);
    let n1 = b.sub(ax, one);
    let d1 = b.add(ax, one);
    let t1 = b.div(n1, d1);
    let n2 = b.sub(ax, three_halves);
    let d2 = b.fma(three_halves, ax, one);
    let t2 = b.div(n2, d2);
    let m1 = b.f(-1.0);
    let t3 = b.div(m1, ax);
    let t = b.select(i[0], t0, ax);
    let t = b.select(i[1], t1, t);
    let t = b.select(i[2], t2, t);
    let t = b.select(i[3], t3, t);
    let hi = [
        4.63647609000806093515e-01,
        std::f64::consts::FRAC_PI_4,
        9.82793723247329054082e-01,
        std::f64::consts::FRAC_PI_2,
    ];
    let lo = [
        2.26987774529616870924e-17,
        3.06161699786838301793e-17,
        1.39033110312309984516e-17,
        6.12323399573676603587e-17,
    ];
    let mut h = b.f(0.0);
    let mut l = b.f(0.0);
    for (p, (&hv, &lv)) in i.into_iter().zip(hi.iter().zip(&lo)) {
        h = b.selectk(p, hv, h);
        l = b.selectk(p, lv, l);
    }
    let z = b.mul(t, t);
    let w = b.mul(z, z);
    let a = [
        3.33333333333329318027e-01,
        -1.99999999998764832476e-01,
        1.42857142725034663711e-01,
        -1.11111104054623557880e-01,
        9.09088713343650656196e-02,
        -7.69187620504482999495e-02,
        6.66107313738753120669e-02,
        -5.83357013379057348645e-02,
        4.97687799461593236017e-02,
        -3.65315727442169155270e-02,
        1.62858201153657823623e-02,
    ];
    let even: Vec<f64> = a.iter().step_by(2).copied().collect();
    let odd: Vec<f64> = a.iter().skip(1).step_by(2).copied().collect();
    let s1 = b.poly(w, &even);
    let s1 = b.mul(z, s1);
    let s2 = b.poly(w, &odd);
    let s2 = b.mul(w, s2);
    let s = b.add(s1, s2);
    let ts = b.mul(t, s);
    // Direct: t - t*s; reduced: hi - ((t*s - lo) - t).
    let direct = b.sub(t, ts);
    let r = b.sub(ts, l);
    let r = b.sub(r, t);
    let reduced = b.sub(h, r);
    let v = b.select(i[0], reduced, direct);
    b.copysign(v, x)
}

fn atan2(b: &mut Builder, y: Value, x: Value) -> Value {
    let q = b.div(y, x);
    let a = atan(b, q);
    let pi = b.f(std::f64::consts::PI);
    let spi = b.copysign(pi, y);
    // x < 0 (or -0): add or subtract pi with y's sign.
    let xb = b.bits_of(x);
    let xneg = b.icmpk(Compare::Lt, xb, 0);
    let shifted = b.add(a, spi);
    let v = b.select(xneg, shifted, a);
    // x = ±0: ±pi/2 for y != 0; y = ±0: ±0 or ±pi.
    let xz = b.cmpk(Compare::Eq, x, 0.0);
    let half_pi = b.f(std::f64::consts::FRAC_PI_2);
    let hp = b.copysign(half_pi, y);
    let v = b.select(xz, hp, v);
    let yz = b.cmpk(Compare::Eq, y, 0.0);
    let on_axis = b.select(xneg, spi, y);
    let v = b.select(yz, on_axis, v);
    // Both infinite: ±pi/4 or ±3pi/4.
    let (xa, ya) = (b.abs(x), b.abs(y));
    let xi = b.cmpk(Compare::Eq, xa, f64::INFINITY);
    let yi = b.cmpk(Compare::Eq, ya, f64::INFINITY);
    let both = b.and(xi, yi);
    let quarter = b.f(std::f64::consts::FRAC_PI_4);
    let three = b.f(3.0 * std::f64::consts::FRAC_PI_4);
    let corner = b.select(xneg, three, quarter);
    let sc = b.copysign(corner, y);
    let v = b.select(both, sc, v);
    // NaN in, NaN out.
    let (xn, yn) = (b.is_nan(x), b.is_nan(y));
    let nan = b.or(xn, yn);
    b.selectk(nan, f64::NAN, v)
}

/// sinh for |x| < 0.5: x + x^3 (1/3! + x^2/5! + ...).
fn sinh_small(b: &mut Builder, x: Value) -> Value {
    let z = b.mul(x, x);
    let mut c = Vec::new();
    let mut f = 6.0f64;
    for n in 0..8 {
        c.push(1.0 / f);
        f *= ((2 * n + 4) * (2 * n + 5)) as f64;
    }
    let p = b.poly(z, &c);
    let x3 = b.mul(z, x);
    b.fma(x3, p, x)
}

/// sinh, cosh and tanh of x.
fn hyperbolic(b: &mut Builder, f: MathFn, x: Value) -> Value {
    let ax = b.abs(x);
    let small = b.cmpk(Compare::Lt, ax, 0.5);
    let ln2 = b.f(std::f64::consts::LN_2);
    let shifted = b.sub(ax, ln2);
    let h = exp(b, shifted); // e^|x| / 2
    let quarter = b.f(0.25);
    let inv = b.div(quarter, h); // e^-|x| / 2
    match f {
        MathFn::Sinh => {
            let big = b.sub(h, inv);
            let big = b.copysign(big, x);
            let s = sinh_small(b, x);
            b.select(small, s, big)
        }
        MathFn::Cosh => b.add(h, inv),
        _ => {
            // tanh = 1 - 2 / (e^2|x| + 1); for small |x|, sinh / sqrt(1 + sinh^2).
            let two_ax = b.add(ax, ax);
            let e2 = exp(b, two_ax);
            let one = b.f(1.0);
            let d = b.add(e2, one);
            let two = b.f(2.0);
            let q = b.div(two, d);
            let big = b.sub(one, q);
            let big = b.copysign(big, x);
            let s = sinh_small(b, x);
            let c = b.fma(s, s, one);
            let c = b.un(FUnary::Sqrt, c);
            let t = b.div(s, c);
            let v = b.select(small, t, big);
            let huge = b.cmpk(Compare::Gt, ax, 22.0);
            let sign = b.copysign(one, x);
            b.select(huge, sign, v)
        }
    }
}

/// cbrt: `e^(ln|x| / 3)` and one Newton step, `y - (y^3 - |x|) / (3 y^2)`.
fn cbrt(b: &mut Builder, x: Value) -> Value {
    let ax = b.abs(x);
    let l = ln(b, ax);
    let e = b.mulk(l, 1.0 / 3.0);
    let y = exp(b, e);
    let y2 = b.mul(y, y);
    let y3 = b.mul(y2, y);
    let num = b.sub(y3, ax);
    let den = b.mulk(y2, 3.0);
    let step = b.div(num, den);
    let y = b.sub(y, step);
    // 0, inf and NaN are their own cube roots.
    let above = b.cmpk(Compare::Gt, ax, 0.0);
    let finite = b.cmpk(Compare::Lt, ax, f64::INFINITY);
    let ordinary = b.and(above, finite);
    let y = b.copysign(y, x);
    b.select(ordinary, y, x)
}

/// x^y as std's `powf` (a negative base with an integral exponent included; y = 0 or x = 1
/// give 1, even with a NaN).
fn powf(b: &mut Builder, x: Value, y: Value) -> Value {
    let ax = b.abs(x);
    let l = ln(b, ax);
    let t = b.mul(y, l);
    let r = exp(b, t);
    // Negative base: an odd integral exponent negates, a non-integral one is NaN.
    let yi = b.un(FUnary::Trunc, y);
    let integral = b.cmp(Compare::Eq, yi, y);
    let hy = b.mulk(y, 0.5);
    let hyi = b.un(FUnary::Trunc, hy);
    let even = b.cmp(Compare::Eq, hyi, hy);
    let xneg = b.cmpk(Compare::Lt, x, 0.0);
    let nr = b.neg(r);
    let signed = b.select(even, r, nr);
    let nan = b.f(f64::NAN);
    let neg_result = b.select(integral, signed, nan);
    let v = b.select(xneg, neg_result, r);
    let y0 = b.cmpk(Compare::Eq, y, 0.0);
    let x1 = b.cmpk(Compare::Eq, x, 1.0);
    let any = b.or(y0, x1);
    b.selectk(any, 1.0, v)
}
