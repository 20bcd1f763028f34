//! The math programs against std, on the host ([`MathProgram::eval`] runs each operation as a
//! GPU does).

use super::*;
use crate::MathFn;

/// Arguments across the ranges that matter: tiny, around 1, large, negative, special.
fn arguments() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        1e-300,
        5e-324,
        1e-10,
        700.0,
        -700.0,
        709.7,
        -745.0,
        1e8,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    // A deterministic spread over [-40, 40] and over magnitudes.
    let mut s = 0x2545f4914f6cdd1du64;
    for _ in 0..4000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let u = (s >> 11) as f64 / (1u64 << 53) as f64;
        v.push(u * 80.0 - 40.0);
        let e = (u * 60.0 - 30.0).exp2();
        v.push(if s & 1 == 0 { e } else { -e });
    }
    v
}

fn std_of(f: MathFn, x: f64, y: f64) -> f64 {
    match f {
        MathFn::Exp => x.exp(),
        MathFn::Exp2 => x.exp2(),
        MathFn::Ln => x.ln(),
        MathFn::Log2 => x.log2(),
        MathFn::Log10 => x.log10(),
        MathFn::Sin => x.sin(),
        MathFn::Cos => x.cos(),
        MathFn::Tan => x.tan(),
        MathFn::Asin => x.asin(),
        MathFn::Acos => x.acos(),
        MathFn::Atan => x.atan(),
        MathFn::Atan2 => x.atan2(y),
        MathFn::Sinh => x.sinh(),
        MathFn::Cosh => x.cosh(),
        MathFn::Tanh => x.tanh(),
        MathFn::Cbrt => x.cbrt(),
        MathFn::Powf => x.powf(y),
        _ => unreachable!("not a transcendental function"),
    }
}

const TRANSCENDENTAL: [MathFn; 17] = [
    MathFn::Exp,
    MathFn::Exp2,
    MathFn::Ln,
    MathFn::Log2,
    MathFn::Log10,
    MathFn::Sin,
    MathFn::Cos,
    MathFn::Tan,
    MathFn::Asin,
    MathFn::Acos,
    MathFn::Atan,
    MathFn::Atan2,
    MathFn::Sinh,
    MathFn::Cosh,
    MathFn::Tanh,
    MathFn::Cbrt,
    MathFn::Powf,
];

/// Whether `got` is within `tol` (relative, or absolute near 0) of `want`, NaN matching NaN
/// and infinities matching exactly.
fn close(got: f64, want: f64, tol: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= tol * want.abs().max(1e-300) || (got - want).abs() <= 1e-300
}

#[test]
fn every_program_is_close_to_std_in_f64() {
    let args = arguments();
    for f in TRANSCENDENTAL {
        let p = program(f, false).expect("a program");
        assert_eq!(p.args as usize, f.arity(), "{f:?}");
        let mut worst = (0.0f64, 0.0, 0.0);
        for (n, &x) in args.iter().enumerate() {
            let (x, y) = match f {
                // Two arguments: pair each with another; powf's base positive mostly, and
                // exponents small enough to stay finite often.
                MathFn::Atan2 => (x, args[(n * 7 + 3) % args.len()]),
                MathFn::Powf => (x.abs().min(1e3), (args[(n * 7 + 3) % args.len()]) / 8.0),
                // sin/cos/tan reduce by pi/2 with a three-part constant: |x| up to 1e5 here.
                MathFn::Sin | MathFn::Cos | MathFn::Tan if x.abs() > 1e5 => continue,
                _ => (x, 0.0),
            };
            let want = std_of(f, x, y);
            let got = p.eval(&[x, y]);
            // Within about 2^-43 relative, or 1e-15 absolute where the result cancels to
            // near zero (sin near its zeros, ln near 1).
            let ok = close(got, want, 1e-13) || (got - want).abs() < 1e-15;
            if !ok {
                let err = (got - want).abs() / want.abs().max(1e-300);
                if err > worst.0 {
                    worst = (err, x, y);
                }
            }
        }
        assert!(
            worst.0 == 0.0,
            "{f:?}: relative error {:e} at ({}, {})",
            worst.0,
            worst.1,
            worst.2
        );
    }
}

#[test]
fn f32_results_are_correctly_rounded() {
    // Widened, computed in f64 and rounded once: the correctly rounded result for nearly
    // every argument.
    let args: Vec<f32> = arguments()
        .into_iter()
        .map(|x| x as f32)
        .filter(|x| x.abs() < 80.0 || !x.is_finite())
        .collect();
    for f in TRANSCENDENTAL {
        if matches!(f, MathFn::Atan2 | MathFn::Powf) {
            continue;
        }
        let p = program(f, true).expect("a program");
        let mut differ = 0;
        let mut total = 0;
        for &x in &args {
            // The correctly rounded result: std's f64 function rounded to f32 (std's f32
            // functions are the platform's, which may be an ulp or two off: glibc's `log10f`).
            let want = std_of(f, f64::from(x), 0.0) as f32;
            let got = p.eval(&[f64::from(x)]) as f32;
            total += 1;
            if !(got == want || got.is_nan() && want.is_nan()) {
                // At most one unit in the last place from std.
                let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
                assert!(ulps <= 1, "{f:?}({x}): {got} against {want}");
                differ += 1;
            }
        }
        assert!(
            differ * 1000 <= total,
            "{f:?}: {differ} of {total} f32 results are one unit off"
        );
    }
}

#[test]
fn only_transcendental_functions_have_programs() {
    for f in [
        MathFn::Sqrt,
        MathFn::Abs,
        MathFn::Floor,
        MathFn::MulAdd,
        MathFn::Powi,
    ] {
        assert!(program(f, false).is_none(), "{f:?}");
    }
}
