//! Reductions (3.3 sections 2.5.15 and 2.9.11): every operator on every scalar type it fits,
//! on combined constructs, on the compute construct, on loops; original values are combined
//! in; arrays reduce element-wise.

use crate::devices::on_each_device;

const N: usize = 100;

/// One test per (operator, type): the region's result equals the same updates in a plain loop.
/// `$r`, `$v`, `$i` name the reduction variable, the data and the loop variable.
macro_rules! reduction_tests {
    ($($name:ident: $t:ty, [$($op:tt)+], $init:expr, |$k:ident| $val:expr, ($r:ident, $v:ident, $i:ident) => $upd:expr;)*) => {$(
        #[test]
        fn $name() {
            #[acc::offload]
            fn run($v: &[$t]) -> $t {
                let mut $r: $t = $init;
                #[acc::parallel_loop(copyin($v), reduction($($op)+: $r))]
                for $i in 0..$v.len() {
                    $upd;
                }
                $r
            }
            let $v: Vec<$t> = (0..N).map(|$k| $val).collect();
            let want = {
                let mut $r: $t = $init;
                for $i in 0..$v.len() {
                    $upd;
                }
                $r
            };
            on_each_device(|ty| assert_eq!(run(&$v), want, "{} on {ty}", stringify!($name)));
        }
    )*};
}

