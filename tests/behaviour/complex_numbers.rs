//! `num_complex::Complex<f32>` and `Complex<f64>` (feature `num-complex`, issue 18 item 5):
//! arrays, captured scalars, locals, struct-value loads, `Complex::new` and `Complex { re, im }`,
//! `+ - * /` between complex numbers and with reals on either side, `conj`, `inv`, `scale`,
//! `unscale`, `norm_sqr`, `l1_norm`, `re`/`im` read and written, on every device with the
//! host's bits; `norm` and `arg` (`hypot`, `atan2`) within the math functions' tolerance.

use acc::num_complex::{Complex, Complex32, Complex64};
use acc::DeviceType;

use crate::devices::on_each_device;

#[acc::parallel_loop(copyin(a, b), copyout(out))]
fn arithmetic(a: &[Complex64], b: &[Complex64], s: f64, c: Complex64, out: &mut [Complex64]) {
    for i in 0..a.len() {
        let x = a[i];
        let y = b[i];
        let mut z = x * y + x / y - c;
        z = z * s - (s - x) + 2.0 / y;
        z += y.conj().scale(0.5) - x.inv().unscale(s);
        z.im = z.im + x.norm_sqr() - y.l1_norm();
        let w = Complex {
            re: z.re,
            im: -x.re,
        };
        out[i] = if x.re > 0.0 {
            z + w
        } else {
            -z * Complex::new(1.0, s)
        };
    }
}

fn host_arithmetic(a: &[Complex64], b: &[Complex64], s: f64, c: Complex64) -> Vec<Complex64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let mut z = x * y + x / y - c;
            z = z * s - (s - x) + 2.0 / y;
            z += y.conj().scale(0.5) - x.inv().unscale(s);
            z.im = z.im + x.norm_sqr() - y.l1_norm();
            let w = Complex {
                re: z.re,
                im: -x.re,
            };
            if x.re > 0.0 {
                z + w
            } else {
                -z * Complex::new(1.0, s)
            }
        })
        .collect()
}

fn values(n: usize, seed: u64) -> Vec<Complex64> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 11) as f64 / (1u64 << 53) as f64) * 8.0 - 4.0
    };
    (0..n).map(|_| Complex::new(next(), next())).collect()
}

#[test]
fn complex_arithmetic_gives_the_hosts_bits() {
    let (a, b) = (values(5000, 1), values(5000, 2));
    let c = Complex::new(0.25, -1.5);
    let want = host_arithmetic(&a, &b, 1.75, c);
    on_each_device(|ty| {
        let mut out = vec![Complex::new(0.0, 0.0); a.len()];
        arithmetic(&a, &b, 1.75, c, &mut out);
        for i in 0..a.len() {
            assert!(
                out[i].re.to_bits() == want[i].re.to_bits()
                    && out[i].im.to_bits() == want[i].im.to_bits(),
                "{ty}: element {i} ({} and {}): {} against {}",
                a[i],
                b[i],
                out[i],
                want[i]
            );
        }
    });
}

/// A Julia set in `Complex<f32>`: a complex local iterated with a captured complex constant.
#[acc::parallel_loop(copyout(counts), collapse(2))]
fn julia(counts: &mut [u32], w: usize, h: usize, c: Complex32) {
    for y in 0..h {
        for x in 0..w {
            let mut z = Complex32::new(
                x as f32 / w as f32 * 3.0 - 1.5,
                y as f32 / h as f32 * 2.0 - 1.0,
            );
            let mut k = 0u32;
            while k < 200 && z.norm_sqr() <= 4.0 {
                z = z * z + c;
                k += 1;
            }
            counts[y * w + x] = k;
        }
    }
}

#[test]
fn a_julia_set_in_complex_f32_matches_the_host() {
    let (w, h) = (160, 100);
    let c = Complex32::new(-0.8, 0.156);
    let mut want = vec![0u32; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut z = Complex32::new(
                x as f32 / w as f32 * 3.0 - 1.5,
                y as f32 / h as f32 * 2.0 - 1.0,
            );
            let mut k = 0u32;
            while k < 200 && z.norm_sqr() <= 4.0 {
                z = z * z + c;
                k += 1;
            }
            want[y * w + x] = k;
        }
    }
    on_each_device(|ty| {
        let mut counts = vec![0u32; w * h];
        julia(&mut counts, w, h, c);
        assert_eq!(counts, want, "on {ty}");
    });
}

