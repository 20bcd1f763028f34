//! The routine directive (3.3 section 2.15): functions called from compute regions.

use crate::devices::on_each_device;

#[acc::routine(seq)]
fn poly(x: f64) -> f64 {
    let mut r = 0.0;
    for k in 0..4 {
        r = r * x + k as f64;
    }
    r
}

#[acc::routine(vector)]
fn row_sum(a: &[f64], row: usize, m: usize) -> f64 {
    let mut s = 0.0;
    #[acc::r#loop(vector, reduction(+: s))]
    for j in 0..m {
        s += a[row * m + j];
    }
    s
}

#[acc::routine(seq)]
fn clamp_all(v: &mut [i32], lo: i32, hi: i32) {
    for k in 0..v.len() {
        v[k] = v[k].clamp(lo, hi);
    }
}

#[acc::offload]
fn uses_routines(a: &[f64], n: usize, m: usize) -> (Vec<f64>, Vec<f64>) {
    let mut p = vec![0.0; n];
    let mut rows = vec![0.0; n];
    #[acc::parallel_loop(copyin(a), copyout(p, rows))]
    for i in 0..n {
        p[i] = poly(i as f64 * 0.5);
        rows[i] = row_sum(a, i, m);
    }
    (p, rows)
}

#[test]
fn routines_called_from_regions() {
    on_each_device(|_| {
        let (n, m) = (500, 16);
        let a: Vec<f64> = (0..n * m).map(|k| (k % 9) as f64).collect();
        let (p, rows) = uses_routines(&a, n, m);
        for i in 0..n {
            let x = i as f64 * 0.5;
            assert_eq!(p[i], ((0.0 * x + 1.0) * x + 2.0) * x + 3.0);
            assert_eq!(rows[i], a[i * m..(i + 1) * m].iter().sum::<f64>());
        }
    });
}

#[acc::offload]
fn routine_with_mut_arg(v: &mut Vec<i32>, chunks: usize) {
    let len = v.len() / chunks;
    #[acc::serial(copy(v))]
    {
        for c in 0..chunks {
            clamp_all(&mut v[c * len..(c + 1) * len], -5, 5);
        }
    }
}

#[test]
fn routine_writing_through_a_slice() {
    on_each_device(|_| {
        let mut v: Vec<i32> = (-50..50).collect();
        routine_with_mut_arg(&mut v, 4);
        assert!(v.iter().zip(-50..50).all(|(&x, i)| x == i.clamp(-5, 5)));
    });
}

/// The first index of `key` in `v`, or `v.len()`: an early `return` from inside a loop.
#[acc::routine(seq)]
fn find(v: &[i32], key: i32) -> usize {
    for k in 0..v.len() {
        if v[k] == key {
            return k;
        }
    }
    v.len()
}

/// Early returns at the top level and from nested loops, with and without a value.
#[acc::routine(seq)]
fn first_pair_sum(v: &[i32], target: i32) -> i32 {
    if v.is_empty() {
        return -1;
    }
    let mut k = 0;
    while k < v.len() {
        let mut j = k + 1;
        loop {
            if j >= v.len() {
                break;
            }
            if v[k] + v[j] == target {
                return (k * 100 + j) as i32;
            }
            j += 1;
        }
        k += 1;
    }
    -2
}

#[acc::routine(seq)]
fn zero_until_negative(v: &mut [i32]) {
    for k in 0..v.len() {
        if v[k] < 0 {
            return;
        }
        v[k] = 0;
    }
}

#[acc::offload]
fn early_returns(rows: &mut [i32], m: usize, found: &mut [usize], pairs: &mut [i32]) {
    let n = found.len();
    #[acc::parallel_loop(copy(rows), copyout(found, pairs))]
    for i in 0..n {
        found[i] = find(&rows[i * m..(i + 1) * m], 7);
        pairs[i] = first_pair_sum(&rows[i * m..(i + 1) * m], 10);
        zero_until_negative(&mut rows[i * m..(i + 1) * m]);
    }
}