reduction_tests! {
    add_i8: i8, [+], 3, |k| (k % 3) as i8 - 1, (r, v, i) => r += v[i];
    add_i16: i16, [+], 3, |k| (k * 7 % 100) as i16 - 50, (r, v, i) => r += v[i];
    add_i32: i32, [+], -9, |k| k as i32 * 1000 - 3, (r, v, i) => r += v[i];
    add_i64: i64, [+], 1 << 40, |k| k as i64 * -77, (r, v, i) => r += v[i];
    add_isize: isize, [+], 0, |k| k as isize, (r, v, i) => r += v[i];
    add_u8: u8, [+], 1, |k| (k % 2) as u8, (r, v, i) => r += v[i];
    add_u16: u16, [+], 1, |k| k as u16, (r, v, i) => r += v[i];
    add_u32: u32, [+], 1, |k| k as u32 * 99, (r, v, i) => r += v[i];
    add_u64: u64, [+], 1, |k| k as u64 * 12345, (r, v, i) => r += v[i];
    add_usize: usize, [+], 1, |k| k, (r, v, i) => r += v[i];
    add_f32: f32, [+], 0.5, |k| k as f32, (r, v, i) => r += v[i];
    add_f64: f64, [+], 0.25, |k| k as f64 - 20.0, (r, v, i) => r += v[i];
    mul_i8: i8, [*], 1, |k| if k % 33 == 0 { -2 } else { 1 }, (r, v, i) => r *= v[i];
    mul_i16: i16, [*], 3, |k| if k % 25 == 0 { 2 } else { 1 }, (r, v, i) => r *= v[i];
    mul_i32: i32, [*], -1, |k| if k % 10 == 0 { 3 } else { 1 }, (r, v, i) => r *= v[i];
    mul_i64: i64, [*], 1, |k| if k % 5 == 0 { -2 } else { 1 }, (r, v, i) => r *= v[i];
    mul_isize: isize, [*], 1, |k| if k % 9 == 0 { 2 } else { 1 }, (r, v, i) => r *= v[i];
    mul_u8: u8, [*], 1, |k| if k % 40 == 0 { 2 } else { 1 }, (r, v, i) => r *= v[i];
    mul_u16: u16, [*], 1, |k| if k % 9 == 0 { 2 } else { 1 }, (r, v, i) => r *= v[i];
    mul_u32: u32, [*], 2, |k| if k % 20 == 0 { 3 } else { 1 }, (r, v, i) => r *= v[i];
    mul_u64: u64, [*], 1, |k| if k % 4 == 0 { 3 } else { 1 }, (r, v, i) => r *= v[i];
    mul_usize: usize, [*], 1, |k| if k % 6 == 0 { 2 } else { 1 }, (r, v, i) => r *= v[i];
    mul_f32: f32, [*], 1.0, |k| if k % 7 == 0 { 2.0 } else { 1.0 }, (r, v, i) => r *= v[i];
    mul_f64: f64, [*], -1.0, |k| if k % 3 == 0 { 0.5 } else { 1.0 }, (r, v, i) => r *= v[i];
    max_i8: i8, [max], i8::MIN, |k| (k * 37 % 101) as i8, (r, v, i) => r = r.max(v[i]);
    max_i16: i16, [max], 0, |k| (k * 37 % 101) as i16 - 70, (r, v, i) => r = r.max(v[i]);
    max_i32: i32, [max], -5, |k| -(k as i32) * 3, (r, v, i) => r = r.max(v[i]);
    max_i64: i64, [max], i64::MIN, |k| (k as i64 * 7919) % 1013, (r, v, i) => r = r.max(v[i]);
    max_isize: isize, [max], 0, |k| k as isize % 50, (r, v, i) => r = r.max(v[i]);
    max_u8: u8, [max], 0, |k| (k * 37 % 101) as u8, (r, v, i) => r = r.max(v[i]);
    max_u16: u16, [max], 200, |k| (k * 37 % 101) as u16, (r, v, i) => r = r.max(v[i]);
    max_u32: u32, [max], 0, |k| (k as u32 * 7919) % 1013, (r, v, i) => r = r.max(v[i]);
    max_u64: u64, [max], 0, |k| (k as u64 * 7919) % 1013, (r, v, i) => r = r.max(v[i]);
    max_usize: usize, [max], 0, |k| k * 3 % 71, (r, v, i) => r = r.max(v[i]);
    max_f32: f32, [max], f32::NEG_INFINITY, |k| ((k * 37 % 101) as f32).sin(), (r, v, i) => r = r.max(v[i]);
    max_f64: f64, [max], 0.0, |k| -((k * 37 % 101) as f64), (r, v, i) => r = f64::max(r, v[i]);
    min_i8: i8, [min], i8::MAX, |k| (k * 37 % 101) as i8 - 60, (r, v, i) => r = r.min(v[i]);
    min_i16: i16, [min], 0, |k| (k * 37 % 101) as i16, (r, v, i) => r = r.min(v[i]);
    min_i32: i32, [min], 1000, |k| (k as i32 * 7919) % 1013, (r, v, i) => r = r.min(v[i]);
    min_i64: i64, [min], 1000, |k| -(k as i64), (r, v, i) => r = r.min(v[i]);
    min_isize: isize, [min], 3, |k| 50 - k as isize, (r, v, i) => r = r.min(v[i]);
    min_u8: u8, [min], u8::MAX, |k| (k * 37 % 101) as u8 + 5, (r, v, i) => r = r.min(v[i]);
    min_u16: u16, [min], 7, |k| (k * 37 % 101) as u16 + 9, (r, v, i) => r = r.min(v[i]);
    min_u32: u32, [min], u32::MAX, |k| (k as u32 * 7919) % 1013 + 1, (r, v, i) => r = r.min(v[i]);
    min_u64: u64, [min], u64::MAX, |k| (k as u64 * 7919) % 1013 + 2, (r, v, i) => r = r.min(v[i]);
    min_usize: usize, [min], usize::MAX, |k| k * 3 % 71 + 4, (r, v, i) => r = r.min(v[i]);
    min_f32: f32, [min], f32::INFINITY, |k| ((k * 37 % 101) as f32).cos(), (r, v, i) => r = r.min(v[i]);
    min_f64: f64, [min], 0.0, |k| (k * 37 % 101) as f64, (r, v, i) => r = f64::min(r, v[i]);
    and_i8: i8, [&], -1, |k| !(1i8 << (k % 7)) | 0x40, (r, v, i) => r &= v[i];
    and_i16: i16, [&], -1, |k| !(1i16 << (k % 13)) | 0x2000, (r, v, i) => r &= v[i];
    and_i32: i32, [&], -1, |k| !(1i32 << (k % 29)), (r, v, i) => r &= v[i];
    and_i64: i64, [&], 0x7fff, |k| !(1i64 << (k % 7)), (r, v, i) => r &= v[i];
    and_isize: isize, [&], -1, |k| !(1isize << (k % 11)), (r, v, i) => r &= v[i];
    and_u8: u8, [&], 0xff, |k| !(1u8 << (k % 5)), (r, v, i) => r &= v[i];
    and_u16: u16, [&], 0xffff, |k| !(1u16 << (k % 9)), (r, v, i) => r &= v[i];
    and_u32: u32, [&], u32::MAX, |k| !(1u32 << (k % 31)), (r, v, i) => r &= v[i];
    and_u64: u64, [&], u64::MAX, |k| !(1u64 << (k % 63)), (r, v, i) => r &= v[i];
    and_usize: usize, [&], usize::MAX, |k| !(1usize << (k % 17)), (r, v, i) => r &= v[i];
    and_bool: bool, [&], true, |k| k % 2 == 0 || k < 1000, (r, v, i) => r &= v[i];
    or_i8: i8, [|], 0, |k| 1i8 << (k % 6), (r, v, i) => r |= v[i];
    or_i16: i16, [|], 0, |k| 1i16 << (k % 11), (r, v, i) => r |= v[i];
    or_i32: i32, [|], 0, |k| 1i32 << (k % 23), (r, v, i) => r |= v[i];
    or_i64: i64, [|], 1 << 62, |k| 1i64 << (k % 40), (r, v, i) => r |= v[i];
    or_isize: isize, [|], 0, |k| 1isize << (k % 20), (r, v, i) => r |= v[i];
    or_u8: u8, [|], 0, |k| 1u8 << (k % 7), (r, v, i) => r |= v[i];
    or_u16: u16, [|], 0, |k| 1u16 << (k % 15), (r, v, i) => r |= v[i];
    or_u32: u32, [|], 0, |k| 1u32 << (k % 31), (r, v, i) => r |= v[i];
    or_u64: u64, [|], 0, |k| 1u64 << (k % 63), (r, v, i) => r |= v[i];
    or_usize: usize, [|], 0, |k| 1usize << (k % 30), (r, v, i) => r |= v[i];
    or_bool: bool, [|], false, |k| k == 57, (r, v, i) => r |= v[i];
    xor_i8: i8, [^], 0, |k| (k * 37 % 101) as i8, (r, v, i) => r ^= v[i];
    xor_i16: i16, [^], 5, |k| (k * 37 % 1001) as i16, (r, v, i) => r ^= v[i];
    xor_i32: i32, [^], 0, |k| (k as i32).wrapping_mul(0x9E37), (r, v, i) => r ^= v[i];
    xor_i64: i64, [^], 0, |k| (k as i64).wrapping_mul(0x9E3779B9), (r, v, i) => r ^= v[i];
    xor_isize: isize, [^], 0, |k| k as isize * 977, (r, v, i) => r ^= v[i];
    xor_u8: u8, [^], 0, |k| (k * 37 % 256) as u8, (r, v, i) => r ^= v[i];
    xor_u16: u16, [^], 0, |k| (k * 377 % 65536) as u16, (r, v, i) => r ^= v[i];
    xor_u32: u32, [^], 9, |k| (k as u32).wrapping_mul(0x9E3779B9), (r, v, i) => r ^= v[i];
    xor_u64: u64, [^], 0, |k| (k as u64).wrapping_mul(0x9E3779B97F4A7C15), (r, v, i) => r ^= v[i];
    xor_usize: usize, [^], 0, |k| k * 1_000_003, (r, v, i) => r ^= v[i];
    xor_bool: bool, [^], true, |k| k % 3 == 0, (r, v, i) => r ^= v[i];
    land_bool: bool, [&&], true, |k| k != 1000, (r, v, i) => r = r && v[i];
    land_bool_false: bool, [&&], true, |k| k != 42, (r, v, i) => r = r && v[i];
    lor_bool: bool, [||], false, |k| k == 99, (r, v, i) => r = r || v[i];
    lor_bool_none: bool, [||], false, |k| k > 1000, (r, v, i) => r = r || v[i];
}