/// `norm` and `arg` (through `hypot` and `atan2`), and parts read from array elements.
#[acc::parallel_loop(copyin(z), copyout(polar, parts))]
fn polar_of(z: &[Complex64], polar: &mut [f64], parts: &mut [f64]) {
    for i in 0..z.len() {
        polar[2 * i] = z[i].norm();
        polar[2 * i + 1] = z[i].arg();
        parts[i] = z[i].re * 2.0 + z[i].im;
    }
}

#[test]
fn norms_and_arguments_within_the_math_tolerance() {
    let z = values(2000, 3);
    on_each_device(|ty| {
        let mut polar = vec![0.0; 2 * z.len()];
        let mut parts = vec![0.0; z.len()];
        polar_of(&z, &mut polar, &mut parts);
        let tol = if matches!(ty, DeviceType::Host | DeviceType::Multicore) {
            0.0
        } else {
            1e-13
        };
        for (i, v) in z.iter().enumerate() {
            for (got, want) in [(polar[2 * i], v.norm()), (polar[2 * i + 1], v.arg())] {
                assert!(
                    (got - want).abs() <= tol * want.abs().max(1.0),
                    "{ty}: {v}: {got} against {want}"
                );
            }
            assert_eq!(
                parts[i].to_bits(),
                (v.re * 2.0 + v.im).to_bits(),
                "{ty}: {v}"
            );
        }
    });
}

/// An element updated in place (`a[i] *= w`, `a[i].im = ..`): the second part written reads
/// the element as it was before the first.
#[acc::parallel_loop(copy(a))]
fn rotate(a: &mut [Complex32], w: Complex32) {
    for i in 0..a.len() {
        a[i] *= w;
        a[i] = a[i] * a[i].conj() + a[i];
        a[i].im = a[i].im - a[i].re;
    }
}

#[test]
fn elements_updated_in_place() {
    let start: Vec<Complex32> = values(3000, 4)
        .iter()
        .map(|z| Complex32::new(z.re as f32, z.im as f32))
        .collect();
    let w = Complex32::new(0.6, 0.8);
    let mut want = start.clone();
    for v in &mut want {
        *v *= w;
        *v = *v * v.conj() + *v;
        v.im = v.im - v.re;
    }
    on_each_device(|ty| {
        let mut a = start.clone();
        rotate(&mut a, w);
        for i in 0..a.len() {
            assert!(
                a[i].re.to_bits() == want[i].re.to_bits()
                    && a[i].im.to_bits() == want[i].im.to_bits(),
                "{ty}: element {i}: {} against {}",
                a[i],
                want[i]
            );
        }
    });
}

/// `reduction(+: s)` of a complex number, and of a complex number weighted by a real.
#[acc::offload]
fn complex_sums(z: &[Complex64]) -> (Complex64, Complex64) {
    let mut s = Complex64::new(1.0, -1.0);
    let mut t = Complex64::new(0.0, 0.0);
    #[acc::parallel_loop(copyin(z), reduction(+: s, t))]
    for i in 0..z.len() {
        s += z[i] * z[i].conj();
        t = t + z[i] * (i as f64);
    }
    (s, t)
}

#[test]
fn complex_sums_reduce_on_every_device() {
    // Integer-valued parts: every order of the additions gives the same sum.
    let z: Vec<Complex64> = (0..10_000)
        .map(|i| Complex64::new((i % 17) as f64 - 8.0, (i % 5) as f64))
        .collect();
    let (mut s, mut t) = (Complex64::new(1.0, -1.0), Complex64::new(0.0, 0.0));
    for (i, v) in z.iter().enumerate() {
        s += v * v.conj();
        t += v * i as f64;
    }
    on_each_device(|ty| {
        assert_eq!(complex_sums(&z), (s, t), "on {ty}");
    });
}

