//! `half::f16` and `half::bf16` elements (feature `half`, issue 18 item 5): arrays, struct
//! fields, captured scalars and locals of them, on every device, with the bits the host's
//! `half` gives. Kernels store them as 16 bits and compute each operation in f32 rounded back,
//! as `half` does; every f16 bit pattern goes through.

use acc::half::{bf16, f16};

use crate::devices::on_each_device;

#[acc::parallel_loop(copyin(x), copyout(widened, scaled, back))]
fn convert(x: &[f16], widened: &mut [f32], scaled: &mut [f16], back: &mut [u16]) {
    for i in 0..x.len() {
        widened[i] = x[i].to_f32();
        scaled[i] = f16::from_f32(x[i].to_f32() * 1.5 + 0.25);
        back[i] = x[i].to_bits();
    }
}

/// Equal bits, or both NaN (payloads may differ after arithmetic).
fn same16(a: u16, b: u16, bf: bool) -> bool {
    let nan = |v: u16| {
        if bf {
            v & 0x7FFF > 0x7F80
        } else {
            v & 0x7FFF > 0x7C00
        }
    };
    a == b || (nan(a) && nan(b))
}

#[test]
fn every_f16_converts_as_half_does() {
    let x: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let n = x.len();
    on_each_device(|ty| {
        let (mut widened, mut scaled, mut back) =
            (vec![0.0f32; n], vec![f16::ZERO; n], vec![0u16; n]);
        convert(&x, &mut widened, &mut scaled, &mut back);
        for i in 0..n {
            let v = x[i];
            assert!(
                widened[i].to_bits() == v.to_f32().to_bits(),
                "{ty}: f16 {:#06x} to f32: {} against {}",
                v.to_bits(),
                widened[i],
                v.to_f32()
            );
            let want = f16::from_f32(v.to_f32() * 1.5 + 0.25);
            assert!(
                same16(scaled[i].to_bits(), want.to_bits(), false),
                "{ty}: f16::from_f32 of {:#06x} * 1.5 + 0.25: {:#06x} against {:#06x}",
                v.to_bits(),
                scaled[i].to_bits(),
                want.to_bits()
            );
            // A NaN comes back quiet (as `half`'s own f32 round trip gives it).
            assert!(
                same16(back[i], v.to_bits(), false),
                "{ty}: to_bits of {:#06x}: {:#06x}",
                v.to_bits(),
                back[i]
            );
        }
    });
}

#[acc::parallel_loop(copyin(x), copyout(h, b))]
fn round_f32(x: &[f32], h: &mut [f16], b: &mut [bf16]) {
    for i in 0..x.len() {
        h[i] = f16::from_f32(x[i]);
        b[i] = bf16::from_f32(x[i]);
    }
}

/// f32 values rounded to f16 and bf16: random bits, the midpoints between neighbouring f16
/// values (ties), and the edges (overflow, subnormals, underflow to zero).
#[test]
fn f32_rounds_to_f16_and_bf16_as_half_does() {
    let mut x: Vec<f32> = Vec::new();
    let mut s = 0x9E37_79B9u32;
    for _ in 0..100_000 {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        x.push(f32::from_bits(s));
    }
    for i in 0..0x7C00u16 {
        let (a, b) = (f16::from_bits(i).to_f32(), f16::from_bits(i + 1).to_f32());
        x.push(((a as f64 + b as f64) / 2.0) as f32);
    }
    x.extend([
        65504.0,
        65520.0,
        65519.99,
        1e-8,
        5.9604645e-8,
        2.9802322e-8,
        2.9802326e-8,
        -0.0,
        f32::INFINITY,
        f32::MIN_POSITIVE,
    ]);
    let n = x.len();
    on_each_device(|ty| {
        let (mut h, mut b) = (vec![f16::ZERO; n], vec![bf16::ZERO; n]);
        round_f32(&x, &mut h, &mut b);
        for i in 0..n {
            let (wh, wb) = (f16::from_f32(x[i]), bf16::from_f32(x[i]));
            assert!(
                same16(h[i].to_bits(), wh.to_bits(), false),
                "{ty}: f16::from_f32({:e}) ({:#x}): {:#06x} against {:#06x}",
                x[i],
                x[i].to_bits(),
                h[i].to_bits(),
                wh.to_bits()
            );
            assert!(
                same16(b[i].to_bits(), wb.to_bits(), true),
                "{ty}: bf16::from_f32({:e}): {:#06x} against {:#06x}",
                x[i],
                b[i].to_bits(),
                wb.to_bits()
            );
        }
    });
}