#[acc::offload]
fn gang_reduction_on_the_construct(x: &[f64]) -> (f64, f64) {
    let mut s = 1.0;
    let mut hi = f64::NEG_INFINITY;
    #[acc::parallel(copyin(x), reduction(+: s), reduction(max: hi))]
    {
        #[acc::r#loop(gang)]
        for i in 0..x.len() {
            s += x[i];
            hi = hi.max(x[i]);
        }
    }
    (s, hi)
}

#[test]
fn reduction_on_the_compute_construct() {
    on_each_device(|_| {
        let x: Vec<f64> = (0..50_000).map(|i| (i % 1000) as f64).collect();
        assert_eq!(
            gang_reduction_on_the_construct(&x),
            (1.0 + 50.0 * 499_500.0, 999.0)
        );
    });
}

#[acc::offload]
fn array_reduction(x: &[u32]) -> [u32; 4] {
    let mut hist = [0u32; 4];
    #[acc::parallel_loop(reduction(+: hist))]
    for i in 0..x.len() {
        hist[(x[i] % 4) as usize] += 1;
    }
    hist
}

#[test]
fn arrays_reduce_element_wise() {
    on_each_device(|_| {
        let x: Vec<u32> = (0..10_001).collect();
        assert_eq!(array_reduction(&x), [2501, 2500, 2500, 2500]);
    });
}