#[acc::offload]
fn complex_product(z: &[Complex64]) -> Complex64 {
    let mut p = Complex64::new(2.0, 0.0);
    #[acc::parallel_loop(copyin(z), reduction(*: p))]
    for i in 0..z.len() {
        p *= z[i];
    }
    p
}

#[acc::offload]
fn complex_product32(z: &[Complex32]) -> Complex32 {
    let mut p = Complex32::new(1.0, 0.0);
    #[acc::parallel_loop(copyin(z), reduction(*: p))]
    for i in 0..z.len() {
        p = p * z[i];
    }
    p
}

/// Rows' products: a vector loop's complex product inside a gang loop.
#[acc::offload]
fn row_products(z: &[Complex64], n: usize, out: &mut [Complex64]) {
    #[acc::parallel_loop(gang, copyin(z), copyout(out))]
    for r in 0..out.len() {
        let mut p = Complex64::new(1.0, 0.0);
        #[acc::r#loop(vector, reduction(*: p))]
        for c in 0..n {
            p *= z[r * n + c];
        }
        out[r] = p;
    }
}

/// [`row_products`] with a warp per gang iteration on nvidia (`vector_length(32)`: shuffles).
#[acc::offload]
fn row_products_by_warps(z: &[Complex64], n: usize, out: &mut [Complex64]) {
    #[acc::parallel_loop(gang, vector_length(32), copyin(z), copyout(out))]
    for r in 0..out.len() {
        let mut p = Complex64::new(1.0, 0.0);
        #[acc::r#loop(vector, reduction(*: p))]
        for c in 0..n {
            p *= z[r * n + c];
        }
        out[r] = p;
    }
}

/// A complex product (`reduction(*: z)`) reduces on every device: the parts are combined
/// together, block by block and then in block order on the host; into the construct's
/// variable, a gang iteration's local and a region local. Unit rotations `e^{i k/1000}`
/// multiply to `e^{i sum}`.
#[test]
fn complex_products_reduce_on_every_device() {
    let n = 20_000;
    let angles: Vec<f64> = (0..n).map(|k| (k % 997) as f64 * 1e-3).collect();
    let z: Vec<Complex64> = angles
        .iter()
        .map(|&t| Complex64::new(t.cos(), t.sin()))
        .collect();
    let z32: Vec<Complex32> = z
        .iter()
        .map(|c| Complex32::new(c.re as f32, c.im as f32))
        .collect();
    let total: f64 = angles.iter().sum();
    let want = Complex64::new(2.0 * total.cos(), 2.0 * total.sin());
    on_each_device(|ty| {
        assert_eq!(
            complex_product(&[Complex64::new(0.0, 1.0); 4]),
            Complex64::new(2.0, 0.0),
            "on {ty}: 2 i^4 = 2"
        );
        assert_eq!(
            complex_product(&[]),
            Complex64::new(2.0, 0.0),
            "on {ty}: nothing"
        );
        let p = complex_product(&z);
        assert!((p - want).norm() < 1e-9, "on {ty}: {p} against {want}");
        let p = complex_product32(&z32);
        let w32 = want / 2.0;
        assert!(
            (Complex64::new(p.re as f64, p.im as f64) - w32).norm() < 2e-2,
            "on {ty}: {p} against {w32}"
        );
        // A vector loop's product inside a gang loop, into a local of each gang iteration.
        let rows = z[..64 * 100].to_vec();
        for by_warps in [false, true] {
            let mut out = vec![Complex64::default(); 64];
            if by_warps {
                row_products_by_warps(&rows, 100, &mut out);
            } else {
                row_products(&rows, 100, &mut out);
            }
            for (k, o) in out.iter().enumerate() {
                let want = rows[k * 100..(k + 1) * 100]
                    .iter()
                    .fold(Complex64::new(1.0, 0.0), |a, b| a * b);
                assert!(
                    (o - want).norm() < 1e-12,
                    "on {ty}: row {k}: {o} against {want}"
                );
            }
        }
        // The product repeated three times: e^{3 i sum}.
        let p = repeated_product(&z, 3);
        let want3 = Complex64::new((3.0 * total).cos(), (3.0 * total).sin());
        assert!((p - want3).norm() < 1e-9, "on {ty}: {p} against {want3}");
        // A loop's product into a local of the region, used after the loop.
        let mut out = [Complex64::default(); 1];
        product_then_scale(&z, &mut out);
        assert!(
            (out[0] - want).norm() < 1e-9,
            "on {ty}: {} against {want}",
            out[0]
        );
    });
}

