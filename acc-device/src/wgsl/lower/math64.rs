//! The f64 transcendental functions WGSL lacks (it has them for f32 only), written in WGSL:
//! the PTX backend's algorithms (`ptx/lower/math.rs`: range reduction and polynomials from
//! fdlibm, which Rust's `libm` and musl derive from), so that both GPU backends agree with std
//! to within a few units in the last place for arguments of ordinary size. `sin`, `cos` and
//! `tan` reduce by pi/2 with a three-part constant and lose accuracy for |x| beyond about 1e9.

// fdlibm's constants, as fdlibm writes them (they round to the intended doubles).
#![allow(clippy::excessive_precision)]

use std::fmt::Write;

use acc_core::ir::MathFn;

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const PIO2_1: f64 = 1.57079632673412561417e+00;
const PIO2_2: f64 = 6.07710050650619224932e-11;
const PIO2_3: f64 = 2.02226624879595063154e-21;

/// An f64 constant as WGSL, exactly (Rust prints the shortest text that reads back as the
/// same double; infinities and NaN by their bits).
fn k(v: f64) -> String {
    if v.is_finite() {
        format!("f64({v:e})")
    } else {
        format!("bitcast<f64>({}lu)", v.to_bits())
    }
}

/// `c[0] + x * (c[1] + x * (...))` with fused multiply-adds.
fn poly(x: &str, c: &[f64]) -> String {
    let mut acc = k(c[c.len() - 1]);
    for &ci in c[..c.len() - 1].iter().rev() {
        acc = format!("fma({x}, {acc}, {})", k(ci));
    }
    acc
}

/// The WGSL function computing `f` on f64 arguments, if WGSL lacks it: its name.
pub(super) fn function(f: MathFn) -> Option<&'static str> {
    use MathFn::*;
    Some(match f {
        Exp => "acc_exp64",
        Exp2 => "acc_exp2_64",
        Ln => "acc_ln64",
        Log2 => "acc_log2_64",
        Log10 => "acc_log10_64",
        Sin => "acc_sin64",
        Cos => "acc_cos64",
        Tan => "acc_tan64",
        Asin => "acc_asin64",
        Acos => "acc_acos64",
        Atan => "acc_atan64",
        Atan2 => "acc_atan2_64",
        Sinh => "acc_sinh64",
        Cosh => "acc_cosh64",
        Tanh => "acc_tanh64",
        Cbrt => "acc_cbrt64",
        Powf => "acc_powf64",
        _ => return None,
    })
}