#[acc::offload]
fn array_max_and_product(x: &[f64]) -> ([f64; 3], [i64; 2]) {
    let mut m = [f64::NEG_INFINITY; 3];
    let mut p = [1i64; 2];
    #[acc::parallel_loop(reduction(max: m), reduction(*: p))]
    for i in 0..x.len() {
        m[i % 3] = m[i % 3].max(x[i]);
        if i < 40 {
            p[i % 2] *= 2;
        }
    }
    (m, p)
}

#[test]
fn arrays_reduce_with_every_operator_element_wise() {
    on_each_device(|_| {
        let x: Vec<f64> = (0..30_000).map(|i| ((i * 7919) % 10_007) as f64).collect();
        let mut want = [f64::NEG_INFINITY; 3];
        for (i, &v) in x.iter().enumerate() {
            want[i % 3] = want[i % 3].max(v);
        }
        assert_eq!(array_max_and_product(&x), (want, [1 << 20, 1 << 20]));
    });
}

#[acc::offload]
fn many_at_once(x: &[i64]) -> (i64, i64, i64, bool) {
    let (mut s, mut lo, mut hi, mut all_pos) = (0i64, i64::MAX, i64::MIN, true);
    #[acc::parallel_loop(reduction(+: s), reduction(min: lo), reduction(max: hi), reduction(&&: all_pos))]
    for i in 0..x.len() {
        s += x[i];
        lo = lo.min(x[i]);
        hi = hi.max(x[i]);
        all_pos = all_pos && x[i] > 0;
    }
    (s, lo, hi, all_pos)
}

#[test]
fn several_reductions_on_one_loop() {
    on_each_device(|_| {
        let x: Vec<i64> = (0..7777).map(|i| (i * 7919) % 1000 - 300).collect();
        let want = (
            x.iter().sum(),
            *x.iter().min().unwrap(),
            *x.iter().max().unwrap(),
            false,
        );
        assert_eq!(many_at_once(&x), want);
    });
}

#[acc::offload]
fn dot_collapsed(a: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    #[acc::parallel_loop(collapse(2), reduction(+: s))]
    for i in 0..n {
        for j in 0..n {
            s += a[i * n + j] * (i as f64);
        }
    }
    s
}

#[test]
fn reduction_over_a_collapsed_nest() {
    on_each_device(|_| {
        let n = 300;
        let a: Vec<f64> = (0..n * n).map(|k| (k % 3) as f64).collect();
        let mut want = 0.0;
        for i in 0..n {
            for j in 0..n {
                want += a[i * n + j] * i as f64;
            }
        }
        assert_eq!(dot_collapsed(&a, n), want);
    });
}

// Gang-redundant code (3.3 sections 2.5.1 and 2.5.15): every gang runs the code outside its
// gang loops, each on its own copy of the reduction variable, and the copies are combined at
// the end; so `num_gangs(4)` counts a contribution there four times.

#[acc::offload]
fn redundant_contributions(g: usize) -> (f64, i32, u32, u32, i64, bool) {
    let mut s = 0.5;
    let mut c = 1;
    let mut x = 0u32;
    let mut y = 0u32;
    let mut p = 1i64;
    let mut any = false;
    #[acc::parallel(num_gangs(4), reduction(+: s), reduction(^: x), reduction(*: p))]
    {
        s += 1.0;
        x ^= 5;
        p = p * 3;
    }
    #[acc::parallel(num_gangs(g), reduction(+: c), reduction(^: y), reduction(||: any))]
    {
        c += 2;
        y ^= 5;
        any = any || g > 2;
    }
    (s, c, x, y, p, any)
}

#[test]
fn gang_redundant_code_contributes_once_per_gang() {
    on_each_device(|ty| {
        assert_eq!(
            redundant_contributions(3),
            (4.5, 7, 0, 5, 81, true),
            "on {ty}"
        );
        assert_eq!(
            redundant_contributions(1),
            (4.5, 3, 0, 5, 81, false),
            "on {ty}"
        );
    });
}