#[derive(Clone, Copy, acc::DeviceCopy)]
#[repr(C)]
struct Particle {
    mass: f16,
    speed: f32,
    charge: bf16,
}

/// Arithmetic on f16 and bf16 values (each operation rounded), comparisons, `max`/`min`,
/// a captured f16 scalar, a local accumulating over a sequential loop, and struct fields.
#[acc::parallel_loop(copyin(x, w, ps), copyout(y, e, big, m))]
fn arithmetic(
    x: &[f16],
    w: &[f16],
    alpha: f16,
    ps: &[Particle],
    y: &mut [f16],
    e: &mut [bf16],
    big: &mut [bool],
    m: &mut [f32],
) {
    for i in 0..y.len() {
        let a = x[i];
        y[i] = alpha * a * w[i] + a - w[i] / a;
        let mut acc = f16::ZERO;
        for k in 0..4 {
            acc = acc + x[(i + k) % x.len()] * w[i];
        }
        y[i] = y[i] + acc.max(a).min(w[i]) - f16::EPSILON;
        big[i] = a > w[i] || -a == w[i];
        e[i] = ps[i].charge * bf16::from_f32(ps[i].speed) + bf16::from_bits(0x3F80);
        m[i] = (ps[i].mass * a).to_f32() + ps[i].mass.to_f64() as f32;
    }
}

#[test]
fn f16_and_bf16_arithmetic_as_half_computes_it() {
    let n = 5000;
    let x: Vec<f16> = (0..n)
        .map(|i| f16::from_f32((i as f32 - 2500.0) * 0.0173 + 0.5))
        .collect();
    let w: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(1.0 + (i % 97) as f32 * 0.031))
        .collect();
    let ps: Vec<Particle> = (0..n)
        .map(|i| Particle {
            mass: f16::from_f32(0.5 + (i % 13) as f32 * 0.25),
            speed: i as f32 * 0.37,
            charge: bf16::from_f32(-1.0 + (i % 7) as f32 * 0.3),
        })
        .collect();
    let alpha = f16::from_f32(0.7);
    let (mut want_y, mut want_e, mut want_big, mut want_m) = (
        vec![f16::ZERO; n],
        vec![bf16::ZERO; n],
        vec![false; n],
        vec![0.0f32; n],
    );
    acc::set_device_type(acc::DeviceType::Host);
    arithmetic(
        &x,
        &w,
        alpha,
        &ps,
        &mut want_y,
        &mut want_e,
        &mut want_big,
        &mut want_m,
    );
    // The host device runs the region as written: Rust's own `half` arithmetic.
    assert_eq!(want_y[10], {
        let a = x[10];
        let mut acc = f16::ZERO;
        for k in 0..4 {
            acc = acc + x[(10 + k) % n] * w[10];
        }
        (alpha * a * w[10] + a - w[10] / a) + acc.max(a).min(w[10]) - f16::EPSILON
    });
    on_each_device(|ty| {
        let (mut y, mut e, mut big, mut m) = (
            vec![f16::ZERO; n],
            vec![bf16::ZERO; n],
            vec![false; n],
            vec![0.0f32; n],
        );
        arithmetic(&x, &w, alpha, &ps, &mut y, &mut e, &mut big, &mut m);
        for i in 0..n {
            assert!(
                same16(y[i].to_bits(), want_y[i].to_bits(), false),
                "{ty}: y[{i}] = {} against {}",
                y[i],
                want_y[i]
            );
            assert!(
                same16(e[i].to_bits(), want_e[i].to_bits(), true),
                "{ty}: e[{i}] = {} against {}",
                e[i],
                want_e[i]
            );
            assert_eq!(big[i], want_big[i], "{ty}: big[{i}]");
            assert_eq!(m[i].to_bits(), want_m[i].to_bits(), "{ty}: m[{i}]");
        }
    });
}