/// A complex product of the construct whose loop a sequential loop repeats (the partials of
/// each run folded on the device into the running product).
#[acc::offload]
fn repeated_product(z: &[Complex64], reps: usize) -> Complex64 {
    let mut p = Complex64::new(1.0, 0.0);
    #[acc::parallel(copyin(z), reduction(*: p))]
    {
        for _ in 0..reps {
            #[acc::r#loop(gang, vector, reduction(*: p))]
            for i in 0..z.len() {
                p *= z[i];
            }
        }
    }
    p
}

/// A loop's complex product into a region local, used by the code after it.
#[acc::offload]
fn product_then_scale(z: &[Complex64], out: &mut [Complex64]) {
    #[acc::parallel(copyin(z), copyout(out))]
    {
        let mut p = Complex64::new(1.0, 0.0);
        #[acc::r#loop(gang, vector, reduction(*: p))]
        for i in 0..z.len() {
            p *= z[i];
        }
        out[0] = p * 2.0;
    }
}

/// A routine taking and returning complex numbers.
#[acc::routine(seq)]
fn cube_plus(z: Complex64, c: Complex64) -> Complex64 {
    let w = z * z;
    w * z + c
}

#[acc::parallel_loop(copyin(z), copyout(out))]
fn cubes(z: &[Complex64], c: Complex64, out: &mut [Complex64]) {
    for i in 0..z.len() {
        out[i] = cube_plus(z[i], c);
    }
}

#[test]
fn routines_take_and_return_complex_numbers() {
    let z = values(1000, 5);
    let c = Complex64::new(-0.5, 2.0);
    on_each_device(|ty| {
        let mut out = vec![Complex64::new(0.0, 0.0); z.len()];
        cubes(&z, c, &mut out);
        for i in 0..z.len() {
            let want = cube_plus(z[i], c);
            assert!(
                out[i].re.to_bits() == want.re.to_bits()
                    && out[i].im.to_bits() == want.im.to_bits(),
                "{ty}: {} against {want}",
                out[i]
            );
        }
    });
}

/// A struct with complex fields.
#[derive(Clone, Copy, Debug, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Wave {
    amp: Complex64,
    k: f64,
    phase: Complex32,
}

#[acc::parallel_loop(copy(w))]
fn advance(w: &mut [Wave], dt: f64) {
    for i in 0..w.len() {
        let turn = Complex64::new(0.0, w[i].k * dt);
        w[i].amp = w[i].amp * (Complex64::new(1.0, 0.0) + turn);
        w[i].phase = w[i].phase.conj() * 2.0;
        w[i].k += w[i].amp.re;
        // The struct as a value: its complex fields whole and by part.
        let v = w[i];
        let sq = v.amp * v.amp;
        w[i].k = v.k + sq.im + v.phase.re as f64;
        let mut u = w[i];
        u.amp = u.amp.conj();
        w[i] = u;
    }
}

/// Complex fields of a `DeviceCopy` struct are read and written whole and by part, in elements
/// and in struct values, with the host's bits on every device.
#[test]
fn complex_struct_fields() {
    let start: Vec<Wave> = (0..500)
        .map(|i| Wave {
            amp: Complex64::new(i as f64 * 0.5, 1.0 - i as f64),
            k: 0.25 * i as f64,
            phase: Complex32::new(i as f32, -2.0),
        })
        .collect();
    let mut want = start.clone();
    acc::set_device_type(DeviceType::Host);
    advance(&mut want, 0.125);
    on_each_device(|ty| {
        let mut w = start.clone();
        advance(&mut w, 0.125);
        assert_eq!(w, want, "on {ty}");
    });
}