#[test]
fn routines_return_early() {
    on_each_device(|ty| {
        let (n, m) = (300, 12);
        let original: Vec<i32> = (0..n * m).map(|k| ((k * 7919) % 23) as i32 - 3).collect();
        let mut rows = original.clone();
        let (mut found, mut pairs) = (vec![0; n], vec![0; n]);
        early_returns(&mut rows, m, &mut found, &mut pairs);
        for i in 0..n {
            let r = &original[i * m..(i + 1) * m];
            let want_found = r.iter().position(|&x| x == 7).unwrap_or(m);
            assert_eq!(found[i], want_found, "{ty}: find in row {i}");
            let mut want_pair = -2;
            'outer: for k in 0..m {
                for j in k + 1..m {
                    if r[k] + r[j] == 10 {
                        want_pair = (k * 100 + j) as i32;
                        break 'outer;
                    }
                }
            }
            assert_eq!(pairs[i], want_pair, "{ty}: first pair in row {i}");
            let stop = r.iter().position(|&x| x < 0).unwrap_or(m);
            for k in 0..m {
                let want = if k < stop { 0 } else { r[k] };
                assert_eq!(rows[i * m + k], want, "{ty}: row {i}, element {k}");
            }
        }
    });
}

/// A generic routine: its scalar parameters take the argument's type at each call.
#[acc::routine(seq)]
fn axpy<T: Copy + std::ops::Mul<Output = T> + std::ops::Add<Output = T>>(a: T, x: T, y: T) -> T {
    a * x + y
}

/// A generic routine over a slice.
#[acc::routine(seq)]
fn total<T: Copy + std::ops::AddAssign>(v: &[T], init: T) -> T {
    let mut s = init;
    for k in 0..v.len() {
        s += v[k];
    }
    s
}

#[acc::offload]
fn generic_routines(x: &[f32], k: &[i64], m: usize, out: &mut [f32], sums: &mut [i64]) {
    let n = out.len();
    #[acc::parallel_loop(copyin(x, k), copyout(out, sums))]
    for i in 0..n {
        out[i] = axpy(2.0f32, x[i], 1.0);
        sums[i] = axpy(3i64, total(&k[i * m..(i + 1) * m], 0), -1);
    }
}

#[test]
fn generic_routines_run_at_each_type() {
    on_each_device(|ty| {
        let (n, m) = (200, 5);
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let k: Vec<i64> = (0..n * m).map(|i| i as i64 * 1_000_000_007).collect();
        let (mut out, mut sums) = (vec![0.0f32; n], vec![0i64; n]);
        generic_routines(&x, &k, m, &mut out, &mut sums);
        for i in 0..n {
            assert_eq!(out[i], 2.0 * x[i] + 1.0, "{ty}: axpy::<f32> at {i}");
            let t: i64 = k[i * m..(i + 1) * m].iter().sum();
            assert_eq!(sums[i], 3 * t - 1, "{ty}: axpy::<i64>(total::<i64>) at {i}");
        }
    });
}

/// A position and velocity reflected off walls at 0 and `wall`: a tuple from an `if`/`else`
/// chain of tuples.
#[acc::routine(seq)]
fn bounce(pos: f32, vel: f32, wall: f32) -> (f32, f32) {
    if pos < 0.0 {
        (-pos, -vel * 0.5)
    } else if pos > wall {
        (2.0 * wall - pos, -vel * 0.5)
    } else {
        (pos, vel)
    }
}

/// The quotient and remainder, with an early `return` of a tuple.
#[acc::routine(seq)]
fn div_rem(a: i64, b: i64) -> (i64, i64) {
    if b == 0 {
        return (0, a);
    }
    let q = a / b;
    (q, a - q * b)
}

#[acc::parallel_loop(copy(x, v), copyout(q, r))]
fn tuple_routines(x: &mut [f32], v: &mut [f32], q: &mut [i64], r: &mut [i64]) {
    for i in 0..x.len() {
        let (p, w) = bounce(x[i], v[i], 10.0);
        x[i] = p;
        v[i] = w;
        let (a, b) = div_rem(i as i64 * 7 - 300, (i % 5) as i64);
        q[i] = a;
        r[i] = b;
    }
}