/// Every reduction operator on 16-bit floats, on a combined construct and element-wise on an
/// array (3.3 section 2.5.15).
#[acc::offload]
fn half_reductions(x: &[f16], b: &[bf16]) -> (f16, f16, f16, bf16, [f16; 2]) {
    let mut s = f16::from_f32(0.5);
    let mut hi = f16::NEG_INFINITY;
    let mut lo = f16::from_f32(100.0);
    let mut p = bf16::from_f32(3.0);
    let mut parts = [f16::ZERO, f16::ONE];
    #[acc::parallel_loop(
        copyin(x, b),
        reduction(+: s, parts),
        reduction(max: hi),
        reduction(min: lo),
        reduction(*: p)
    )]
    for i in 0..x.len() {
        s += x[i];
        hi = hi.max(x[i]);
        lo = lo.min(x[i]);
        p *= b[i];
        parts[i % 2] += x[i];
    }
    (s, hi, lo, p, parts)
}

/// Row sums by a vector loop's reduction into a gang's `f16` local, and of the even and odd
/// columns into a gang's `[f16; 2]`; each comes back as the `f32` the kernel held, which must
/// be a value of `f16`.
#[acc::parallel_loop(gang, copyin(x), copyout(sums, held, halves))]
fn half_row_sums(x: &[f16], n: usize, sums: &mut [f16], held: &mut [f32], halves: &mut [f32]) {
    for r in 0..sums.len() {
        let mut t = f16::ZERO;
        let mut two = [f16::ZERO; 2];
        #[acc::r#loop(vector, reduction(+: t, two))]
        for c in 0..n {
            t += x[r * n + c];
            two[c % 2] += x[r * n + c];
        }
        sums[r] = t;
        held[r] = t.to_f32();
        halves[2 * r] = two[0].to_f32();
        halves[2 * r + 1] = two[1].to_f32();
    }
}

#[test]
fn f16_and_bf16_reduce_with_every_operator() {
    // Sums of multiples of 1/4 under 512 in magnitude, maxima, minima and products of powers
    // of two are exact in any order, so every device gives the host's bits.
    let n = 100_000;
    let x: Vec<f16> = (0..n)
        .map(|i| {
            f16::from_f32(((i * 7) % 5) as f32 * 0.25 - 0.5 + if i == 777 { 9.0 } else { 0.0 })
        })
        .collect();
    let b: Vec<bf16> = (0..n)
        .map(|i| match i % 20_000 {
            0 => bf16::from_f32(2.0),
            10_000 => bf16::from_f32(0.5),
            7 => bf16::from_f32(-4.0),
            _ => bf16::ONE,
        })
        .collect();
    acc::set_device_type(acc::DeviceType::Host);
    let want = half_reductions(&x, &b);
    assert_eq!(want.0, f16::from_f32(9.5));
    assert_eq!(want.1, f16::from_f32(9.5));
    assert_eq!(want.2, f16::from_f32(-0.5));
    assert_eq!(want.3, bf16::from_f32(3.0 * (-4.0f32).powi(5)));
    on_each_device(|ty| {
        let got = half_reductions(&x, &b);
        assert_eq!(got.0.to_bits(), want.0.to_bits(), "{ty}: + gave {}", got.0);
        assert_eq!(
            got.1.to_bits(),
            want.1.to_bits(),
            "{ty}: max gave {}",
            got.1
        );
        assert_eq!(
            got.2.to_bits(),
            want.2.to_bits(),
            "{ty}: min gave {}",
            got.2
        );
        assert_eq!(got.3.to_bits(), want.3.to_bits(), "{ty}: * gave {}", got.3);
        assert_eq!(got.4, want.4, "{ty}: the array's + gave {:?}", got.4);
    });

    // Sums that f16 cannot hold exactly: each device's result is within the rounding of its
    // order, and what the kernel holds is a value of f16.
    let (rows, cols) = (64, 1000);
    let x: Vec<f16> = (0..rows * cols)
        .map(|i| f16::from_f32(1.0 + (i % 37) as f32 * 0.013))
        .collect();
    on_each_device(|ty| {
        let (mut sums, mut held, mut halves) = (
            vec![f16::ZERO; rows],
            vec![0.0f32; rows],
            vec![0.0f32; 2 * rows],
        );
        half_row_sums(&x, cols, &mut sums, &mut held, &mut halves);
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            let exact: f64 = row.iter().map(|v| v.to_f64()).sum();
            let got = sums[r].to_f64();
            // f16 keeps 11 bits: a sum near 1,240 is rounded in steps of 1, and a sequential
            // sum drifts by at most about half a step per addition above 1,024.
            assert!(
                (got - exact).abs() <= 150.0,
                "{ty}: row {r}: {got} against {exact}"
            );
            assert_eq!(
                held[r],
                sums[r].to_f32(),
                "{ty}: row {r}: the kernel held {}",
                held[r]
            );
            for k in 0..2 {
                let exact: f64 = row.iter().skip(k).step_by(2).map(|v| v.to_f64()).sum();
                let h = halves[2 * r + k];
                assert!(
                    (h as f64 - exact).abs() <= 75.0,
                    "{ty}: row {r}, part {k}: {h} against {exact}"
                );
                assert_eq!(
                    h,
                    f16::from_f32(h).to_f32(),
                    "{ty}: row {r}, part {k}: the kernel held {h}"
                );
            }
        }
    });
}

