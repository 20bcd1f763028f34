//! The integer methods of std a region may call (docs/guide/regions.md), on every device, against std
//! on the host: bit counts, rotations, byte and bit order, euclidean division, wrapping and
//! saturating arithmetic, `isqrt`, `ilog2` and the sign and power-of-two tests. Exact
//! everywhere; devices whose bit instructions are 32-bit split 64-bit values into halves.

use crate::devices::on_each_device;

/// Results per element.
const K: usize = 21;

/// A region calling the methods on `x`, `y`, a count `n`, a divisor `d` (neither 0 nor -1) and
/// a positive `p`, with results as `u64` bits, and a test comparing it with std; `$extra` is an
/// expression in `$v` (an element of `x`) for the methods of signed or of unsigned types only.
macro_rules! int_methods_test {
    ($test:ident, $region:ident, $t:ident, |$v:ident| $extra:expr) => {
        #[acc::parallel_loop(copyin(x, y, n, d, p), copyout(out))]
        fn $region(x: &[$t], y: &[$t], n: &[u32], d: &[$t], p: &[$t], out: &mut [u64]) {
            for i in 0..x.len() {
                let ($v, w, k, q) = (x[i], y[i], n[i], d[i]);
                let o = i * K;
                out[o] = $v.count_ones() as u64;
                out[o + 1] = $v.count_zeros() as u64;
                out[o + 2] = $v.leading_zeros() as u64;
                out[o + 3] = $v.trailing_zeros() as u64;
                out[o + 4] = $v.rotate_left(k) as u64;
                out[o + 5] = $v.rotate_right(k) as u64;
                out[o + 6] = $v.swap_bytes() as u64;
                out[o + 7] = $v.reverse_bits() as u64;
                out[o + 8] = $v.abs_diff(w) as u64;
                out[o + 9] = $v.rem_euclid(q) as u64;
                out[o + 10] = $v.div_euclid(q) as u64;
                out[o + 11] = $v.wrapping_neg() as u64;
                out[o + 12] = $v.wrapping_shl(k) as u64;
                out[o + 13] = $v.wrapping_shr(k) as u64;
                out[o + 14] = $v.saturating_add(w) as u64;
                out[o + 15] = $v.saturating_sub(w) as u64;
                out[o + 16] = $v.saturating_mul(w) as u64;
                out[o + 17] = p[i].ilog2() as u64;
                out[o + 18] = p[i].isqrt() as u64;
                out[o + 19] = $t::count_ones(w) as u64;
                out[o + 20] = $extra;
            }
        }

        #[test]
        fn $test() {
            const NAMES: [&str; K] = [
                "count_ones",
                "count_zeros",
                "leading_zeros",
                "trailing_zeros",
                "rotate_left",
                "rotate_right",
                "swap_bytes",
                "reverse_bits",
                "abs_diff",
                "rem_euclid",
                "div_euclid",
                "wrapping_neg",
                "wrapping_shl",
                "wrapping_shr",
                "saturating_add",
                "saturating_sub",
                "saturating_mul",
                "ilog2",
                "isqrt",
                "count_ones (path)",
                "type-specific",
            ];
            let x: Vec<$t> = patterns($t::MIN as u64, $t::MAX as u64)
                .into_iter()
                .map(|b| b as $t)
                .collect();
            let m = x.len();
            let y: Vec<$t> = (0..m).map(|i| x[(i * 7 + 3) % m]).collect();
            let n: Vec<u32> = (0..m as u32).map(|i| i * 7 % 150).collect();
            let minus_one = (0 as $t).wrapping_sub(1);
            let d: Vec<$t> = y
                .iter()
                .map(|&q| if q == 0 || q == minus_one { 7 } else { q })
                .collect();
            let p: Vec<$t> = x.iter().map(|&v| if v > 0 { v } else { 5 }).collect();
            on_each_device(|ty| {
                let mut out = vec![0u64; m * K];
                $region(&x, &y, &n, &d, &p, &mut out);
                // Every mismatch is listed, so one run shows all a device gets wrong.
                let mut wrong = Vec::new();
                for i in 0..m {
                    let ($v, w, k, q) = (x[i], y[i], n[i], d[i]);
                    let want: [u64; K] = [
                        $v.count_ones() as u64,
                        $v.count_zeros() as u64,
                        $v.leading_zeros() as u64,
                        $v.trailing_zeros() as u64,
                        $v.rotate_left(k) as u64,
                        $v.rotate_right(k) as u64,
                        $v.swap_bytes() as u64,
                        $v.reverse_bits() as u64,
                        $v.abs_diff(w) as u64,
                        $v.rem_euclid(q) as u64,
                        $v.div_euclid(q) as u64,
                        $v.wrapping_neg() as u64,
                        $v.wrapping_shl(k) as u64,
                        $v.wrapping_shr(k) as u64,
                        $v.saturating_add(w) as u64,
                        $v.saturating_sub(w) as u64,
                        $v.saturating_mul(w) as u64,
                        p[i].ilog2() as u64,
                        p[i].isqrt() as u64,
                        w.count_ones() as u64,
                        $extra,
                    ];
                    for (j, want) in want.into_iter().enumerate() {
                        if out[i * K + j] != want {
                            wrong.push(format!(
                                "{}::{} of {} (other operand {w}, count {k}, divisor {q}, positive {}): {} instead of {want}",
                                stringify!($t),
                                NAMES[j],
                                $v,
                                p[i],
                                out[i * K + j]
                            ));
                        }
                    }
                }
                assert!(
                    wrong.is_empty(),
                    "{ty}: {} wrong results:\n{}",
                    wrong.len(),
                    wrong[..wrong.len().min(30)].join("\n")
                );
            });
        }
    };
}

