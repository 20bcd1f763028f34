//! Private arrays larger than a thread's local memory holds (3.3 sections 2.5.13 and 2.9.10):
//! NPB EP's `x[2*NK]`, private to each iteration of its batch loop. The GPUs keep such an
//! array in device memory, one copy per thread of the launch, with the grid capped to the
//! copies that fit (ACC_INFO says so).

use crate::devices::on_each_device;

/// Pairs per batch: `x` holds `2 * NK` doubles (128 KiB), past the 32 KiB a thread's own
/// memory holds on the GPUs.
const NK: usize = 1 << 13;

/// The batch's numbers: a hash of the batch and the position, as multiples of 1/1024 in
/// [0, 1), so that every sum below is exact on every device.
#[acc::routine(seq)]
fn uniform(k: usize, i: usize) -> f64 {
    let mut h = (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (i as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    (h % 1024) as f64 / 1024.0
}

/// EP's batch loop as NPB's OpenACC version writes it: `x` private to each batch, filled
/// (vranlc), then read in pairs; sums and a histogram of the accepted pairs reduced.
#[acc::offload]
fn ep_batches(batches: usize) -> (f64, f64, [f64; 10]) {
    let mut x = [0.0f64; 2 * NK];
    let (mut sx, mut sy) = (0.0f64, 0.0f64);
    let mut q = [0.0f64; 10];
    #[acc::parallel_loop(private(x), reduction(+: sx, sy, q))]
    for k in 0..batches {
        for i in 0..2 * NK {
            x[i] = uniform(k, i);
        }
        for i in 0..NK {
            let x1 = 2.0 * x[2 * i] - 1.0;
            let x2 = 2.0 * x[2 * i + 1] - 1.0;
            let t1 = x1 * x1 + x2 * x2;
            if t1 <= 1.0 {
                let l = (x1.abs().max(x2.abs()) * 10.0) as usize;
                q[l.min(9)] += 1.0;
                sx += x1;
                sy += x2;
            }
        }
    }
    (sx, sy, q)
}

/// The same loop with the array declared in the body: private to the iteration (2.9.10 as
/// Rust scopes it).
#[acc::offload]
fn ep_batches_declared_inside(batches: usize) -> (f64, f64, [f64; 10]) {
    let (mut sx, mut sy) = (0.0f64, 0.0f64);
    let mut q = [0.0f64; 10];
    #[acc::parallel_loop(reduction(+: sx, sy, q))]
    for k in 0..batches {
        let mut x = [0.0f64; 2 * NK];
        for i in 0..2 * NK {
            x[i] = uniform(k, i);
        }
        for i in 0..NK {
            let x1 = 2.0 * x[2 * i] - 1.0;
            let x2 = 2.0 * x[2 * i + 1] - 1.0;
            let t1 = x1 * x1 + x2 * x2;
            if t1 <= 1.0 {
                let l = (x1.abs().max(x2.abs()) * 10.0) as usize;
                q[l.min(9)] += 1.0;
                sx += x1;
                sy += x2;
            }
        }
    }
    (sx, sy, q)
}

/// A `Vec` private to each iteration, its length known at the launch, read back in reverse
/// (so every element's own copy matters), and a `firstprivate` one every iteration starts from.
#[allow(unused_mut)]
#[acc::offload]
fn private_vec_reversed(n: usize, base: &[i32]) -> Vec<i64> {
    let m = base.len();
    let mut t = vec![0i32; m];
    let mut out = vec![0i64; n];
    #[acc::parallel_loop(private(t), firstprivate(base), copyout(out))]
    for i in 0..n {
        for k in 0..m {
            t[k] = base[k] + (i as i32) * (k as i32 % 7);
        }
        let mut s = 0i64;
        for k in 0..m {
            s += t[m - 1 - k] as i64 * (k as i64 + 1);
        }
        out[i] = s;
    }
    out
}

fn ep_on_the_host(batches: usize) -> (f64, f64, [f64; 10]) {
    let (mut sx, mut sy, mut q) = (0.0, 0.0, [0.0; 10]);
    for k in 0..batches {
        for i in 0..NK {
            let x1 = 2.0 * uniform(k, 2 * i) - 1.0;
            let x2 = 2.0 * uniform(k, 2 * i + 1) - 1.0;
            if x1 * x1 + x2 * x2 <= 1.0 {
                let l = (f64::max(x1.abs(), x2.abs()) * 10.0) as usize;
                q[l.min(9)] += 1.0;
                sx += x1;
                sy += x2;
            }
        }
    }
    (sx, sy, q)
}

#[test]
fn private_arrays_larger_than_a_threads_memory() {
    let batches = 300;
    let want = ep_on_the_host(batches);
    assert!(want.2.iter().sum::<f64>() > 0.5 * (batches * NK) as f64);
    on_each_device(|ty| {
        assert_eq!(ep_batches(batches), want, "the private(x) form on {ty}");
        assert_eq!(
            ep_batches_declared_inside(batches),
            want,
            "x declared in the body on {ty}"
        );
    });
}

#[test]
fn private_vectors_larger_than_a_threads_memory() {
    let m = 20_000;
    let base: Vec<i32> = (0..m as i32).map(|k| k % 101 - 50).collect();
    let n = 700;
    on_each_device(|ty| {
        let out = private_vec_reversed(n, &base);
        for i in [0, 1, 2, n / 2, n - 1] {
            let want: i64 = (0..m)
                .map(|k| {
                    let j = m - 1 - k;
                    (base[j] + i as i32 * (j as i32 % 7)) as i64 * (k as i64 + 1)
                })
                .sum();
            assert_eq!(out[i], want, "out[{i}] on {ty}");
        }
    });
}

/// A `firstprivate` array of 48 KiB on a loop: every iteration's copy starts from the
/// original's values (3.3 section 2.5.14), and the original is left alone.
#[allow(unused_mut)]
#[acc::offload]
fn firstprivate_large(n: usize) -> ([f32; 12_000], Vec<f32>) {
    let mut w = [1.5f32; 12_000];
    let mut out = vec![0.0f32; n];
    #[acc::parallel_loop(firstprivate(w), copyout(out))]
    for i in 0..n {
        w[i % 12_000] += i as f32;
        out[i] = w[i % 12_000] + w[(i + 1) % 12_000];
    }
    (w, out)
}

#[test]
fn firstprivate_arrays_larger_than_a_threads_memory() {
    on_each_device(|ty| {
        let (w, out) = firstprivate_large(3000);
        assert!(w.iter().all(|&x| x == 1.5), "the original changed on {ty}");
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, 1.5 + i as f32 + 1.5, "out[{i}] on {ty}");
        }
    });
}