#[acc::parallel_loop(copyin(x, w), copyout(y))]
fn axpy_bf16(alpha: bf16, x: &[bf16], w: &[bf16], y: &mut [bf16]) {
    for i in 0..x.len() {
        y[i] = alpha * x[i] + w[i];
    }
}

/// bf16 results in the subnormal range (below 2^-126, where bf16 shares f32's exponent): the
/// host's bits on every device but wgpu, where a driver may flush `f32` subnormals to zero,
/// as WGSL allows (issue 40, item 4: the H200's Vulkan driver gave 0x0000 for 0x0005). There,
/// and only for such results, a zero of the same sign is what the guide documents.
#[test]
fn bf16_subnormal_results_are_the_hosts_or_flushed_on_wgpu() {
    let mut x = Vec::new();
    let mut w = Vec::new();
    for k in 0..4000u16 {
        // Normal values around 2^-126, and subnormals, of both signs.
        let bits = 0x0001 + (k % 0x0200);
        x.push(bf16::from_bits(if k % 3 == 0 {
            bits | 0x8000
        } else {
            bits
        }));
        w.push(bf16::from_bits((k * 7) % 0x0090));
    }
    let alpha = bf16::from_f32(0.5);
    let want: Vec<bf16> = x.iter().zip(&w).map(|(&a, &b)| alpha * a + b).collect();
    let subnormal = |v: bf16| v.to_bits() & 0x7F80 == 0 && v.to_bits() & 0x007F != 0;
    assert!(
        want.iter().filter(|v| subnormal(**v)).count() > 1000,
        "the test reaches subnormals"
    );
    on_each_device(|ty| {
        let mut y = vec![bf16::ZERO; x.len()];
        axpy_bf16(alpha, &x, &w, &mut y);
        for i in 0..x.len() {
            let (got, exp) = (y[i], want[i]);
            let flushed = ty == acc::DeviceType::Wgpu && as_if_flushed(got, x[i], w[i], alpha);
            assert!(
                got.to_bits() == exp.to_bits() || flushed,
                "{ty}: {alpha} * {:#06x} + {:#06x} = {:#06x}, half gives {:#06x}",
                x[i].to_bits(),
                w[i].to_bits(),
                got.to_bits(),
                exp.to_bits()
            );
        }
    });
}

/// Whether `got` is `alpha * x + w` as a device flushing `f32` subnormals (operands and
/// results) to zero computes it: each operation in `f32` on flushed operands, its result
/// flushed, then rounded to bf16 (a zero of either sign where that or the exact result is 0).
fn as_if_flushed(got: bf16, x: bf16, w: bf16, alpha: bf16) -> bool {
    let ftz = |v: f32| if v.is_subnormal() { 0.0 } else { v };
    let p = bf16::from_f32(ftz(ftz(alpha.to_f32()) * ftz(x.to_f32())));
    let model = bf16::from_f32(ftz(ftz(p.to_f32()) + ftz(w.to_f32())));
    got.to_bits() == model.to_bits()
        || (got.to_bits() & 0x7FFF == 0 && model.to_bits() & 0x7FFF == 0)
}