/// Bit patterns: small values, the type's bounds, powers of two and their neighbours, and
/// pseudo-random words (truncated to the type by the caller).
fn patterns(min: u64, max: u64) -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        2,
        3,
        5,
        7,
        8,
        100,
        255,
        256,
        u64::MAX,
        u64::MAX - 1,
        min,
        max,
    ];
    v.extend([min.wrapping_add(1), max.wrapping_sub(1)]);
    for s in [4, 15, 16, 31, 32, 33, 47, 62, 63] {
        v.extend([1u64 << s, (1u64 << s) - 1, (1u64 << s) + 1]);
    }
    let mut r = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..60 {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        v.push(r >> (r % 61));
    }
    v
}

int_methods_test!(methods_of_i8, int_methods_i8, i8, |v| v.is_positive()
    as u64
    | (v.is_negative() as u64) << 1);
int_methods_test!(methods_of_i16, int_methods_i16, i16, |v| v.is_positive()
    as u64
    | (v.is_negative() as u64) << 1);
int_methods_test!(methods_of_i32, int_methods_i32, i32, |v| v.is_positive()
    as u64
    | (v.is_negative() as u64) << 1);
int_methods_test!(methods_of_i64, int_methods_i64, i64, |v| v.is_positive()
    as u64
    | (v.is_negative() as u64) << 1);
int_methods_test!(methods_of_u8, int_methods_u8, u8, |v| v.is_power_of_two()
    as u64
    | ((v >> 1).next_power_of_two() as u64) << 1);
int_methods_test!(
    methods_of_u16,
    int_methods_u16,
    u16,
    |v| v.is_power_of_two() as u64 | ((v >> 1).next_power_of_two() as u64) << 1
);
int_methods_test!(
    methods_of_u32,
    int_methods_u32,
    u32,
    |v| v.is_power_of_two() as u64 | ((v >> 1).next_power_of_two() as u64) << 1
);
int_methods_test!(
    methods_of_u64,
    int_methods_u64,
    u64,
    |v| v.is_power_of_two() as u64 | ((v >> 1).next_power_of_two() as u64) << 1
);
int_methods_test!(
    methods_of_usize,
    int_methods_usize,
    usize,
    |v| v.is_power_of_two() as u64 | ((v >> 1).next_power_of_two() as u64) << 1
);

/// Saturating arithmetic written out as `if`s on `u64`, beside a `u64` division: NVIDIA's
/// Vulkan driver gave such `u64` selects wrong high words, which the wgpu device avoids there by
/// comparing 64-bit integers on their 32-bit halves.
#[acc::parallel_loop(copyin(x, y), copyout(out))]
fn saturating_by_hand(x: &[u64], y: &[u64], out: &mut [u64]) {
    for i in 0..x.len() {
        let (a, b) = (x[i], y[i]);
        out[3 * i] = if a < b { 0 } else { a - b };
        let s = a.wrapping_add(b);
        out[3 * i + 1] = if s < a { u64::MAX } else { s };
        out[3 * i + 2] = a / (b | 1);
    }
}

#[test]
fn saturating_u64_written_as_ifs() {
    let x: Vec<u64> = patterns(0, u64::MAX);
    let m = x.len();
    let y: Vec<u64> = (0..m).map(|i| x[(i * 7 + 3) % m]).collect();
    on_each_device(|ty| {
        let mut out = vec![0u64; 3 * m];
        saturating_by_hand(&x, &y, &mut out);
        for i in 0..m {
            assert_eq!(
                out[3 * i],
                x[i].saturating_sub(y[i]),
                "{ty}: {} - {}",
                x[i],
                y[i]
            );
            assert_eq!(
                out[3 * i + 1],
                x[i].saturating_add(y[i]),
                "{ty}: {} + {}",
                x[i],
                y[i]
            );
            assert_eq!(
                out[3 * i + 2],
                x[i] / (y[i] | 1),
                "{ty}: {} / {}",
                x[i],
                y[i]
            );
        }
    });
}
