//! The std math methods a region may call (docs/guide/regions.md), on every device, against std on the
//! host. The host and multicore run std itself (exact); a GPU's results may differ in the last
//! places: within 1e-13 (f64) and 1e-6 (f32) relative on both GPU devices, whose
//! transcendental functions are fdlibm's algorithms computed in f64 (`acc_core::ir::math`,
//! written once for both: an f32 argument widened, the result rounded once). On an adapter
//! without f64 the f32 ones would be the driver's (Vulkan lets those be as coarse as 2^-11
//! absolute for sin and cos); lavapipe and NVIDIA's drivers have f64. Bit-level methods
//! (`to_bits`, `is_nan`, `copysign`) are exact everywhere.

use acc::DeviceType;

use crate::devices::on_each_device;

const F: usize = 24;

macro_rules! math_region {
    ($name:ident, $t:ty) => {
        #[acc::parallel_loop(copyin(x), copyout(out))]
        fn $name(x: &[$t], out: &mut [$t]) {
            for i in 0..x.len() {
                let v = x[i];
                let a = v.abs() + 0.25;
                let u = v / 10.0;
                let o = i * F;
                out[o] = v.exp();
                out[o + 1] = (v / 4.0).exp2();
                out[o + 2] = a.ln();
                out[o + 3] = a.log2();
                out[o + 4] = a.log10();
                out[o + 5] = v.sin();
                out[o + 6] = v.cos();
                out[o + 7] = u.tan();
                out[o + 8] = u.asin();
                out[o + 9] = u.acos();
                out[o + 10] = v.atan();
                out[o + 11] = v.atan2(a - 3.0);
                out[o + 12] = u.sinh();
                out[o + 13] = u.cosh();
                out[o + 14] = v.tanh();
                out[o + 15] = v.cbrt();
                out[o + 16] = a.powf(u * 3.0);
                out[o + 17] = v.powi(3);
                out[o + 18] = v.round();
                out[o + 19] = v.fract();
                out[o + 20] = v.signum();
                out[o + 21] = a.recip();
                out[o + 22] = v.hypot(a);
                out[o + 23] = a.sqrt().mul_add(u, v.floor() + v.ceil() + v.trunc());
            }
        }
    };
}

math_region!(math_f64, f64);
math_region!(math_f32, f32);

/// The same functions on the host, in the order of the region's outputs.
macro_rules! expected {
    ($v:expr) => {{
        let v = $v;
        let a = v.abs() + 0.25;
        let u = v / 10.0;
        [
            v.exp(),
            (v / 4.0).exp2(),
            a.ln(),
            a.log2(),
            a.log10(),
            v.sin(),
            v.cos(),
            u.tan(),
            u.asin(),
            u.acos(),
            v.atan(),
            v.atan2(a - 3.0),
            u.sinh(),
            u.cosh(),
            v.tanh(),
            v.cbrt(),
            a.powf(u * 3.0),
            v.powi(3),
            v.round(),
            v.fract(),
            v.signum(),
            a.recip(),
            v.hypot(a),
            a.sqrt().mul_add(u, v.floor() + v.ceil() + v.trunc()),
        ]
    }};
}

const NAMES: [&str; F] = [
    "exp",
    "exp2",
    "ln",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "cbrt",
    "powf",
    "powi",
    "round",
    "fract",
    "signum",
    "recip",
    "hypot",
    "sqrt/mul_add/floor/ceil/trunc",
];

fn tolerance(ty: DeviceType, f64_: bool) -> f64 {
    match (ty, f64_) {
        (DeviceType::Host | DeviceType::Multicore, _) => 0.0,
        (_, true) => 1e-13,
        (_, false) => 1e-6,
    }
}

fn check(ty: DeviceType, what: &str, x: f64, k: usize, got: f64, want: f64, tol: f64) {
    let same = got == want || (got.is_nan() && want.is_nan());
    let close = (got - want).abs() <= tol * want.abs().max(1.0);
    assert!(
        same || close,
        "{ty}: {what} {}({x}) = {got}, std gives {want} (tolerance {tol})",
        NAMES[k]
    );
}

/// Arguments over several periods and decades, zero and halves included.
fn arguments() -> Vec<f64> {
    let mut x: Vec<f64> = (0..400).map(|i| (i as f64 - 200.0) * 0.0493).collect();
    x.extend([0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 9.99, -9.99, 1e-8, -3e-12]);
    x
}