/// All the functions (WGSL drops the ones a kernel does not call).
pub(super) fn helpers() -> String {
    let mut out = String::new();
    let inf = k(f64::INFINITY);
    let nan = k(f64::NAN);
    let w = &mut out;
    let _ = writeln!(
        w,
        "fn acc_copysign64(mag: f64, sign: f64) -> f64 {{\n\
         \x20   return bitcast<f64>((bitcast<u64>(mag) & 9223372036854775807lu) | (bitcast<u64>(sign) & 9223372036854775808lu));\n\
         }}\n\
         fn acc_isnan64(x: f64) -> bool {{\n\
         \x20   return (bitcast<u64>(x) & 9223372036854775807lu) > 9218868437227405312lu;\n\
         }}\n\
         // 2^k for an integral k in [-1022, 1023].\n\
         fn acc_pow2_64(k: f64) -> f64 {{\n\
         \x20   return bitcast<f64>(u64(i64(k) + 1023li) << 52u);\n\
         }}\n\
         // p * 2^k for an integral k in [-1100, 1100], rounding once.\n\
         fn acc_scale64(p: f64, k: f64) -> f64 {{\n\
         \x20   let k1 = floor(k * f64(0.5));\n\
         \x20   return p * acc_pow2_64(k1) * acc_pow2_64(k - k1);\n\
         }}"
    );
    // e^r for |r| <= ln(2)/2: Taylor series to degree 13 (error below 1e-17).
    let mut c = [1.0f64; 14];
    for n in 1..14 {
        c[n] = c[n - 1] / n as f64;
    }
    let _ = writeln!(
        w,
        "fn acc_exp_kernel64(r: f64) -> f64 {{\n    return {};\n}}",
        poly("r", &c)
    );
    let _ = writeln!(
        w,
        "fn acc_exp64(x: f64) -> f64 {{\n\
         \x20   let k = round(x * {log2e});\n\
         \x20   var r = fma(-k, {hi}, x);\n\
         \x20   r = fma(-k, {lo}, r);\n\
         \x20   var v = acc_scale64(acc_exp_kernel64(r), min(max(k, f64(-1100.0)), f64(1100.0)));\n\
         \x20   v = select(v, {inf}, x > {big});\n\
         \x20   return select(v, f64(0.0), x < {small});\n\
         }}\n\
         fn acc_exp2_64(x: f64) -> f64 {{\n\
         \x20   let k = round(x);\n\
         \x20   var v = acc_scale64(acc_exp_kernel64((x - k) * {ln2}), min(max(k, f64(-1100.0)), f64(1100.0)));\n\
         \x20   v = select(v, {inf}, x > f64(1024.0));\n\
         \x20   return select(v, f64(0.0), x < f64(-1080.0));\n\
         }}",
        log2e = k(std::f64::consts::LOG2_E),
        hi = k(LN2_HI),
        lo = k(LN2_LO),
        big = k(709.782712893384),
        small = k(-745.1332191019412),
        ln2 = k(std::f64::consts::LN_2),
    );
    // ln: x = 2^e * m with m in [sqrt(1/2), sqrt(2)); ln(m) = 2 atanh(s), s = (m-1)/(m+1).
    let c: Vec<f64> = (0..11).map(|n| 1.0 / (2 * n + 3) as f64).collect();
    let _ = writeln!(
        w,
        "fn acc_ln64(x: f64) -> f64 {{\n\
         \x20   let tiny = x < {min_pos};\n\
         \x20   let bits = bitcast<u64>(select(x, x * {two54}, tiny));\n\
         \x20   var e = i64((bits >> 52u) & 2047lu) - 1023li + select(0li, -54li, tiny);\n\
         \x20   var m = bitcast<f64>((bits & 4503599627370495lu) | 4607182418800017408lu);\n\
         \x20   let over = m > {sqrt2};\n\
         \x20   m = select(m, m * f64(0.5), over);\n\
         \x20   e = e + select(0li, 1li, over);\n\
         \x20   let ef = f64(e);\n\
         \x20   let f = m - f64(1.0);\n\
         \x20   let s = f / (f + f64(2.0));\n\
         \x20   let z = s * s;\n\
         \x20   let s2 = s + s;\n\
         \x20   let lm = fma(s2, z * {p}, s2);\n\
         \x20   var v = fma(ef, {hi}, fma(ef, {lo}, lm));\n\
         \x20   v = select(v, -{inf}, x == f64(0.0));\n\
         \x20   v = select(v, {inf}, x == {inf});\n\
         \x20   return select(v, {nan}, !(x >= f64(0.0)));\n\
         }}\n\
         fn acc_log2_64(x: f64) -> f64 {{ return acc_ln64(x) * {log2e}; }}\n\
         fn acc_log10_64(x: f64) -> f64 {{ return acc_ln64(x) * {log10e}; }}",
        min_pos = k(f64::MIN_POSITIVE),
        two54 = k(2f64.powi(54)),
        sqrt2 = k(std::f64::consts::SQRT_2),
        p = poly("z", &c),
        hi = k(LN2_HI),
        lo = k(LN2_LO),
        log2e = k(std::f64::consts::LOG2_E),
        log10e = k(std::f64::consts::LOG10_E),
    );
    let sin_c = [
        -1.66666666666666324348e-01,
        8.33333333332248946124e-03,
        -1.98412698298579493134e-04,
        2.75573137070700676789e-06,
        -2.50507602534068634195e-08,
        1.58969099521155010221e-10,
    ];
    let cos_c = [
        4.16666666666666019037e-02,
        -1.38888888888741095749e-03,
        2.48015872894767294178e-05,
        -2.75573143513906633035e-07,
        2.08757232129817482790e-09,
        -1.13596475577881948265e-11,
    ];
    // The quadrant k mod 4 picks sin: s, c, -s, -c and cos: c, -s, -c, s.
    let _ = writeln!(
        w,
        "fn acc_sincos64(x: f64) -> vec2<f64> {{\n\
         \x20   let k = round(x * {two_over_pi});\n\
         \x20   var r = fma(-k, {a}, x);\n\
         \x20   r = fma(-k, {b}, r);\n\
         \x20   r = fma(-k, {c}, r);\n\
         \x20   let z = r * r;\n\
         \x20   let s = fma(z * r, {sp}, r);\n\
         \x20   let co = fma(z * z, {cp}, fma(f64(-0.5), z, f64(1.0)));\n\
         \x20   let q = i64(k) & 3li;\n\
         \x20   let odd = (q & 1li) != 0li;\n\
         \x20   let sv = select(s, co, odd);\n\
         \x20   let cv = select(co, s, odd);\n\
         \x20   return vec2<f64>(select(sv, -sv, q >= 2li), select(cv, -cv, ((q + 1li) & 2li) != 0li));\n\
         }}\n\
         fn acc_sin64(x: f64) -> f64 {{ return acc_sincos64(x).x; }}\n\
         fn acc_cos64(x: f64) -> f64 {{ return acc_sincos64(x).y; }}\n\
         fn acc_tan64(x: f64) -> f64 {{ let v = acc_sincos64(x); return v.x / v.y; }}",
        two_over_pi = k(std::f64::consts::FRAC_2_PI),
        a = k(PIO2_1),
        b = k(PIO2_2),
        c = k(PIO2_3),
        sp = poly("z", &sin_c),
        cp = poly("z", &cos_c),
    );
    // atan: fdlibm's intervals, [0, 7/16) directly, then four reductions to a small argument.
    let atan_c = [
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
    let even: Vec<f64> = atan_c.iter().step_by(2).copied().collect();
    let odd: Vec<f64> = atan_c.iter().skip(1).step_by(2).copied().collect();
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
    let _ = writeln!(
        w,
        "fn acc_atan64(x: f64) -> f64 {{\n\
         \x20   let ax = abs(x);\n\
         \x20   let i0 = ax >= f64(0.4375);\n\
         \x20   let i1 = ax >= f64(0.6875);\n\
         \x20   let i2 = ax >= f64(1.1875);\n\
         \x20   let i3 = ax >= f64(2.4375);\n\
         \x20   var t = select(ax, fma(f64(2.0), ax, f64(-1.0)) / (f64(2.0) + ax), i0);\n\
         \x20   t = select(t, (ax - f64(1.0)) / (ax + f64(1.0)), i1);\n\
         \x20   t = select(t, (ax - f64(1.5)) / fma(f64(1.5), ax, f64(1.0)), i2);\n\
         \x20   t = select(t, f64(-1.0) / ax, i3);\n\
         \x20   var h = f64(0.0);\n\
         \x20   var l = f64(0.0);\n\
         \x20   h = select(h, {h0}, i0); l = select(l, {l0}, i0);\n\
         \x20   h = select(h, {h1}, i1); l = select(l, {l1}, i1);\n\
         \x20   h = select(h, {h2}, i2); l = select(l, {l2}, i2);\n\
         \x20   h = select(h, {h3}, i3); l = select(l, {l3}, i3);\n\
         \x20   let z = t * t;\n\
         \x20   let w = z * z;\n\
         \x20   let ts = t * (z * {even} + w * {odd});\n\
         \x20   let v = select(t - ts, h - ((ts - l) - t), i0);\n\
         \x20   return acc_copysign64(v, x);\n\
         }}",
        h0 = k(hi[0]),
        h1 = k(hi[1]),
        h2 = k(hi[2]),
        h3 = k(hi[3]),
        l0 = k(lo[0]),
        l1 = k(lo[1]),
        l2 = k(lo[2]),
        l3 = k(lo[3]),
        even = poly("w", &even),
        odd = poly("w", &odd),
    );
    let _ = writeln!(
        w,
        "fn acc_atan2_64(y: f64, x: f64) -> f64 {{\n\
         \x20   let a = acc_atan64(y / x);\n\
         \x20   let spi = acc_copysign64({pi}, y);\n\
         \x20   let xneg = bitcast<i64>(x) < 0li;\n\
         \x20   var v = select(a, a + spi, xneg);\n\
         \x20   v = select(v, acc_copysign64({half_pi}, y), x == f64(0.0));\n\
         \x20   v = select(v, select(y, spi, xneg), y == f64(0.0));\n\
         \x20   let corner = select({quarter}, {three_quarters}, xneg);\n\
         \x20   v = select(v, acc_copysign64(corner, y), abs(x) == {inf} && abs(y) == {inf});\n\
         \x20   return select(v, {nan}, acc_isnan64(x) || acc_isnan64(y));\n\
         }}\n\
         fn acc_asin64(x: f64) -> f64 {{ return acc_atan2_64(x, sqrt((f64(1.0) - x) * (f64(1.0) + x))); }}\n\
         fn acc_acos64(x: f64) -> f64 {{ return acc_atan2_64(sqrt((f64(1.0) - x) * (f64(1.0) + x)), x); }}",
        pi = k(std::f64::consts::PI),
        half_pi = k(std::f64::consts::FRAC_PI_2),
        quarter = k(std::f64::consts::FRAC_PI_4),
        three_quarters = k(3.0 * std::f64::consts::FRAC_PI_4),
    );
    // sinh for |x| < 0.5: x + x^3 (1/3! + x^2/5! + ...).
    let mut c = Vec::new();
    let mut f = 6.0f64;
    for n in 0..8 {
        c.push(1.0 / f);
        f *= ((2 * n + 4) * (2 * n + 5)) as f64;
    }
    let _ = writeln!(
        w,
        "fn acc_sinh_small64(x: f64) -> f64 {{\n\
         \x20   let z = x * x;\n\
         \x20   return fma(z * x, {p}, x);\n\
         }}\n\
         fn acc_sinh64(x: f64) -> f64 {{\n\
         \x20   let h = acc_exp64(abs(x) - {ln2});\n\
         \x20   return select(acc_copysign64(h - f64(0.25) / h, x), acc_sinh_small64(x), abs(x) < f64(0.5));\n\
         }}\n\
         fn acc_cosh64(x: f64) -> f64 {{\n\
         \x20   let h = acc_exp64(abs(x) - {ln2});\n\
         \x20   return h + f64(0.25) / h;\n\
         }}\n\
         fn acc_tanh64(x: f64) -> f64 {{\n\
         \x20   let ax = abs(x);\n\
         \x20   let big = acc_copysign64(f64(1.0) - f64(2.0) / (acc_exp64(ax + ax) + f64(1.0)), x);\n\
         \x20   let s = acc_sinh_small64(x);\n\
         \x20   let v = select(big, s / sqrt(fma(s, s, f64(1.0))), ax < f64(0.5));\n\
         \x20   return select(v, acc_copysign64(f64(1.0), x), ax > f64(22.0));\n\
         }}",
        p = poly("z", &c),
        ln2 = k(std::f64::consts::LN_2),
    );
    // powf as std's: a negative base with an integral exponent included; y = 0 or x = 1 give 1.
    let _ = writeln!(
        w,
        "fn acc_powf64(x: f64, y: f64) -> f64 {{\n\
         \x20   let r = acc_exp64(y * acc_ln64(abs(x)));\n\
         \x20   let integral = trunc(y) == y;\n\
         \x20   let even = trunc(y * f64(0.5)) == y * f64(0.5);\n\
         \x20   let negative = select({nan}, select(-r, r, even), integral);\n\
         \x20   let v = select(r, negative, x < f64(0.0));\n\
         \x20   return select(v, f64(1.0), y == f64(0.0) || x == f64(1.0));\n\
         }}\n\
         fn acc_cbrt64(x: f64) -> f64 {{\n\
         \x20   let ax = abs(x);\n\
         \x20   var y = acc_exp64(acc_ln64(ax) * {third});\n\
         \x20   y = y - (y * y * y - ax) / (y * y * f64(3.0));\n\
         \x20   return select(x, acc_copysign64(y, x), ax > f64(0.0) && ax < {inf});\n\
         }}",
        third = k(1.0 / 3.0),
    );
    out
}