#[acc::offload]
fn redundant_and_gang_loop(x: &[i64], w: &[i64]) -> (i64, i64) {
    let mut s = 100;
    let mut hi = i64::MIN;
    #[acc::parallel(num_gangs(8), copyin(x, w), reduction(+: s), reduction(max: hi))]
    {
        // Every gang: its own `s` starts at 0, gets w[0] + w[1], then its share of the loop.
        s += w[0];
        for k in 1..2 {
            s += w[k];
        }
        hi = hi.max(w[1]);
        #[acc::r#loop(gang, vector)]
        for i in 0..x.len() {
            s += x[i];
            hi = hi.max(x[i]);
        }
    }
    (s, hi)
}

#[test]
fn gang_redundant_code_beside_a_gang_loop() {
    on_each_device(|ty| {
        let x: Vec<i64> = (0..10_000).map(|i| i % 77 - 30).collect();
        let want = 100 + 8 * (3 + 4) + x.iter().sum::<i64>();
        assert_eq!(redundant_and_gang_loop(&x, &[3, 4]), (want, 46), "on {ty}");
        assert_eq!(
            redundant_and_gang_loop(&x, &[3, 400]),
            (100 + 8 * 403 + x.iter().sum::<i64>(), 400),
            "on {ty}"
        );
    });
}

#[acc::offload]
fn without_num_gangs() -> i32 {
    let mut c = 0;
    #[acc::parallel(reduction(+: c))]
    {
        c += 1;
    }
    c
}

#[test]
fn gang_redundant_code_without_num_gangs_counts_as_one_gang() {
    on_each_device(|ty| assert_eq!(without_num_gangs(), 1, "on {ty}"));
}

// `kernels` loops whose only dependence is a reduction the analysis recognizes (3.3 section
// 2.5.3): they run in parallel, with the reduction, on every device.

#[acc::offload]
fn kernels_reductions(x: &[f64], v: &[i64]) -> (f64, f64, i64, u64, f64) {
    let mut s = 1.0;
    let mut hi = f64::NEG_INFINITY;
    let mut lo = i64::MAX;
    let mut bits = 0u64;
    let mut prefix = 0.0;
    #[acc::kernels(copyin(x, v))]
    {
        for i in 0..x.len() {
            s += x[i] * 2.0;
            hi = hi.max(x[i]);
        }
        for k in 0..v.len() {
            lo = lo.min(v[k]);
            bits |= 1u64 << (v[k] % 64) as u64;
        }
        // Not a reduction: `prefix` is read before it is updated. It runs in order (short:
        // lavapipe stops an invocation's loops after 65,535 iterations).
        for i in 0..1000 {
            if prefix < 1.0e9 {
                prefix += x[i];
            }
        }
    }
    (s, hi, lo, bits, prefix)
}

#[test]
fn kernels_loops_with_recognized_reductions() {
    let x: Vec<f64> = (0..100_000).map(|i| ((i * 37) % 1001) as f64).collect();
    let v: Vec<i64> = (0..5000).map(|i| (i * 7919) % 100_003 + 17).collect();
    let want_s = 1.0 + 2.0 * x.iter().sum::<f64>();
    let want_prefix = {
        let mut p = 0.0;
        for &a in &x[..1000] {
            if p < 1.0e9 {
                p += a;
            }
        }
        p
    };
    let want_bits = v.iter().fold(0u64, |b, &k| b | 1u64 << (k % 64) as u64);
    on_each_device(|ty| {
        let (s, hi, lo, bits, prefix) = kernels_reductions(&x, &v);
        assert_eq!(s, want_s, "on {ty}");
        assert_eq!(hi, 1000.0, "on {ty}");
        assert_eq!(lo, *v.iter().min().unwrap(), "on {ty}");
        assert_eq!(bits, want_bits, "on {ty}");
        assert_eq!(prefix, want_prefix, "on {ty}");
    });
}

// A recognized reduction's value is the variable's for the rest of the `kernels` region: the
// code after the loop reads the sum and writes it again (issue 40, item 1: the GPUs read 0 and
// lost the last write).
#[acc::offload]
fn kernels_reduction_read_after_its_loop(
    a: &[f64],
    scale: f64,
) -> (Vec<f64>, Vec<f64>, f64, f64, i32) {
    let n = a.len();
    let mut s1 = vec![0.0; n];
    let mut s2 = vec![0.0; n];
    let mut total = 0.0;
    let mut top = f64::NEG_INFINITY;
    let mut count = 0;
    #[acc::kernels(copyin(a), copyout(s1, s2))]
    {
        for i in 0..n {
            s1[i] = a[i] * scale;
        }
        for i in 0..n {
            total += s1[i];
        }
        let mean = total / n as f64;
        for i in 0..n {
            s2[i] = s1[i] - mean;
            if s2[i] > top {
                top = s2[i];
            }
        }
        for i in 0..n {
            if s2[i] > 0.0 {
                count += 1;
            }
        }
        total = total * 2.0;
    }
    (s1, s2, total, top, count)
}