#[test]
fn math_functions_on_f64() {
    on_each_device(|ty| {
        let x = arguments();
        let mut out = vec![0.0f64; x.len() * F];
        math_f64(&x, &mut out);
        for (i, &v) in x.iter().enumerate() {
            for (k, want) in expected!(v).into_iter().enumerate() {
                check(ty, "f64", v, k, out[i * F + k], want, tolerance(ty, true));
            }
        }
    });
}

#[test]
fn math_functions_on_f32() {
    on_each_device(|ty| {
        let x: Vec<f32> = arguments().into_iter().map(|v| v as f32).collect();
        let mut out = vec![0.0f32; x.len() * F];
        math_f32(&x, &mut out);
        for (i, &v) in x.iter().enumerate() {
            for (k, want) in expected!(v).into_iter().enumerate() {
                check(
                    ty,
                    "f32",
                    v as f64,
                    k,
                    out[i * F + k] as f64,
                    want as f64,
                    tolerance(ty, false),
                );
            }
        }
    });
}

const G: usize = 15;

macro_rules! more_math_region {
    ($name:ident, $t:ident) => {
        #[acc::parallel_loop(copyin(x), copyout(out, bits))]
        fn $name(x: &[$t], out: &mut [$t], bits: &mut [u64]) {
            for i in 0..x.len() {
                let v = x[i];
                let a = v.abs() + 0.25;
                let u = v / 10.0;
                let o = i * G;
                out[o] = v.asinh();
                out[o + 1] = (a * 2.0 + 1.0).acosh();
                out[o + 2] = u.atanh();
                out[o + 3] = u.exp_m1();
                out[o + 4] = u.ln_1p();
                out[o + 5] = a.log(u.abs() + 1.5);
                out[o + 6] = a.copysign(u);
                out[o + 7] = v.to_degrees();
                out[o + 8] = v.to_radians();
                out[o + 9] = v.rem_euclid(2.5);
                out[o + 10] = v.div_euclid(-1.5);
                out[o + 11] = $t::from_bits(v.to_bits() ^ 1);
                out[o + 12] = $t::copysign(1.0, v);
                out[o + 13] = v.exp_m1();
                out[o + 14] = v.ln_1p();
                bits[2 * i] = v.to_bits() as u64;
                bits[2 * i + 1] = (v.is_nan() as u64)
                    | (v.is_finite() as u64) << 1
                    | (v.is_infinite() as u64) << 2
                    | (v.is_sign_positive() as u64) << 3
                    | (v.is_sign_negative() as u64) << 4;
            }
        }
    };
}

more_math_region!(more_math_f64, f64);
more_math_region!(more_math_f32, f32);

macro_rules! more_expected {
    ($v:expr, $t:ident) => {{
        let v = $v;
        let a = v.abs() + 0.25;
        let u = v / 10.0;
        [
            v.asinh(),
            (a * 2.0 + 1.0).acosh(),
            u.atanh(),
            u.exp_m1(),
            u.ln_1p(),
            a.log(u.abs() + 1.5),
            a.copysign(u),
            v.to_degrees(),
            v.to_radians(),
            v.rem_euclid(2.5),
            v.div_euclid(-1.5),
            $t::from_bits(v.to_bits() ^ 1),
            $t::copysign(1.0, v),
            v.exp_m1(),
            v.ln_1p(),
        ]
    }};
}

const MORE_NAMES: [&str; G] = [
    "asinh",
    "acosh",
    "atanh",
    "exp_m1",
    "ln_1p",
    "log",
    "copysign",
    "to_degrees",
    "to_radians",
    "rem_euclid",
    "div_euclid",
    "from_bits",
    "copysign",
    "exp_m1",
    "ln_1p",
];

fn check_more(ty: DeviceType, what: &str, x: f64, k: usize, got: f64, want: f64, tol: f64) {
    let same = got == want || (got.is_nan() && want.is_nan());
    let close = (got - want).abs() <= tol * want.abs().max(1.0);
    assert!(
        same || close,
        "{ty}: {what} {}({x}) = {got}, std gives {want} (tolerance {tol})",
        MORE_NAMES[k]
    );
}

