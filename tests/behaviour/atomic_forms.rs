//! Every statement form of the atomic construct (3.3 section 2.12, checklist R86-R88) in Rust
//! spelling, atomic under contention on every device: `x = e op x` for operators that do not
//! commute, shifts (64-bit ones too), Fortran's `max`/`min` as `x = x.max(e)` and its
//! spellings, and captures of every shape into any place.

use crate::devices::on_each_device;

/// `x = e - x` and `x = e / x` are involutions: after n atomic applications in any order, x is
/// back where it started when n is even; a lost update would leave it elsewhere.
#[acc::offload]
fn reversed(n: usize) -> (i64, f64, i32) {
    let (mut a, mut q, mut s) = (0i64, 2.0f64, 5i32);
    #[acc::parallel_loop(copy(a, q, s))]
    for _ in 0..n {
        #[acc::atomic(update)]
        a = 3 - a;
        #[acc::atomic]
        q = 8.0 / q;
        #[acc::atomic]
        s = (2 * 4) - s;
    }
    (a, q, s)
}

#[test]
fn non_commutative_operands_on_the_left() {
    on_each_device(|ty| {
        assert_eq!(reversed(20_001), (3, 4.0, 3), "odd count on {ty}");
        assert_eq!(reversed(20_000), (0, 2.0, 5), "even count on {ty}");
    });
}

#[acc::offload]
fn shifts(n: usize) -> (u64, u64, u32, i16) {
    let (mut up, mut down, mut small, mut narrow) = (1u64, u64::MAX, 1u32, 1i16);
    #[acc::parallel_loop(copy(up, down, small, narrow))]
    for i in 0..n {
        if i < 40 {
            #[acc::atomic]
            up <<= 1;
            #[acc::atomic(update)]
            down = down >> 1u32;
        }
        if i < 3 {
            #[acc::atomic]
            small = small << 2;
            #[acc::atomic]
            narrow <<= 4;
        }
    }
    (up, down, small, narrow)
}

#[test]
fn shifts_of_64_bit_and_narrow_values() {
    on_each_device(|ty| {
        assert_eq!(
            shifts(1000),
            (1u64 << 40, u64::MAX >> 40, 1 << 6, 1i16 << 12),
            "on {ty}"
        );
    });
}

#[acc::offload]
fn extremes(v: &[f64], w: &[i32], k: &[u64]) -> (f64, f64, i32, i32, u64, f32) {
    let (mut hi, mut lo, mut ihi, mut ilo, mut khi, mut flo) =
        (f64::MIN, f64::MAX, i32::MIN, i32::MAX, 0u64, f32::MAX);
    #[acc::parallel_loop(copyin(v, w, k), copy(hi, lo, ihi, ilo, khi, flo))]
    for i in 0..v.len() {
        #[acc::atomic(update)]
        hi = hi.max(v[i]);
        #[acc::atomic]
        lo = f64::min(lo, v[i]);
        #[acc::atomic]
        ihi = w[i].max(ihi);
        #[acc::atomic]
        ilo = std::cmp::min(w[i], ilo);
        #[acc::atomic]
        khi = u64::max(khi, k[i]);
        #[acc::atomic]
        flo = flo.min(v[i] as f32);
    }
    (hi, lo, ihi, ilo, khi, flo)
}

#[test]
fn max_and_min_updates() {
    on_each_device(|ty| {
        let n = 30_000usize;
        let v: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 10_007) as f64 - 5000.5)
            .collect();
        let w: Vec<i32> = (0..n)
            .map(|i| ((i * 104_729) % 65_537) as i32 - 30_000)
            .collect();
        let k: Vec<u64> = (0..n)
            .map(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let want = (
            v.iter().cloned().fold(f64::MIN, f64::max),
            v.iter().cloned().fold(f64::MAX, f64::min),
            *w.iter().max().unwrap(),
            *w.iter().min().unwrap(),
            *k.iter().max().unwrap(),
            v.iter().map(|&x| x as f32).fold(f32::MAX, f32::min),
        );
        assert_eq!(extremes(&v, &w, &k), want, "on {ty}");
    });
}

