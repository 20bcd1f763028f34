//! Math functions PTX has no instruction for, written out in PTX (DESIGN.md 4.2 lists the
//! std methods a region may call). The transcendental functions are computed in `f64` (an
//! `f32` argument is widened and the result rounded once), with range reduction and
//! polynomials from fdlibm (the library Rust's `libm` and musl derive from): within a few
//! units in the last place of std's results for arguments of ordinary size; `sin`, `cos` and
//! `tan` reduce by pi/2 with a three-part constant, so they lose accuracy for |x| beyond
//! about 1e9 (std reduces exactly).

// fdlibm's constants, as fdlibm writes them (they round to the intended doubles).
#![allow(clippy::excessive_precision)]

use super::*;

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const LOG2_E: f64 = std::f64::consts::LOG2_E;
const PIO2_1: f64 = 1.57079632673412561417e+00;
const PIO2_2: f64 = 6.07710050650619224932e-11;
const PIO2_3: f64 = 2.02226624879595063154e-21;

impl Writer<'_> {
    fn k64(&mut self, v: f64) -> String {
        let d = self.reg("%fd");
        self.emit(format!("mov.f64 {d}, 0d{:016X};", v.to_bits()));
        d
    }

    fn f2(&mut self, op: &str, a: &str, b: &str) -> String {
        let d = self.reg("%fd");
        self.emit(format!("{op}.f64 {d}, {a}, {b};"));
        d
    }

    fn f1(&mut self, op: &str, a: &str) -> String {
        let d = self.reg("%fd");
        self.emit(format!("{op}.f64 {d}, {a};"));
        d
    }

    fn fma64(&mut self, a: &str, b: &str, c: &str) -> String {
        let d = self.reg("%fd");
        self.emit(format!("fma.rn.f64 {d}, {a}, {b}, {c};"));
        d
    }

    fn cmp64(&mut self, cmp: &str, a: &str, b: &str) -> String {
        let p = self.reg("%p");
        self.emit(format!("setp.{cmp}.f64 {p}, {a}, {b};"));
        p
    }

    fn cmp64k(&mut self, cmp: &str, a: &str, v: f64) -> String {
        let k = self.k64(v);
        self.cmp64(cmp, a, &k)
    }

    /// `if p { a } else { b }`.
    fn sel64(&mut self, p: &str, a: &str, b: &str) -> String {
        let d = self.reg("%fd");
        self.emit(format!("selp.f64 {d}, {a}, {b}, {p};"));
        d
    }

    fn sel64k(&mut self, p: &str, a: f64, b: &str) -> String {
        let k = self.k64(a);
        self.sel64(p, &k, b)
    }

    /// `c[0] + x * (c[1] + x * (...))`.
    fn poly(&mut self, x: &str, c: &[f64]) -> String {
        let mut acc = self.k64(c[c.len() - 1]);
        for &ci in c[..c.len() - 1].iter().rev() {
            let k = self.k64(ci);
            acc = self.fma64(x, &acc, &k);
        }
        acc
    }

    /// `2^k` for an integral `k` (an f64) in [-1022, 1023].
    fn pow2(&mut self, k: &str) -> String {
        let (i, b) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("cvt.rzi.s64.f64 {i}, {k};"));
        self.emit(format!("add.s64 {b}, {i}, 1023;"));
        self.emit(format!("shl.b64 {b}, {b}, 52;"));
        let d = self.reg("%fd");
        self.emit(format!("mov.b64 {d}, {b};"));
        d
    }

    /// `p * 2^k` for an integral `k` in [-1100, 1100], rounding once.
    fn scale(&mut self, p: &str, k: &str) -> String {
        let half = self.k64(0.5);
        let k1 = self.f2("mul", k, &half);
        let k1 = self.f1("cvt.rmi.f64", &k1);
        let k2 = self.f2("sub", k, &k1);
        let (s1, s2) = (self.pow2(&k1), self.pow2(&k2));
        let t = self.f2("mul", p, &s1);
        self.f2("mul", &t, &s2)
    }

    /// `e^r` for |r| <= ln(2)/2 (Taylor series to degree 13: error below 1e-17).
    fn exp_kernel(&mut self, r: &str) -> String {
        let mut c = [1.0f64; 14];
        for n in 1..14 {
            c[n] = c[n - 1] / n as f64;
        }
        self.poly(r, &c)
    }

    pub(super) fn exp64(&mut self, x: &str) -> String {
        let l = self.k64(LOG2_E);
        let t = self.f2("mul", x, &l);
        let k = self.f1("cvt.rni.f64", &t);
        let nk = self.f1("neg", &k);
        let (hi, lo) = (self.k64(LN2_HI), self.k64(LN2_LO));
        let r = self.fma64(&nk, &hi, x);
        let r = self.fma64(&nk, &lo, &r);
        let p = self.exp_kernel(&r);
        let kc = self.clamp_k(&k);
        let v = self.scale(&p, &kc);
        let big = self.cmp64k("gt", x, 709.782712893384);
        let v = self.sel64k(&big, f64::INFINITY, &v);
        let small = self.cmp64k("lt", x, -745.1332191019412);
        self.sel64k(&small, 0.0, &v)
    }

    /// `e^x` for an `f32` argument widened to `x`, to be rounded to `f32`: the same reduction
    /// as [`Writer::exp64`], a series to degree 10 (relative error below 3e-13, far inside an
    /// `f32` unit in the last place) and one scaling by `2^k` (exact for the `k` of `f32`
    /// results, whose range is far inside the exponent's; beyond it the selects decide).
    fn exp64_for_f32(&mut self, x: &str) -> String {
        let l = self.k64(LOG2_E);
        let t = self.f2("mul", x, &l);
        let k = self.f1("cvt.rni.f64", &t);
        let nk = self.f1("neg", &k);
        let (hi, lo) = (self.k64(LN2_HI), self.k64(LN2_LO));
        let r = self.fma64(&nk, &hi, x);
        let r = self.fma64(&nk, &lo, &r);
        let mut c = [1.0f64; 11];
        for n in 1..11 {
            c[n] = c[n - 1] / n as f64;
        }
        let p = self.poly(&r, &c);
        let s2 = self.pow2(&k);
        let v = self.f2("mul", &p, &s2);
        let big = self.cmp64k("gt", x, 709.0);
        let v = self.sel64k(&big, f64::INFINITY, &v);
        let small = self.cmp64k("lt", x, -708.0);
        self.sel64k(&small, 0.0, &v)
    }

    fn clamp_k(&mut self, k: &str) -> String {
        let (lo, hi) = (self.k64(-1100.0), self.k64(1100.0));
        let k = self.f2("max", k, &lo);
        self.f2("min", &k, &hi)
    }

    pub(super) fn exp2_64(&mut self, x: &str) -> String {
        let k = self.f1("cvt.rni.f64", x);
        let f = self.f2("sub", x, &k);
        let ln2 = self.k64(std::f64::consts::LN_2);
        let r = self.f2("mul", &f, &ln2);
        let p = self.exp_kernel(&r);
        let kc = self.clamp_k(&k);
        let v = self.scale(&p, &kc);
        let big = self.cmp64k("gt", x, 1024.0);
        let v = self.sel64k(&big, f64::INFINITY, &v);
        let small = self.cmp64k("lt", x, -1080.0);
        self.sel64k(&small, 0.0, &v)
    }

    pub(super) fn ln64(&mut self, x: &str) -> String {
        // Subnormals are scaled into the normal range first.
        let tiny = self.cmp64k("lt", x, f64::MIN_POSITIVE);
        let up = self.k64(2f64.powi(54));
        let xs = self.f2("mul", x, &up);
        let xs = self.sel64(&tiny, &xs, x);
        let adj = self.reg("%rd");
        self.emit(format!("selp.s64 {adj}, -54, 0, {tiny};"));
        let bits = self.reg("%rd");
        self.emit(format!("mov.b64 {bits}, {xs};"));
        let e = self.reg("%rd");
        self.emit(format!("shr.u64 {e}, {bits}, 52;"));
        self.emit(format!("and.b64 {e}, {e}, 2047;"));
        self.emit(format!("sub.s64 {e}, {e}, 1023;"));
        self.emit(format!("add.s64 {e}, {e}, {adj};"));
        let mb = self.reg("%rd");
        self.emit(format!("and.b64 {mb}, {bits}, 4503599627370495;"));
        self.emit(format!("or.b64 {mb}, {mb}, 4607182418800017408;"));
        let m = self.reg("%fd");
        self.emit(format!("mov.b64 {m}, {mb};"));
        // m in [sqrt(1/2), sqrt(2)).
        let over = self.cmp64k("gt", &m, std::f64::consts::SQRT_2);
        let half = self.k64(0.5);
        let mh = self.f2("mul", &m, &half);
        let m = self.sel64(&over, &mh, &m);
        let one = self.reg("%rd");
        self.emit(format!("selp.s64 {one}, 1, 0, {over};"));
        self.emit(format!("add.s64 {e}, {e}, {one};"));
        let ef = self.reg("%fd");
        self.emit(format!("cvt.rn.f64.s64 {ef}, {e};"));
        // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716.
        let k1 = self.k64(1.0);
        let f = self.f2("sub", &m, &k1);
        let k2 = self.k64(2.0);
        let d = self.f2("add", &f, &k2);
        let s = self.f2("div.rn", &f, &d);
        let z = self.f2("mul", &s, &s);
        let c: Vec<f64> = (0..11).map(|n| 1.0 / (2 * n + 3) as f64).collect();
        let p = self.poly(&z, &c);
        let zp = self.f2("mul", &z, &p);
        let s2 = self.f2("add", &s, &s);
        let lm = self.fma64(&s2, &zp, &s2);
        let (hi, lo) = (self.k64(LN2_HI), self.k64(LN2_LO));
        let t = self.fma64(&ef, &lo, &lm);
        let v = self.fma64(&ef, &hi, &t);
        // ln(0) = -inf, ln(inf) = inf, ln(x < 0) and ln(NaN) = NaN.
        let zero = self.cmp64k("eq", x, 0.0);
        let v = self.sel64k(&zero, f64::NEG_INFINITY, &v);
        let inf = self.cmp64k("eq", x, f64::INFINITY);
        let v = self.sel64k(&inf, f64::INFINITY, &v);
        let bad = self.cmp64k("ltu", x, 0.0);
        self.sel64k(&bad, f64::NAN, &v)
    }

    /// sin and cos of x.
    fn sincos64(&mut self, x: &str) -> (String, String) {
        let two_over_pi = self.k64(std::f64::consts::FRAC_2_PI);
        let t = self.f2("mul", x, &two_over_pi);
        let k = self.f1("cvt.rni.f64", &t);
        let nk = self.f1("neg", &k);
        let (a, b, c) = (self.k64(PIO2_1), self.k64(PIO2_2), self.k64(PIO2_3));
        let r = self.fma64(&nk, &a, x);
        let r = self.fma64(&nk, &b, &r);
        let r = self.fma64(&nk, &c, &r);
        let z = self.f2("mul", &r, &r);
        let sp = self.poly(
            &z,
            &[
                -1.66666666666666324348e-01,
                8.33333333332248946124e-03,
                -1.98412698298579493134e-04,
                2.75573137070700676789e-06,
                -2.50507602534068634195e-08,
                1.58969099521155010221e-10,
            ],
        );
        let r3 = self.f2("mul", &z, &r);
        let s = self.fma64(&r3, &sp, &r);
        let cp = self.poly(
            &z,
            &[
                4.16666666666666019037e-02,
                -1.38888888888741095749e-03,
                2.48015872894767294178e-05,
                -2.75573143513906633035e-07,
                2.08757232129817482790e-09,
                -1.13596475577881948265e-11,
            ],
        );
        let z2 = self.f2("mul", &z, &z);
        let half = self.k64(-0.5);
        let one = self.k64(1.0);
        let w = self.fma64(&half, &z, &one);
        let c = self.fma64(&z2, &cp, &w);
        // The quadrant: k mod 4.
        let q = self.reg("%rd");
        self.emit(format!("cvt.rzi.s64.f64 {q}, {k};"));
        self.emit(format!("and.b64 {q}, {q}, 3;"));
        let (odd, neg_s, neg_c) = (self.reg("%p"), self.reg("%p"), self.reg("%p"));
        let t = self.reg("%rd");
        self.emit(format!("and.b64 {t}, {q}, 1;"));
        self.emit(format!("setp.ne.s64 {odd}, {t}, 0;"));
        // sin: q 0 s, 1 c, 2 -s, 3 -c; cos: q 0 c, 1 -s, 2 -c, 3 s.
        self.emit(format!("setp.ge.s64 {neg_s}, {q}, 2;"));
        let u = self.reg("%rd");
        self.emit(format!("add.s64 {u}, {q}, 1;"));
        self.emit(format!("and.b64 {u}, {u}, 2;"));
        self.emit(format!("setp.ne.s64 {neg_c}, {u}, 0;"));
        let sv = self.sel64(&odd, &c, &s);
        let cv = self.sel64(&odd, &s, &c);
        let nsv = self.f1("neg", &sv);
        let ncv = self.f1("neg", &cv);
        let sin = self.sel64(&neg_s, &nsv, &sv);
        let cos = self.sel64(&neg_c, &ncv, &cv);
        (sin, cos)
    }

    pub(super) fn atan64(&mut self, x: &str) -> String {
        let ax = self.f1("abs", x);
        let one = self.k64(1.0);
        let two = self.k64(2.0);
        let three_halves = self.k64(1.5);
        // fdlibm's intervals: [0, 7/16) direct, then four reductions to a small argument.
        let (i0, i1, i2, i3) = (
            self.cmp64k("ge", &ax, 0.4375),
            self.cmp64k("ge", &ax, 0.6875),
            self.cmp64k("ge", &ax, 1.1875),
            self.cmp64k("ge", &ax, 2.4375),
        );
        let minus_one = self.k64(-1.0);
        let n0 = self.fma64(&two, &ax, &minus_one);
        let d0 = self.f2("add", &two, &ax);
        let t0 = self.f2("div.rn", &n0, &d0);
        let n1 = self.f2("sub", &ax, &one);
        let d1 = self.f2("add", &ax, &one);
        let t1 = self.f2("div.rn", &n1, &d1);
        let n2 = self.f2("sub", &ax, &three_halves);
        let d2 = self.fma64(&three_halves, &ax, &one);
        let t2 = self.f2("div.rn", &n2, &d2);
        let m1 = self.k64(-1.0);
        let t3 = self.f2("div.rn", &m1, &ax);
        let t = self.sel64(&i0, &t0, &ax);
        let t = self.sel64(&i1, &t1, &t);
        let t = self.sel64(&i2, &t2, &t);
        let t = self.sel64(&i3, &t3, &t);
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
        let mut h = self.k64(0.0);
        let mut l = self.k64(0.0);
        for (p, (&hv, &lv)) in [&i0, &i1, &i2, &i3].into_iter().zip(hi.iter().zip(&lo)) {
            h = self.sel64k(p, hv, &h);
            l = self.sel64k(p, lv, &l);
        }
        let z = self.f2("mul", &t, &t);
        let w = self.f2("mul", &z, &z);
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
        let s1 = self.poly(&w, &even);
        let s1 = self.f2("mul", &z, &s1);
        let s2 = self.poly(&w, &odd);
        let s2 = self.f2("mul", &w, &s2);
        let s = self.f2("add", &s1, &s2);
        let ts = self.f2("mul", &t, &s);
        // Direct: t - t*s; reduced: hi - ((t*s - lo) - t).
        let direct = self.f2("sub", &t, &ts);
        let r = self.f2("sub", &ts, &l);
        let r = self.f2("sub", &r, &t);
        let reduced = self.f2("sub", &h, &r);
        let v = self.sel64(&i0, &reduced, &direct);
        let neg = self.reg("%fd");
        self.emit(format!("copysign.f64 {neg}, {x}, {v};"));
        neg
    }

    pub(super) fn atan2_64(&mut self, y: &str, x: &str) -> String {
        let q = self.f2("div.rn", y, x);
        let a = self.atan64(&q);
        let pi = self.k64(std::f64::consts::PI);
        let spi = self.reg("%fd");
        self.emit(format!("copysign.f64 {spi}, {y}, {pi};"));
        let xneg = self.reg("%p");
        // x < 0 (or -0): add or subtract pi with y's sign.
        let xb = self.reg("%rd");
        self.emit(format!("mov.b64 {xb}, {x};"));
        self.emit(format!("setp.lt.s64 {xneg}, {xb}, 0;"));
        let shifted = self.f2("add", &a, &spi);
        let v = self.sel64(&xneg, &shifted, &a);
        // x = ±0: ±pi/2 for y != 0; y = ±0: ±0 or ±pi.
        let xz = self.cmp64k("eq", x, 0.0);
        let half_pi = self.k64(std::f64::consts::FRAC_PI_2);
        let hp = self.reg("%fd");
        self.emit(format!("copysign.f64 {hp}, {y}, {half_pi};"));
        let v = self.sel64(&xz, &hp, &v);
        let yz = self.cmp64k("eq", y, 0.0);
        let on_axis = self.sel64(&xneg, &spi, y);
        let v = self.sel64(&yz, &on_axis, &v);
        // Both infinite: ±pi/4 or ±3pi/4.
        let (xa, ya) = (self.f1("abs", x), self.f1("abs", y));
        let (xi, yi) = (
            self.cmp64k("eq", &xa, f64::INFINITY),
            self.cmp64k("eq", &ya, f64::INFINITY),
        );
        let both = self.reg("%p");
        self.emit(format!("and.pred {both}, {xi}, {yi};"));
        let quarter = self.k64(std::f64::consts::FRAC_PI_4);
        let three = self.k64(3.0 * std::f64::consts::FRAC_PI_4);
        let corner = self.sel64(&xneg, &three, &quarter);
        let sc = self.reg("%fd");
        self.emit(format!("copysign.f64 {sc}, {y}, {corner};"));
        let v = self.sel64(&both, &sc, &v);
        // NaN in, NaN out.
        let nan = self.reg("%p");
        self.emit(format!("testp.notanumber.f64 {nan}, {x};"));
        let nan2 = self.reg("%p");
        self.emit(format!("testp.notanumber.f64 {nan2}, {y};"));
        self.emit(format!("or.pred {nan}, {nan}, {nan2};"));
        self.sel64k(&nan, f64::NAN, &v)
    }

    fn sinh_small(&mut self, x: &str) -> String {
        let z = self.f2("mul", x, x);
        let mut c = Vec::new();
        let mut f = 6.0f64;
        for n in 0..8 {
            c.push(1.0 / f);
            f *= ((2 * n + 4) * (2 * n + 5)) as f64;
        }
        let p = self.poly(&z, &c);
        let x3 = self.f2("mul", &z, x);
        self.fma64(&x3, &p, x)
    }

    /// sinh, cosh and tanh of x.
    fn hyperbolic64(&mut self, f: MathFn, x: &str) -> String {
        let ax = self.f1("abs", x);
        let small = self.cmp64k("lt", &ax, 0.5);
        let ln2 = self.k64(std::f64::consts::LN_2);
        let shifted = self.f2("sub", &ax, &ln2);
        let h = self.exp64(&shifted); // e^|x| / 2
        let quarter = self.k64(0.25);
        let inv = self.f2("div.rn", &quarter, &h); // e^-|x| / 2
        match f {
            MathFn::Sinh => {
                let big = self.f2("sub", &h, &inv);
                let big = self.reg_copysign(x, &big);
                let s = self.sinh_small(x);
                self.sel64(&small, &s, &big)
            }
            MathFn::Cosh => self.f2("add", &h, &inv),
            _ => {
                // tanh = 1 - 2 / (e^2|x| + 1); for small |x|, sinh / sqrt(1 + sinh^2).
                let two_ax = self.f2("add", &ax, &ax);
                let e2 = self.exp64(&two_ax);
                let one = self.k64(1.0);
                let d = self.f2("add", &e2, &one);
                let two = self.k64(2.0);
                let q = self.f2("div.rn", &two, &d);
                let big = self.f2("sub", &one, &q);
                let big = self.reg_copysign(x, &big);
                let s = self.sinh_small(x);
                let c = self.fma64(&s, &s, &one);
                let c = self.f1("sqrt.rn", &c);
                let t = self.f2("div.rn", &s, &c);
                let v = self.sel64(&small, &t, &big);
                let huge = self.cmp64k("gt", &ax, 22.0);
                let sign = self.reg_copysign(x, &one);
                self.sel64(&huge, &sign, &v)
            }
        }
    }

    fn reg_copysign(&mut self, sign_of: &str, v: &str) -> String {
        let d = self.reg("%fd");
        self.emit(format!("copysign.f64 {d}, {sign_of}, {v};"));
        d
    }

    /// x^y for floats, as std's `powf` (a negative base with an integral exponent included).
    fn powf64(&mut self, x: &str, y: &str) -> String {
        let ax = self.f1("abs", x);
        let l = self.ln64(&ax);
        let t = self.f2("mul", y, &l);
        let r = self.exp64(&t);
        // Negative base: an odd integral exponent negates, a non-integral one is NaN.
        let yi = self.f1("cvt.rzi.f64", y);
        let integral = self.cmp64("eq", &yi, y);
        let half = self.k64(0.5);
        let hy = self.f2("mul", y, &half);
        let hyi = self.f1("cvt.rzi.f64", &hy);
        let even = self.cmp64("eq", &hyi, &hy);
        let xneg = self.cmp64k("lt", x, 0.0);
        let nr = self.f1("neg", &r);
        let signed = self.sel64(&even, &r, &nr);
        let nan = self.k64(f64::NAN);
        let neg_result = self.sel64(&integral, &signed, &nan);
        let v = self.sel64(&xneg, &neg_result, &r);
        // y = 0 or x = 1: 1 (even for NaN).
        let one = self.k64(1.0);
        let y0 = self.cmp64k("eq", y, 0.0);
        let x1 = self.cmp64k("eq", x, 1.0);
        let any = self.reg("%p");
        self.emit(format!("or.pred {any}, {y0}, {x1};"));
        self.sel64(&any, &one, &v)
    }

    /// A float function of float arguments computed in f64.
    fn transcendental(&mut self, f: MathFn, t: Scalar, x: &[String]) -> Result<String> {
        let wide: Vec<String> = x
            .iter()
            .map(|a| {
                if t == Scalar::F32 {
                    let d = self.reg("%fd");
                    self.emit(format!("cvt.f64.f32 {d}, {a};"));
                    d
                } else {
                    a.clone()
                }
            })
            .collect();
        let a = &wide[0];
        let v = match f {
            MathFn::Exp if t == Scalar::F32 => self.exp64_for_f32(a),
            MathFn::Exp => self.exp64(a),
            MathFn::Exp2 => self.exp2_64(a),
            MathFn::Ln => self.ln64(a),
            MathFn::Log2 => {
                let l = self.ln64(a);
                let k = self.k64(std::f64::consts::LOG2_E);
                self.f2("mul", &l, &k)
            }
            MathFn::Log10 => {
                let l = self.ln64(a);
                let k = self.k64(std::f64::consts::LOG10_E);
                self.f2("mul", &l, &k)
            }
            MathFn::Sin => self.sincos64(a).0,
            MathFn::Cos => self.sincos64(a).1,
            MathFn::Tan => {
                let (s, c) = self.sincos64(a);
                self.f2("div.rn", &s, &c)
            }
            MathFn::Atan => self.atan64(a),
            MathFn::Atan2 => self.atan2_64(a, &wide[1]),
            MathFn::Asin | MathFn::Acos => {
                let one = self.k64(1.0);
                let p = self.f2("sub", &one, a);
                let q = self.f2("add", &one, a);
                let r = self.f2("mul", &p, &q);
                let r = self.f1("sqrt.rn", &r);
                if f == MathFn::Asin {
                    self.atan2_64(a, &r)
                } else {
                    self.atan2_64(&r, a)
                }
            }
            MathFn::Sinh | MathFn::Cosh | MathFn::Tanh => self.hyperbolic64(f, a),
            MathFn::Cbrt => {
                let ax = self.f1("abs", a);
                let l = self.ln64(&ax);
                let third = self.k64(1.0 / 3.0);
                let e = self.f2("mul", &l, &third);
                let y = self.exp64(&e);
                // One Newton step: y - (y^3 - |x|) / (3 y^2).
                let y2 = self.f2("mul", &y, &y);
                let y3 = self.f2("mul", &y2, &y);
                let num = self.f2("sub", &y3, &ax);
                let three = self.k64(3.0);
                let den = self.f2("mul", &y2, &three);
                let step = self.f2("div.rn", &num, &den);
                let y = self.f2("sub", &y, &step);
                // 0, inf and NaN are their own cube roots.
                let above = self.cmp64k("gt", &ax, 0.0);
                let finite = self.cmp64k("lt", &ax, f64::INFINITY);
                let ordinary = self.reg("%p");
                self.emit(format!("and.pred {ordinary}, {above}, {finite};"));
                let y = self.reg_copysign(a, &y);
                self.sel64(&ordinary, &y, a)
            }
            MathFn::Powf => self.powf64(a, &wide[1]),
            _ => {
                return Err(unsupported(format!(
                    "internal error: {f:?} is not transcendental"
                )))
            }
        };
        if t == Scalar::F32 {
            let d = self.reg("%f");
            self.emit(format!("cvt.rn.f32.f64 {d}, {v};"));
            Ok(d)
        } else {
            Ok(v)
        }
    }

    /// Math functions of std (DESIGN.md 4.2).
    pub(super) fn math(&mut self, f: MathFn, t: Scalar, x: &[String]) -> Result<String> {
        let r = repr(t);
        let float = t.is_float();
        let d = self.reg(r.class);
        let line = match (f, x) {
            (MathFn::Abs, [a]) if float || t.is_signed() => format!("abs{} {d}, {a};", r.ty),
            (MathFn::Abs, [a]) => format!("mov{} {d}, {a};", r.bits),
            (MathFn::Min, [a, b]) => return self.minmax("min", t, a, b),
            (MathFn::Max, [a, b]) => return self.minmax("max", t, a, b),
            (MathFn::Clamp, [a, lo, hi]) => {
                let m = self.minmax("max", t, a, lo)?;
                return self.minmax("min", t, &m, hi);
            }
            (MathFn::CountOnes32, [a]) => format!("popc.b32 {d}, {a};"),
            (MathFn::LeadingZeros32, [a]) => format!("clz.b32 {d}, {a};"),
            (MathFn::ReverseBits32, [a]) => format!("brev.b32 {d}, {a};"),
            (MathFn::TrailingZeros32, [a]) => {
                let rev = self.reg("%r");
                self.emit(format!("brev.b32 {rev}, {a};"));
                format!("clz.b32 {d}, {rev};")
            }
            (MathFn::Sqrt, [a]) if float => format!("sqrt.rn{} {d}, {a};", r.ty),
            (MathFn::Floor, [a]) if float => format!("cvt.rmi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::Ceil, [a]) if float => format!("cvt.rpi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::Trunc, [a]) if float => format!("cvt.rzi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::MulAdd, [a, b, c]) if float => format!("fma.rn{} {d}, {a}, {b}, {c};", r.ty),
            (MathFn::Recip, [a]) if float => format!("rcp.rn{} {d}, {a};", r.ty),
            (MathFn::Fract, [a]) if float => {
                let t0 = self.reg(r.class);
                self.emit(format!("cvt.rzi{}{} {t0}, {a};", r.ty, r.ty));
                format!("sub{} {d}, {a}, {t0};", r.ty)
            }
            (MathFn::Round, [a]) if float => {
                // Half away from zero: trunc(x + copysign(0.5 - ulp/2, x)) would misround;
                // instead trunc(x), plus one away from zero when |x - trunc(x)| >= 0.5.
                let (tr, diff, one) = (self.reg(r.class), self.reg(r.class), self.reg(r.class));
                self.emit(format!("cvt.rzi{}{} {tr}, {a};", r.ty, r.ty));
                self.emit(format!("sub{} {diff}, {a}, {tr};", r.ty));
                self.emit(format!("abs{} {diff}, {diff};", r.ty));
                let half = if t == Scalar::F32 {
                    "0f3F000000".to_string()
                } else {
                    "0d3FE0000000000000".to_string()
                };
                let p = self.reg("%p");
                self.emit(format!("setp.ge{} {p}, {diff}, {half};", r.ty));
                let unit = if t == Scalar::F32 {
                    "0f3F800000"
                } else {
                    "0d3FF0000000000000"
                };
                self.emit(format!("copysign{} {one}, {a}, {unit};", r.ty));
                self.emit(format!("add{} {one}, {tr}, {one};", r.ty));
                format!("selp{} {d}, {one}, {tr}, {p};", r.bits)
            }
            (MathFn::Signum, [a]) if float => {
                let (one, nan) = (self.reg(r.class), self.reg("%p"));
                let unit = if t == Scalar::F32 {
                    "0f3F800000"
                } else {
                    "0d3FF0000000000000"
                };
                self.emit(format!("copysign{} {one}, {a}, {unit};", r.ty));
                self.emit(format!("testp.notanumber{} {nan}, {a};", r.ty));
                format!("selp{} {d}, {a}, {one}, {nan};", r.bits)
            }
            (MathFn::Signum, [a]) => {
                let (pos, neg) = (self.reg("%p"), self.reg("%p"));
                self.emit(format!("setp.gt{} {pos}, {a}, 0;", r.ty));
                self.emit(format!("setp.lt{} {neg}, {a}, 0;", r.ty));
                self.emit(format!("selp{} {d}, 1, 0, {pos};", r.ty));
                let m = self.reg(r.class);
                self.emit(format!("selp{} {m}, -1, 0, {neg};", r.ty));
                format!("add{} {d}, {d}, {m};", r.ty)
            }
            (MathFn::Hypot, [a, b]) if float => {
                // max * sqrt(1 + (min/max)^2): no overflow for large arguments.
                let (aa, bb) = (self.reg(r.class), self.reg(r.class));
                self.emit(format!("abs{} {aa}, {a};", r.ty));
                self.emit(format!("abs{} {bb}, {b};", r.ty));
                let (hi, lo) = (self.reg(r.class), self.reg(r.class));
                self.emit(format!("max{} {hi}, {aa}, {bb};", r.ty));
                self.emit(format!("min{} {lo}, {aa}, {bb};", r.ty));
                let q = self.reg(r.class);
                self.emit(format!("div.rn{} {q}, {lo}, {hi};", r.ty));
                let one = if t == Scalar::F32 {
                    "0f3F800000"
                } else {
                    "0d3FF0000000000000"
                };
                self.emit(format!("fma.rn{} {q}, {q}, {q}, {one};", r.ty));
                self.emit(format!("sqrt.rn{} {q}, {q};", r.ty));
                let v = self.reg(r.class);
                self.emit(format!("mul{} {v}, {hi}, {q};", r.ty));
                // hypot(0, 0) = 0; an infinite argument gives inf even with a NaN.
                let (zero, inf) = (self.reg("%p"), self.reg("%p"));
                let z = if t == Scalar::F32 {
                    "0f00000000"
                } else {
                    "0d0000000000000000"
                };
                self.emit(format!("setp.eq{} {zero}, {hi}, {z};", r.ty));
                self.emit(format!("selp{} {v}, {hi}, {v}, {zero};", r.bits));
                self.emit(format!("testp.infinite{} {inf}, {hi};", r.ty));
                format!("selp{} {d}, {hi}, {v}, {inf};", r.bits)
            }
            (MathFn::Powi, [a, n]) if float => return Ok(self.power(t, a, n, true)),
            (MathFn::Pow, [a, n]) if !float => return Ok(self.power(t, a, n, false)),
            (f, args) if float && !matches!(f, MathFn::Pow | MathFn::Powi) => {
                return self.transcendental(f, t, args)
            }
            _ => {
                return Err(unsupported(format!(
                    "the math function {} on {t}",
                    f.name()
                )))
            }
        };
        self.emit(line);
        Ok(d)
    }

    /// `a` to the integer power `n` by squaring: `powi` (float base, `i32` exponent, negative
    /// exponents invert) or `pow` (integer base, `u32` exponent, wrapping).
    fn power(&mut self, t: Scalar, a: &str, n: &str, float: bool) -> String {
        let r = repr(t);
        let (acc, base, e) = (self.reg(r.class), self.reg(r.class), self.reg("%r"));
        let one = if !float {
            "1"
        } else if t == Scalar::F32 {
            "0f3F800000"
        } else {
            "0d3FF0000000000000"
        };
        self.emit(format!("mov{} {acc}, {one};", r.bits));
        self.emit(format!("mov{} {base}, {a};", r.bits));
        if float {
            self.emit(format!("abs.s32 {e}, {n};"));
        } else {
            self.emit(format!("mov.b32 {e}, {n};"));
        }
        let (top, end) = (self.label("pow"), self.label("powend"));
        self.emit(format!("{top}:"));
        let (done, bit) = (self.reg("%p"), self.reg("%p"));
        self.emit(format!("setp.eq.u32 {done}, {e}, 0;"));
        self.emit(format!("@{done} bra {end};"));
        let low = self.reg("%r");
        self.emit(format!("and.b32 {low}, {e}, 1;"));
        self.emit(format!("setp.ne.u32 {bit}, {low}, 0;"));
        let mul = if float {
            format!("mul{}", r.ty)
        } else {
            format!("mul.lo{}", r.ty)
        };
        self.emit(format!("@{bit} {mul} {acc}, {acc}, {base};"));
        self.emit(format!("{mul} {base}, {base}, {base};"));
        self.emit(format!("shr.u32 {e}, {e}, 1;"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        if float {
            let neg = self.reg("%p");
            self.emit(format!("setp.lt.s32 {neg}, {n}, 0;"));
            let inv = self.reg(r.class);
            self.emit(format!("rcp.rn{} {inv}, {acc};", r.ty));
            let d = self.reg(r.class);
            self.emit(format!("selp{} {d}, {inv}, {acc}, {neg};", r.bits));
            d
        } else {
            self.wrap(t, &acc);
            acc
        }
    }
}