/// The arguments of the other tests, and the values bit-level methods single out.
fn more_arguments() -> Vec<f64> {
    let mut x = arguments();
    x.extend([
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e-30,
        -7.5,
        3.0,
        -3.0,
    ]);
    x
}

/// The flags `more_math_*` packs: is_nan, is_finite, is_infinite, is_sign_positive,
/// is_sign_negative.
fn flags(nan: bool, finite: bool, infinite: bool, pos: bool, neg: bool) -> u64 {
    nan as u64
        | (finite as u64) << 1
        | (infinite as u64) << 2
        | (pos as u64) << 3
        | (neg as u64) << 4
}

#[test]
fn more_float_methods_on_f64() {
    on_each_device(|ty| {
        let x = more_arguments();
        let mut out = vec![0.0f64; x.len() * G];
        let mut bits = vec![0u64; x.len() * 2];
        more_math_f64(&x, &mut out, &mut bits);
        for (i, &v) in x.iter().enumerate() {
            for (k, want) in more_expected!(v, f64).into_iter().enumerate() {
                check_more(ty, "f64", v, k, out[i * G + k], want, tolerance(ty, true));
            }
            assert_eq!(bits[2 * i], v.to_bits(), "{ty}: f64 to_bits({v})");
            let want = flags(
                v.is_nan(),
                v.is_finite(),
                v.is_infinite(),
                v.is_sign_positive(),
                v.is_sign_negative(),
            );
            assert_eq!(bits[2 * i + 1], want, "{ty}: f64 is_* flags of {v}");
        }
    });
}

#[test]
fn more_float_methods_on_f32() {
    on_each_device(|ty| {
        let x: Vec<f32> = more_arguments().into_iter().map(|v| v as f32).collect();
        let mut out = vec![0.0f32; x.len() * G];
        let mut bits = vec![0u64; x.len() * 2];
        more_math_f32(&x, &mut out, &mut bits);
        for (i, &v) in x.iter().enumerate() {
            for (k, want) in more_expected!(v, f32).into_iter().enumerate() {
                check_more(
                    ty,
                    "f32",
                    v as f64,
                    k,
                    out[i * G + k] as f64,
                    want as f64,
                    tolerance(ty, false),
                );
            }
            assert_eq!(bits[2 * i], v.to_bits() as u64, "{ty}: f32 to_bits({v})");
            let want = flags(
                v.is_nan(),
                v.is_finite(),
                v.is_infinite(),
                v.is_sign_positive(),
                v.is_sign_negative(),
            );
            assert_eq!(bits[2 * i + 1], want, "{ty}: f32 is_* flags of {v}");
        }
    });
}

macro_rules! mandelbrot_region {
    ($name:ident, $t:ty) => {
        /// Escape counts of a `w` x `h` grid of the plane, and the last `x*x + y*y` of each
        /// point (products followed by additions: a driver that fused them would round once
        /// where Rust rounds twice).
        #[acc::parallel_loop(copyout(count, last))]
        fn $name(count: &mut [u32], last: &mut [$t], w: usize, h: usize) {
            for p in 0..w * h {
                let cx = (p % w) as $t / w as $t * 3.0 - 2.0;
                let cy = (p / w) as $t / h as $t * 2.5 - 1.25;
                let (mut x, mut y) = (0.0 as $t, 0.0 as $t);
                let mut n = 0u32;
                while n < 200 && x * x + y * y <= 4.0 {
                    let t = x * x - y * y + cx;
                    y = 2.0 * x * y + cy;
                    x = t;
                    n += 1;
                }
                count[p] = n;
                last[p] = x * x + y * y + cx * cy;
            }
        }
    };
}

mandelbrot_region!(mandelbrot_f32, f32);
mandelbrot_region!(mandelbrot_f64, f64);

/// `region`'s escape counts and last values (as bits) for a `w` x `h` grid, on the current
/// device.
fn mandelbrot_on<T: Copy + Default>(
    region: fn(&mut [u32], &mut [T], usize, usize),
    bits: fn(T) -> u64,
    (w, h): (usize, usize),
) -> (Vec<u32>, Vec<u64>) {
    let (mut count, mut last) = (vec![0u32; w * h], vec![T::default(); w * h]);
    region(&mut count, &mut last, w, h);
    (count, last.into_iter().map(bits).collect())
}