/// What `captures` hands back: the old slots, new and old values of `total`, the old values of
/// a max, and the three scalars.
type Captured = (Vec<u32>, Vec<i64>, Vec<i64>, Vec<i32>, u32, i64, i32);

/// Captures of every shape, into locals, array elements and a let.
#[acc::offload]
fn captures(n: usize) -> Captured {
    let (mut next, mut total, mut best) = (0u32, 0i64, i32::MIN);
    let mut old_slots = vec![u32::MAX; n];
    let mut new_slots = vec![0i64; n];
    let mut totals = vec![0i64; n];
    let mut bests = vec![0i32; n];
    #[acc::parallel_loop(copy(next, total, best, old_slots, new_slots, totals, bests))]
    for i in 0..n {
        #[acc::atomic(capture)]
        {
            old_slots[i] = next;
            next = next + 1;
        }
        #[acc::atomic(capture)]
        new_slots[i] = {
            total -= 2;
            total
        };
        let t;
        #[acc::atomic(capture)]
        {
            t = total;
            total = 1 + total;
        }
        totals[i] = t;
        #[acc::atomic(capture)]
        {
            bests[i] = best;
            best = best.max(i as i32);
        }
    }
    (old_slots, new_slots, totals, bests, next, total, best)
}

#[test]
fn captures_into_any_place() {
    on_each_device(|ty| {
        let n = 4000;
        let (mut olds, news, olds_of_total, bests, next, total, best) = captures(n);
        olds.sort_unstable();
        assert!(
            olds.iter().enumerate().all(|(i, &s)| s as usize == i),
            "on {ty}"
        );
        assert_eq!(next as usize, n, "on {ty}");
        assert_eq!(total, -(n as i64), "on {ty}");
        assert_eq!(best, n as i32 - 1, "on {ty}");
        // Values of `total` between -2n and 0 as the -2s and +1s interleave.
        let span = -2 * n as i64..=0;
        assert!(
            news.iter().chain(&olds_of_total).all(|v| span.contains(v)),
            "on {ty}"
        );
        // The first max update saw the initial value, every other one an index.
        assert_eq!(
            bests.iter().filter(|&&b| b == i32::MIN).count(),
            1,
            "on {ty}"
        );
        assert!(
            bests
                .iter()
                .all(|&b| b == i32::MIN || (0..n as i32).contains(&b)),
            "on {ty}"
        );
    });
}

#[acc::offload]
fn capture_new_values(n: usize) -> Vec<i64> {
    let mut total = 0i64;
    let mut seen = vec![0i64; n];
    #[acc::parallel_loop(copy(total, seen))]
    for i in 0..n {
        #[acc::atomic(capture)]
        {
            total = total - (3 + 4);
            seen[i] = total;
        }
    }
    seen
}

#[test]
fn capture_of_the_new_value_into_an_element() {
    on_each_device(|ty| {
        let n = 3000;
        let mut seen = capture_new_values(n);
        seen.sort_unstable();
        seen.reverse();
        assert!(
            seen.iter()
                .enumerate()
                .all(|(i, &s)| s == -7 * (i as i64 + 1)),
            "on {ty}"
        );
    });
}

/// The spec's example of a capture with a plain write: `{ v = x; x = e; }` hands each
/// iteration a distinct previous value (a ticket lock's handover).
#[acc::offload]
fn swaps(n: usize) -> (Vec<i64>, i64) {
    let mut last = -1i64;
    let mut prev = vec![0i64; n];
    #[acc::parallel_loop(copy(last, prev))]
    for i in 0..n {
        #[acc::atomic(capture)]
        {
            prev[i] = last;
            last = i as i64;
        }
    }
    (prev, last)
}

#[test]
fn swap_captures_form_one_chain() {
    on_each_device(|ty| {
        let n = 2000;
        let (prev, last) = swaps(n);
        // Each value is handed on exactly once: the previous values are -1 and every index
        // but the last one written.
        let mut got = prev.clone();
        got.push(last);
        got.sort_unstable();
        let want: Vec<i64> = (-1..n as i64).collect();
        assert_eq!(got, want, "on {ty}");
    });
}