/// Routines returning tuples, destructured by `let (a, b) = routine(..)` (a natural Rust form,
/// issue 17): the body's tuples, `if`/`else` of them and `return (..)` all arrive.
#[test]
fn routines_return_tuples() {
    on_each_device(|ty| {
        let n = 1000;
        let mut x: Vec<f32> = (0..n).map(|i| i as f32 * 0.03 - 5.0).collect();
        let mut v: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
        let (x0, v0) = (x.clone(), v.clone());
        let (mut q, mut r) = (vec![0i64; n], vec![0i64; n]);
        tuple_routines(&mut x, &mut v, &mut q, &mut r);
        for i in 0..n {
            assert_eq!(
                (x[i], v[i]),
                bounce(x0[i], v0[i], 10.0),
                "{ty}: bounce at {i}"
            );
            assert_eq!(
                (q[i], r[i]),
                div_rem(i as i64 * 7 - 300, (i % 5) as i64),
                "{ty}: div_rem at {i}"
            );
        }
    });
}

// NPB's random number generator as its OpenACC sources write it (issue 40, items 7, 8, 9):
// `randlc(&mut seed, a)` takes the seed by reference and reads `const` items; `vranlc` fills
// a private array through a routine, passing its own `&mut` parameter on.

const R23: f64 = 1.192_092_895_507_812_5e-7; // 0.5^23
const T23: f64 = 8_388_608.0; // 2^23
const R46: f64 = R23 * R23;
const T46: f64 = T23 * T23;
const NK: usize = 16;

#[acc::routine(seq)]
fn randlc(x: &mut f64, a: f64) -> f64 {
    let t1 = R23 * a;
    let a1 = (t1 as i64) as f64;
    let a2 = a - T23 * a1;
    let t2 = R23 * *x;
    let x1 = (t2 as i64) as f64;
    let x2 = *x - T23 * x1;
    let t3 = a1 * x2 + a2 * x1;
    let t4 = ((R23 * t3) as i64) as f64;
    let z = t3 - T23 * t4;
    let t5 = T23 * z + a2 * x2;
    let t6 = ((R46 * t5) as i64) as f64;
    *x = t5 - T46 * t6;
    R46 * *x
}

#[acc::routine(seq)]
fn vranlc(n: usize, x: &mut f64, a: f64, y: &mut [f64]) {
    for i in 0..n {
        y[i] = randlc(x, a);
    }
}

#[acc::routine(seq)]
fn bump(x: &mut f64, by: f64) -> f64 {
    *x += by;
    *x * 2.0
}

#[acc::offload]
fn npb_randoms(seeds: &[f64], a: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = seeds.len();
    let mut first = vec![0.0; n];
    let mut sums = vec![0.0; n];
    let mut last = vec![0.0; n];
    #[acc::parallel_loop(copyin(seeds), copyout(first, sums, last))]
    for k in 0..n {
        let mut seed = seeds[k];
        let mut x = [0.0f64; 2 * NK];
        first[k] = randlc(&mut seed, a);
        vranlc(2 * NK, &mut seed, a, &mut x);
        let mut s = 0.0;
        for i in 0..2 * NK {
            s += x[i];
        }
        let doubled = bump(&mut s, 1.0);
        sums[k] = s + doubled;
        last[k] = seed;
    }
    (first, sums, last)
}

#[test]
fn routines_take_scalars_by_reference_read_consts_and_fill_private_arrays() {
    let seeds: Vec<f64> = (0..500).map(|k| 271_828_183.0 + 2.0 * k as f64).collect();
    let a = 1_220_703_125.0; // 5^13, NPB EP's multiplier
    let want = {
        let (mut first, mut sums, mut last) = (Vec::new(), Vec::new(), Vec::new());
        for &s0 in &seeds {
            let mut seed = s0;
            let mut x = [0.0f64; 2 * NK];
            first.push(randlc(&mut seed, a));
            vranlc(2 * NK, &mut seed, a, &mut x);
            let mut s = 0.0;
            for v in x {
                s += v;
            }
            let d = bump(&mut s, 1.0);
            sums.push(s + d);
            last.push(seed);
        }
        (first, sums, last)
    };
    on_each_device(|ty| {
        let got = npb_randoms(&seeds, a);
        assert_eq!(got.0, want.0, "first numbers on {ty}");
        assert_eq!(got.2, want.2, "seeds after on {ty}");
        assert_eq!(got.1, want.1, "sums on {ty}");
    });
}