/// `+ - *` in f32 and f64, and f32 `/`, give the host's bits on every device (issue 17 item
/// 9): a Mandelbrot grid's escape counts, which one differently rounded step changes, and a
/// value computed from each point's last iterate. (f64 `/` and `sqrt` on wgpu are the
/// driver's: Vulkan does not ask them to be correctly rounded; NVIDIA's H100 driver gave the
/// host's bits for 4 million random arguments of each.)
#[test]
fn float_arithmetic_rounds_as_rust_does() {
    let size = (96, 64);
    let f32_bits = |x: f32| u64::from(x.to_bits());
    let f64_bits = |x: f64| x.to_bits();
    // The host device runs the region's Rust as written: the reference.
    acc::set_device_type(DeviceType::Host);
    let want32 = mandelbrot_on(mandelbrot_f32, f32_bits, size);
    let want64 = mandelbrot_on(mandelbrot_f64, f64_bits, size);
    on_each_device(|ty| {
        for (got, want, t) in [
            (
                mandelbrot_on(mandelbrot_f32, f32_bits, size),
                &want32,
                "f32",
            ),
            (
                mandelbrot_on(mandelbrot_f64, f64_bits, size),
                &want64,
                "f64",
            ),
        ] {
            let differ = (0..size.0 * size.1)
                .filter(|&p| got.0[p] != want.0[p] || got.1[p] != want.1[p])
                .count();
            assert_eq!(
                differ, 0,
                "{ty:?}: {differ} {t} points differ from the host"
            );
        }
    });
}

#[acc::parallel_loop(copyin(x), copyout(r))]
fn roots_f32(x: &[f32], r: &mut [f32]) {
    for i in 0..x.len() {
        r[i] = x[i].sqrt();
    }
}

/// f32 `sqrt` gives the host's bits on every device (correctly rounded, as IEEE and Rust
/// have it): 200,000 normal arguments of every exponent, their neighbours of squares and of
/// midpoints, where a unit-off root shows, and 20,000 subnormal ones. (NVIDIA's Vulkan driver
/// was a unit off for one argument in six, and may flush subnormals to zero.)
#[test]
fn f32_sqrt_is_correctly_rounded() {
    let mut x: Vec<f32> = Vec::new();
    let mut s = 0x2545_F491u32;
    for _ in 0..200_000 {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        // A positive normal f32 of any exponent.
        x.push(f32::from_bits(
            (s & 0x7FFF_FFFF).clamp(0x0080_0000, 0x7F7F_FFFF),
        ));
    }
    for k in 0..20_000u32 {
        // Subnormal: every width of mantissa, the smallest and the largest.
        let m = match k {
            0 => 1,
            1 => 0x007F_FFFF,
            _ => (k.wrapping_mul(2_654_435_761) >> (k % 23 + 9)).max(1),
        };
        x.push(f32::from_bits(m));
    }
    for k in 1..20_000u32 {
        let r = 1.0 + k as f32 * 1e-4;
        let sq = r * r;
        x.extend([
            sq,
            f32::from_bits(sq.to_bits() + 1),
            f32::from_bits(sq.to_bits() - 1),
        ]);
    }
    let mut want = vec![0.0f32; x.len()];
    for (w, v) in want.iter_mut().zip(&x) {
        *w = v.sqrt();
    }
    on_each_device(|ty| {
        let mut r = vec![0.0f32; x.len()];
        roots_f32(&x, &mut r);
        let differ: Vec<usize> = (0..x.len())
            .filter(|&i| r[i].to_bits() != want[i].to_bits())
            .collect();
        assert!(
            differ.is_empty(),
            "{ty:?}: {} of {} f32 square roots differ from the host's, the first of {:e}: {:e} against {:e}",
            differ.len(),
            x.len(),
            x[differ[0]],
            r[differ[0]],
            want[differ[0]]
        );
    });
}

#[acc::parallel_loop(copyin(a, b), copyout(q, r))]
fn quotients_f64(a: &[f64], b: &[f64], q: &mut [f64], r: &mut [f64]) {
    for i in 0..a.len() {
        q[i] = a[i] / b[i];
        r[i] = a[i].sqrt();
    }
}

