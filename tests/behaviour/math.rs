//! The std math methods a region may call (DESIGN.md 4.2), on every device, against std on the
//! host. The host and multicore run std itself (exact); a GPU's results may differ in the last
//! places: within 1e-13 (f64) and 1e-6 (f32) relative on nvidia, whose functions are computed
//! in f64; wgpu refuses f64 transcendental functions (WGSL has none), and its f32 functions are the driver's, which Vulkan lets be as coarse as 2^-11
//! absolute for sin and cos, hence 1e-3 there.

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
        (DeviceType::Wgpu, false) => 1e-3,
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
