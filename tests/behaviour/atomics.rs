//! The atomic construct (3.3 section 2.12): update, read, write and capture, atomic across all
//! the threads that run a region, under contention.

use crate::devices::on_each_device;

macro_rules! counter_tests {
    ($($name:ident: $t:ty = $one:expr, $n:expr;)*) => {$(
        #[test]
        fn $name() {
            #[acc::offload]
            fn count(n: usize) -> $t {
                let mut c: $t = Default::default();
                #[acc::parallel_loop(copy(c))]
                for _ in 0..n {
                    #[acc::atomic(update)]
                    c += $one;
                }
                c
            }
            on_each_device(|ty| {
                let n = $n;
                let mut want: $t = Default::default();
                for _ in 0..n {
                    want += $one;
                }
                assert_eq!(count(n), want, "{} on {ty}", stringify!($name));
            });
        }
    )*};
}

counter_tests! {
    atomic_add_i8: i8 = 1, 120;
    atomic_add_i16: i16 = 1, 30_000;
    atomic_add_i32: i32 = 1, 50_000;
    atomic_add_i64: i64 = 3, 50_000;
    atomic_add_u8: u8 = 2, 120;
    atomic_add_u16: u16 = 2, 30_000;
    atomic_add_u32: u32 = 1, 50_000;
    atomic_add_u64: u64 = 7, 50_000;
    atomic_add_usize: usize = 1, 50_000;
    atomic_add_isize: isize = 1, 50_000;
    atomic_add_f32: f32 = 1.0, 50_000;
    atomic_add_f64: f64 = 0.5, 50_000;
}

#[acc::offload]
fn histogram(x: &[u32], bins: usize) -> Vec<u64> {
    let mut h = vec![0u64; bins];
    #[acc::parallel_loop(copyin(x), copy(h))]
    for i in 0..x.len() {
        let b = (x[i] as usize) % bins;
        #[acc::atomic]
        h[b] += 1;
    }
    h
}

#[test]
fn histogram_under_contention() {
    on_each_device(|_| {
        let x: Vec<u32> = (0..100_000).map(|i| i * 7919).collect();
        let h = histogram(&x, 5);
        let mut want = vec![0u64; 5];
        for v in &x {
            want[(*v as usize) % 5] += 1;
        }
        assert_eq!(h, want);
    });
}

#[acc::offload]
fn update_forms(n: usize) -> (i64, i64, u32, f64) {
    let (mut a, mut b, mut bits, mut prod) = (0i64, 1000i64, 0u32, 1.0f64);
    #[acc::parallel_loop(copy(a, b, bits, prod))]
    for i in 0..n {
        #[acc::atomic(update)]
        a = a + 2;
        #[acc::atomic(update)]
        b = 1 + b;
        #[acc::atomic]
        bits |= 1 << (i % 32);
        if i % 1000 == 0 {
            #[acc::atomic(update)]
            prod *= 2.0;
        }
    }
    (a, b, bits, prod)
}

#[test]
fn every_update_form() {
    on_each_device(|_| {
        assert_eq!(update_forms(10_000), (20_000, 11_000, u32::MAX, 1024.0));
    });
}

#[acc::offload]
fn capture_slots(n: usize) -> Vec<usize> {
    let mut next = 0usize;
    let mut slots = vec![usize::MAX; n];
    #[acc::parallel_loop(copy(next, slots))]
    for i in 0..n {
        let mine;
        #[acc::atomic(capture)]
        {
            mine = next;
            next += 1;
        }
        slots[i] = mine;
    }
    slots
}

#[test]
fn capture_hands_out_distinct_old_values() {
    on_each_device(|_| {
        let mut slots = capture_slots(5000);
        slots.sort_unstable();
        assert!(slots.iter().enumerate().all(|(i, &s)| s == i));
    });
}

#[acc::offload]
fn capture_new_and_swap(n: usize) -> (Vec<u32>, u32) {
    let mut counter = 0u32;
    let mut seen = vec![0u32; n];
    let mut last = 0u32;
    #[acc::parallel_loop(copy(counter, seen, last))]
    for i in 0..n {
        let after;
        #[acc::atomic(capture)]
        {
            counter += 2;
            after = counter;
        }
        seen[i] = after;
        let old;
        #[acc::atomic(capture)]
        {
            old = last;
            last = i as u32;
        }
        let _ = old;
    }
    (seen, last)
}

#[test]
fn capture_of_the_new_value_and_swap() {
    on_each_device(|_| {
        let n = 3000;
        let (mut seen, last) = capture_new_and_swap(n);
        seen.sort_unstable();
        assert!(seen
            .iter()
            .enumerate()
            .all(|(i, &s)| s == 2 * (i as u32 + 1)));
        assert!((last as usize) < n);
    });
}

#[acc::offload]
fn write_then_read(n: usize) -> (u64, u64) {
    let mut flag = 0u64;
    let mut max_seen = 0u64;
    #[acc::parallel_loop(copy(flag), reduction(max: max_seen))]
    for i in 0..n {
        if i == n / 2 {
            #[acc::atomic(write)]
            flag = 42;
        }
        #[acc::atomic(read)]
        let v = flag;
        max_seen = max_seen.max(v);
    }
    (flag, max_seen)
}

#[test]
fn read_and_write() {
    on_each_device(|_| {
        let (flag, max_seen) = write_then_read(10_000);
        assert_eq!(flag, 42);
        assert!(max_seen == 0 || max_seen == 42);
    });
}

/// Histograms into small arrays of 4-byte elements, by `+`, `|` and `^` (on nvidia each block
/// combines its updates in shared memory first, then merges them), and one too large for
/// that, which updates memory directly.
/// The histograms `small_histograms` makes: counts, signed, weights, bits, large.
type Histograms = (Vec<u32>, Vec<i32>, Vec<f32>, Vec<u32>, Vec<u32>);

#[acc::offload]
fn small_histograms(x: &[u32], big: usize) -> Histograms {
    let (mut counts, mut signed, mut weights) = (vec![0u32; 256], vec![0i32; 7], vec![0.0f32; 16]);
    let (mut bits, mut large) = (vec![0u32; 33], vec![0u32; big]);
    #[acc::parallel_loop(copyin(x), copy(counts, signed, weights, bits, large))]
    for i in 0..x.len() {
        let v = x[i];
        #[acc::atomic]
        counts[(v % 256) as usize] += 1;
        #[acc::atomic]
        signed[(v % 7) as usize] -= 2;
        #[acc::atomic]
        weights[(v % 16) as usize] += 0.5;
        #[acc::atomic]
        bits[(v % 33) as usize] ^= v;
        #[acc::atomic]
        large[(v as usize * 31) % big] += 1;
    }
    (counts, signed, weights, bits, large)
}

#[test]
fn histograms_into_small_arrays() {
    let x: Vec<u32> = (0..200_000u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 3)
        .collect();
    let big = 10_000;
    let mut want = (
        vec![0u32; 256],
        vec![0i32; 7],
        vec![0.0f32; 16],
        vec![0u32; 33],
        vec![0u32; big],
    );
    for &v in &x {
        want.0[(v % 256) as usize] += 1;
        want.1[(v % 7) as usize] -= 2;
        want.2[(v % 16) as usize] += 0.5;
        want.3[(v % 33) as usize] ^= v;
        want.4[(v as usize * 31) % big] += 1;
    }
    on_each_device(|ty| {
        // Sums of halves up to 2^24: exact in f32 in any order.
        assert_eq!(small_histograms(&x, big), want, "on {ty}");
    });
}