#[test]
fn kernels_code_after_a_recognized_reduction_sees_its_value() {
    let n = 3000;
    let a: Vec<f64> = (0..n)
        .map(|i| ((i * 37) % 1001) as f64 * 0.5 + 0.25)
        .collect();
    let scale = 0.01;
    let s1: Vec<f64> = a.iter().map(|x| x * scale).collect();
    let mut sum = 0.0;
    for x in &s1 {
        sum += x;
    }
    let mean = sum / n as f64;
    let s2: Vec<f64> = s1.iter().map(|x| x - mean).collect();
    let top = s2.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let count = s2.iter().filter(|&&x| x > 0.0).count() as i32;
    on_each_device(|ty| {
        let (g1, g2, total, t, c) = kernels_reduction_read_after_its_loop(&a, scale);
        assert_eq!(g1, s1, "on {ty}");
        // The sum's order differs between devices: the mean and all after it by rounding only.
        assert!(
            (total - 2.0 * sum).abs() <= 1e-9 * sum,
            "total {total}, want {} on {ty}",
            2.0 * sum
        );
        for (g, w) in g2.iter().zip(&s2) {
            assert!((g - w).abs() <= 1e-9, "s2 {g}, want {w} on {ty}");
        }
        assert!((t - top).abs() <= 1e-9, "top {t}, want {top} on {ty}");
        assert_eq!(c, count, "on {ty}");
    });
}

// `kernels_loop` recognizes the reductions `kernels { for .. }` does (issue 40, item 2: the
// combined form left `delta` a shared copy and its iterations raced). Kmeans' loop, as written.
#[acc::offload]
fn kmeans_membership(membership: &mut Vec<i32>, target: &[i32]) -> (f32, [i32; 5]) {
    let n = membership.len();
    let mut delta = 0.0f32;
    let mut counts = [0i32; 5];
    #[acc::kernels_loop(gang, worker, independent, reduction(+: counts), copy(membership), copyin(target))]
    for i in 0..n {
        if membership[i] != target[i] {
            delta += 1.0;
        }
        membership[i] = target[i];
        counts[target[i] as usize] += 1;
    }
    (delta, counts)
}

#[acc::offload]
fn kernels_loop_max_and_count(x: &[i64]) -> (i64, u32) {
    let mut hi = i64::MIN;
    let mut odd = 0u32;
    #[acc::kernels_loop(copyin(x))]
    for i in 0..x.len() {
        hi = hi.max(x[i]);
        if x[i] % 2 != 0 {
            odd += 1;
        }
    }
    (hi, odd)
}

#[test]
fn kernels_loop_recognizes_reductions_as_kernels_does() {
    let n = 20_000;
    let target: Vec<i32> = (0..n).map(|i| ((i * 7919) % 5) as i32).collect();
    let x: Vec<i64> = (0..n)
        .map(|i| ((i as i64 * 104_729) % 1_000_003) - 500_000)
        .collect();
    on_each_device(|ty| {
        let mut membership: Vec<i32> = (0..n)
            .map(|i| if i % 4 == 0 { target[i] } else { -1 })
            .collect();
        let (delta, counts) = kmeans_membership(&mut membership, &target);
        assert_eq!(delta, 15_000.0, "on {ty}");
        assert_eq!(membership, target, "on {ty}");
        assert_eq!(counts, [4000; 5], "on {ty}");
        let (hi, odd) = kernels_loop_max_and_count(&x);
        assert_eq!(hi, *x.iter().max().unwrap(), "on {ty}");
        assert_eq!(
            odd,
            x.iter().filter(|v| *v % 2 != 0).count() as u32,
            "on {ty}"
        );
    });
}

// Reductions over subarrays (3.3 section 2.5.15): part of a `Vec` or a slice, on the
// construct and on a loop inside it, element-wise into what the elements held.