/// f64 `/` and `sqrt`: the host's bits on every device for 200,000 random arguments. (On
/// wgpu they are the driver's own; lavapipe's and NVIDIA's H100 Vulkan driver's are correctly
/// rounded. A driver that is not fails here.)
#[test]
fn f64_division_and_sqrt_match_the_host() {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let n = 200_000;
    let a: Vec<f64> = (0..n)
        .map(|_| {
            f64::from_bits((next() >> 12) | 0x3FF0_0000_0000_0000) * (1 + next() % 1000) as f64
        })
        .collect();
    let b: Vec<f64> = (0..n)
        .map(|_| f64::from_bits((next() >> 12) | 0x3FF0_0000_0000_0000) * (1 + next() % 77) as f64)
        .collect();
    on_each_device(|ty| {
        let (mut q, mut r) = (vec![0.0; n], vec![0.0; n]);
        quotients_f64(&a, &b, &mut q, &mut r);
        let dq = (0..n)
            .filter(|&i| q[i].to_bits() != (a[i] / b[i]).to_bits())
            .count();
        let dr = (0..n)
            .filter(|&i| r[i].to_bits() != a[i].sqrt().to_bits())
            .count();
        assert_eq!(
            (dq, dr),
            (0, 0),
            "{ty:?}: quotients and roots differing from the host's"
        );
    });
}

#[acc::parallel_loop(copyin(x, y), copyout(r32))]
fn rem_f32(x: &[f32], y: &[f32], r32: &mut [f32]) {
    for i in 0..x.len() {
        r32[i] = x[i] % y[i];
    }
}

#[acc::parallel_loop(copyin(x, y), copyout(r64))]
fn rem_f64(x: &[f64], y: &[f64], r64: &mut [f64]) {
    for i in 0..x.len() {
        r64[i] = x[i] % y[i];
    }
}

/// Operand pairs for `%`: ordinary ones, angles reduced by 2π, exact multiples, |x| < |y|,
/// zeros of both signs, subnormals, infinities, NaN and huge quotients.
fn rem_operands() -> (Vec<f64>, Vec<f64>) {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        3.0,
        0.1,
        0.3,
        2.5,
        -7.25,
        1e-310,
        -4e-320,
        1e300,
        -1e38,
        3e38,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        6.283185307179586,
        1e-40,
    ];
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &a in &specials {
        for &b in &specials {
            x.push(a);
            y.push(b);
        }
    }
    for k in 0..20_000 {
        let a = (next() % 2_000_000) as f64 * 0.0173 - 17_000.0;
        let b = match k % 4 {
            0 => std::f64::consts::TAU,
            1 => (next() % 1000) as f64 * 0.01 + 0.001,
            2 => f64::from_bits(next() >> 2 | 1) % 1e3 + 1e-3,
            _ => -((next() % 97) as f64 + 0.5),
        };
        x.push(if k % 5 == 0 { a * 1e12 } else { a });
        y.push(b);
    }
    (x, y)
}

/// `x % y` on floats gives Rust's bits on every device (the exact remainder, C's `fmod`),
/// where `x - trunc(x / y) * y` is off in the last place for angles reduced by 2π and wrong for
/// large quotients.
#[test]
fn float_remainders_are_exact() {
    let (x, y) = rem_operands();
    let (x32, y32): (Vec<f32>, Vec<f32>) = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| (a as f32, b as f32))
        .unzip();
    on_each_device(|ty| {
        let mut r64 = vec![0.0; x.len()];
        rem_f64(&x, &y, &mut r64);
        let mut r32 = vec![0.0f32; x.len()];
        rem_f32(&x32, &y32, &mut r32);
        for i in 0..x.len() {
            let want = x[i] % y[i];
            assert!(
                r64[i].to_bits() == want.to_bits() || (r64[i].is_nan() && want.is_nan()),
                "{ty}: {:e} % {:e} = {:e}, Rust gives {:e}",
                x[i],
                y[i],
                r64[i],
                want
            );
            let want = x32[i] % y32[i];
            assert!(
                r32[i].to_bits() == want.to_bits() || (r32[i].is_nan() && want.is_nan()),
                "{ty}: {:e}f32 % {:e} = {:e}, Rust gives {:e}",
                x32[i],
                y32[i],
                r32[i],
                want
            );
        }
    });
}