#[acc::offload]
fn subarray_reductions(x: &[u32], s: &mut Vec<u64>, t: &mut [f64]) {
    #[acc::parallel_loop(reduction(+: s[2..6]))]
    for i in 0..x.len() {
        s[2 + (x[i] % 4) as usize] += 1;
    }
    let o = 1;
    #[acc::parallel(copyin(x))]
    {
        #[acc::r#loop(reduction(max: t[o..o + 3]))]
        for i in 0..x.len() {
            t[o + i % 3] = t[o + i % 3].max(x[i] as f64);
        }
    }
}

#[acc::offload]
fn subarray_reduction_on_present_data(x: &[u32], s: &mut Vec<u64>) -> u64 {
    let mut total = 0;
    #[acc::data(copy(s), copyin(x))]
    {
        // The subarray's elements come from the device's copy and go back to it.
        #[acc::parallel_loop(present(s))]
        for k in 0..s.len() {
            s[k] += 10;
        }
        #[acc::parallel_loop(reduction(+: s[0..2]))]
        for i in 0..x.len() {
            s[(x[i] % 2) as usize] += 1;
        }
        #[acc::parallel_loop(present(s), reduction(+: total))]
        for k in 0..s.len() {
            total += s[k];
        }
    }
    total
}

#[test]
fn subarrays_reduce_element_wise() {
    let x: Vec<u32> = (0..100_001).map(|i| (i * 7) % 1000).collect();
    let mut want_s = vec![5u64; 8];
    for v in &x {
        want_s[2 + (v % 4) as usize] += 1;
    }
    let mut want_t = vec![-1.0f64, 2.0, 3.0, 4.0, -5.0];
    for (i, v) in x.iter().enumerate() {
        want_t[1 + i % 3] = want_t[1 + i % 3].max(*v as f64);
    }
    on_each_device(|ty| {
        let mut s = vec![5u64; 8];
        let mut t = vec![-1.0, 2.0, 3.0, 4.0, -5.0];
        subarray_reductions(&x, &mut s, &mut t);
        assert_eq!(s, want_s, "on {ty}");
        assert_eq!(t, want_t, "on {ty}");
        let mut s = vec![1u64; 3];
        let total = subarray_reduction_on_present_data(&x, &mut s);
        assert_eq!(total, 3 * 11 + x.len() as u64, "on {ty}");
        assert_eq!(s[2], 11, "on {ty}");
        assert_eq!(s[0] + s[1], 22 + x.len() as u64, "on {ty}");
    });
}

/// A vector loop's element-wise reduction into an array local to a gang iteration (a row's
/// histogram): the block's threads cannot share it yet, so each gang iteration runs on one
/// thread on the GPUs, with the same counts.
#[acc::parallel_loop(gang, copyin(x), copyout(counts))]
fn row_histograms(x: &[u32], n: usize, counts: &mut [u32]) {
    for r in 0..counts.len() / 3 {
        let mut bins = [0u32; 3];
        #[acc::r#loop(vector, reduction(+: bins))]
        for c in 0..n {
            bins[(x[r * n + c] % 3) as usize] += 1;
        }
        for k in 0..3 {
            counts[3 * r + k] = bins[k];
        }
    }
}

#[test]
fn vector_loop_reduces_an_array_of_the_gang() {
    let (rows, n) = (40, 777);
    let x: Vec<u32> = (0..rows * n)
        .map(|i| (i as u32).wrapping_mul(2654435761) >> 7)
        .collect();
    let mut want = vec![0u32; 3 * rows];
    for r in 0..rows {
        for c in 0..n {
            want[3 * r + (x[r * n + c] % 3) as usize] += 1;
        }
    }
    on_each_device(|ty| {
        let mut counts = vec![0u32; 3 * rows];
        row_histograms(&x, n, &mut counts);
        assert_eq!(counts, want, "{ty}");
    });
}

// A gang loop's private variable that its vector loop reduces (issue 40, item 13): 3.3 asks for
// no clause on the `parallel` here (the variable is the gang's own), with `private` on the gang
// loop, or `firstprivate` on the construct.
#[acc::offload]
fn row_sums_private(a: &[f64], m: usize) -> Vec<f64> {
    let n = a.len() / m;
    let mut out = vec![0.0; n];
    let mut s = 0.0;
    #[acc::parallel(copyin(a), copyout(out))]
    {
        #[acc::r#loop(gang, private(s))]
        for i in 0..n {
            s = 0.0;
            #[acc::r#loop(vector, reduction(+: s))]
            for j in 0..m {
                s += a[i * m + j];
            }
            out[i] = s;
        }
    }
    let _ = s;
    out
}

#[acc::offload]
fn row_sums_firstprivate(a: &[f64], m: usize) -> Vec<f64> {
    let n = a.len() / m;
    let mut out = vec![0.0; n];
    let mut s = 0.0;
    #[acc::parallel(copyin(a), copyout(out), firstprivate(s))]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            s = 0.0;
            #[acc::r#loop(vector, reduction(+: s))]
            for j in 0..m {
                s += a[i * m + j];
            }
            out[i] = s;
        }
    }
    let _ = s;
    out
}

#[test]
fn a_gang_private_variable_reduced_by_its_vector_loop() {
    let m = 300;
    let a: Vec<f64> = (0..200 * m).map(|i| (i % 17) as f64 * 0.25).collect();
    let want: Vec<f64> = a.chunks(m).map(|r| r.iter().sum()).collect();
    on_each_device(|ty| {
        for (how, got) in [
            ("private", row_sums_private(&a, m)),
            ("firstprivate", row_sums_firstprivate(&a, m)),
        ] {
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-9, "{how} on {ty}: {g} against {w}");
            }
        }
    });
}

// A subarray reduction whose length is an expression of `const` items (issue 40, item 12:
// kmeans' `new_centers[0..NC * NF]`; only literals were taken).
const NC: usize = 5;
const NF: usize = 3;

#[acc::offload]
fn center_sums(x: &[f32], membership: &[usize]) -> Vec<f32> {
    let mut centers = vec![0.0f32; NC * NF + 2];
    #[acc::parallel_loop(copyin(x, membership), reduction(+: centers[0..NC * NF]))]
    for i in 0..membership.len() {
        for f in 0..NF {
            centers[membership[i] * NF + f] += x[i * NF + f];
        }
    }
    centers
}

#[test]
fn subarray_reductions_of_a_const_length() {
    let n = 3000;
    let membership: Vec<usize> = (0..n).map(|i| (i * 7) % NC).collect();
    let x: Vec<f32> = (0..n * NF).map(|i| (i % 11) as f32).collect();
    let mut want = vec![0.0f32; NC * NF + 2];
    for i in 0..n {
        for f in 0..NF {
            want[membership[i] * NF + f] += x[i * NF + f];
        }
    }
    on_each_device(|ty| {
        assert_eq!(center_sums(&x, &membership), want, "on {ty}");
    });
}

// A 2-D array reduced element-wise (issue 40, item 12: kmeans' `new_centers: [[f32; NF]; NC]`).
#[acc::offload]
fn center_sums_2d(x: &[f32], membership: &[usize]) -> [[f32; NF]; NC] {
    let mut centers = [[0.0f32; NF]; NC];
    #[acc::parallel_loop(copyin(x, membership), reduction(+: centers))]
    for i in 0..membership.len() {
        for f in 0..NF {
            centers[membership[i]][f] += x[i * NF + f];
        }
    }
    centers
}

#[test]
fn two_dimensional_array_reductions() {
    let n = 3000;
    let membership: Vec<usize> = (0..n).map(|i| (i * 7) % NC).collect();
    let x: Vec<f32> = (0..n * NF).map(|i| (i % 11) as f32).collect();
    let mut want = [[0.0f32; NF]; NC];
    for i in 0..n {
        for f in 0..NF {
            want[membership[i]][f] += x[i * NF + f];
        }
    }
    on_each_device(|ty| {
        assert_eq!(center_sums_2d(&x, &membership), want, "on {ty}");
    });
}

// The same inside a time loop the host drives: each step's sum is folded into the variable,
// which the step then halves.
#[acc::offload]
fn kernels_reduction_in_a_time_loop(a: &[f64], steps: usize) -> f64 {
    let n = a.len();
    let mut total = 1.0;
    #[acc::kernels(copyin(a))]
    {
        for _t in 0..steps {
            for i in 0..n {
                total += a[i];
            }
            total = total * 0.5;
        }
    }
    total
}

#[test]
fn kernels_reduction_read_after_its_loop_in_a_time_loop() {
    let a: Vec<f64> = (0..2000).map(|i| (i % 13) as f64 * 0.5).collect();
    let sum: f64 = a.iter().sum();
    let mut want = 1.0;
    for _ in 0..5 {
        want = (want + sum) * 0.5;
    }
    on_each_device(|ty| {
        let got = kernels_reduction_in_a_time_loop(&a, 5);
        assert!(
            (got - want).abs() <= 1e-9 * want,
            "{got} against {want} on {ty}"
        );
    });
}
