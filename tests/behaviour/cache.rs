//! `cache` (3.3 section 2.10, 2.0 section 2.8): a window of an array that a loop's iterations
//! read. The GPU devices stage it in shared memory for runs of iterations (`acc_core::ir::cache_staging`);
//! host and multicore run the loop as written. The answers are the same everywhere: the copy
//! holds the array's values. The sizes leave partial runs at the ends.

use acc::DeviceType;

use crate::devices::on_each_device;

/// A flat parallel loop with a window around the index.
#[acc::offload]
fn three_point(a: &[f64]) -> Vec<f64> {
    let n = a.len();
    let mut b = vec![0.0; n];
    #[acc::parallel_loop(copyin(a), copy(b))]
    for i in 1..n - 1 {
        acc::cache!(a[i - 1..i + 2]);
        b[i] = a[i - 1] - 2.0 * a[i] + a[i + 1];
    }
    b
}

#[test]
fn a_flat_loop_reads_its_window() {
    for n in [5usize, 300, 1025, 5000] {
        let a: Vec<f64> = (0..n).map(|i| ((i * 7) % 13) as f64).collect();
        let mut want = vec![0.0; n];
        for i in 1..n - 1 {
            want[i] = a[i - 1] - 2.0 * a[i] + a[i + 1];
        }
        on_each_device(|ty| assert_eq!(three_point(&a), want, "n = {n} on {ty}"));
    }
}

/// Single elements in `cache!` (`a[i]`, as 2.0 section 2.8 allows beside subarrays), each a
/// one-element window.
#[acc::offload]
fn elements_cached(a: &[f64], w: &[f64]) -> Vec<f64> {
    let n = a.len();
    let mut b = vec![0.0; n];
    #[acc::parallel_loop(copyin(a, w), copy(b))]
    for i in 0..n {
        acc::cache!(a[i], w[i % 4]);
        b[i] = a[i] * w[i % 4];
    }
    b
}

#[test]
fn single_elements_are_cached_as_one_element_windows() {
    let a: Vec<f64> = (0..777).map(|i| (i % 9) as f64).collect();
    let w = [1.0, 2.0, 3.0, 4.0];
    let want: Vec<f64> = (0..777).map(|i| a[i] * w[i % 4]).collect();
    on_each_device(|ty| assert_eq!(elements_cached(&a, &w), want, "on {ty}"));
}

/// A 2-D five-point stencil as gang rows over vector columns, the three rows' windows cached
/// (`let c` names the centre, as stencil codes write it).
#[acc::offload]
fn five_point(a: &[f32], n: usize, m: usize) -> Vec<f32> {
    let mut b = vec![0.0f32; n * m];
    #[acc::parallel_loop(gang, copyin(a), copy(b))]
    for j in 1..n - 1 {
        #[acc::r#loop(vector)]
        for i in 1..m - 1 {
            acc::cache!(
                a[(j - 1) * m + i..(j - 1) * m + i + 1],
                a[j * m + i - 1..j * m + i + 2]
            );
            acc::cache!(a[(j + 1) * m + i..(j + 1) * m + i + 1]);
            let c = j * m + i;
            b[c] = 0.25 * (a[c - 1] + a[c + 1] + a[c - m] + a[c + m]) - a[c];
        }
    }
    b
}

#[test]
fn gang_rows_read_three_windows() {
    for (n, m) in [(3usize, 3usize), (9, 200), (7, 1500)] {
        let a: Vec<f32> = (0..n * m).map(|x| ((x * 5) % 17) as f32).collect();
        let mut want = vec![0.0f32; n * m];
        for j in 1..n - 1 {
            for i in 1..m - 1 {
                let c = j * m + i;
                want[c] = 0.25 * (a[c - 1] + a[c + 1] + a[c - m] + a[c + m]) - a[c];
            }
        }
        on_each_device(|ty| assert_eq!(five_point(&a, n, m), want, "{n} x {m} on {ty}"));
    }
}

/// A wide window read by an inner loop over the filter's taps; the ends read zeros through an
/// `if`, whose untaken arm's index lies outside the array.
#[acc::offload]
fn filter17(a: &[i64], w: &[i64]) -> Vec<i64> {
    let n = a.len();
    let mut b = vec![0i64; n];
    #[acc::parallel_loop(copyin(a, w), copy(b))]
    for i in 0..n {
        acc::cache!(a[i - 8..i + 9]);
        let mut s = 0i64;
        for k in 0..17 {
            let x = if i + k >= 8 && i + k - 8 < n {
                a[i + k - 8]
            } else {
                0
            };
            s += w[k] * x;
        }
        b[i] = s;
    }
    b
}

#[test]
fn an_inner_loop_reads_a_wide_window() {
    let w: Vec<i64> = (0..17).map(|k| k as i64 - 5).collect();
    for n in [1usize, 20, 2100] {
        let a: Vec<i64> = (0..n).map(|i| ((i * 31) % 101) as i64 - 50).collect();
        let want: Vec<i64> = (0..n)
            .map(|i| {
                (0..17)
                    .map(|k| {
                        let x = if i + k >= 8 && i + k - 8 < n {
                            a[i + k - 8]
                        } else {
                            0
                        };
                        w[k] * x
                    })
                    .sum()
            })
            .collect();
        on_each_device(|ty| assert_eq!(filter17(&a, &w), want, "n = {n} on {ty}"));
    }
}

/// A window of an array the region also writes stays a hint (a copy could go stale); the
/// answer is the same.
#[acc::offload]
fn written_then_cached(n: usize) -> Vec<u32> {
    let mut a = vec![0u32; n];
    let mut b = vec![0u32; n];
    #[acc::parallel(copy(a, b))]
    {
        #[acc::r#loop(gang, vector)]
        for i in 0..n {
            a[i] = (i * i) as u32 % 1000;
        }
        #[acc::r#loop(gang, vector)]
        for i in 0..n - 1 {
            acc::cache!(a[i..i + 2]);
            b[i] = a[i] + a[i + 1];
        }
    }
    b
}

#[test]
fn a_written_array_is_not_staged() {
    let n = 3000;
    let a: Vec<u32> = (0..n).map(|i| (i * i) as u32 % 1000).collect();
    let mut want = vec![0u32; n];
    for i in 0..n - 1 {
        want[i] = a[i] + a[i + 1];
    }
    on_each_device(|ty: DeviceType| assert_eq!(written_then_cached(n), want, "on {ty}"));
}

/// A read past the array's end inside a cached window: the loop stops with the bounds error the
/// same loop without `cache` gives, on every device (the copy has no element there).
#[acc::parallel_loop(copyin(a), copyout(b))]
fn pairs(a: &[u32], b: &mut [u32]) {
    for i in 0..b.len() {
        acc::cache!(a[i..i + 2]);
        b[i] = a[i] + a[i + 1];
    }
}

#[test]
fn a_read_past_the_end_in_a_window_is_still_an_error() {
    on_each_device(|ty| {
        let a: Vec<u32> = (0..600).collect();
        let mut b = vec![0u32; 599];
        pairs(&a, &mut b);
        assert!(
            b.iter().enumerate().all(|(i, &x)| x == 2 * i as u32 + 1),
            "on {ty}"
        );
        let mut b = vec![0u32; 600];
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pairs(&a, &mut b)))
            .unwrap_err();
        let msg = crate::devices::panic_message(&*err);
        assert!(
            msg.contains("index out of bounds: the len is 600 but the index is 600"),
            "on {ty}: {msg}"
        );
    });
}

/// An inner loop whose variable the body changes (`for mut k`) may leave the window: its read
/// is not taken from the copy, and the answer is the loop's.
#[acc::offload]
fn shifted_taps(a: &[f32]) -> Vec<f32> {
    let n = a.len();
    let mut b = vec![0.0f32; n];
    #[acc::parallel_loop(copyin(a), copy(b))]
    for i in 8..n - 9 {
        acc::cache!(a[i - 8..i + 9]);
        let mut s = 0.0f32;
        for mut k in 0..17 {
            k += 1;
            s += a[i + k - 8];
        }
        b[i] = s;
    }
    b
}

#[test]
fn a_loop_variable_the_body_changes_is_not_read_from_the_copy() {
    let n = 3000;
    let a: Vec<f32> = (0..n).map(|i| (i % 23) as f32).collect();
    let mut want = vec![0.0f32; n];
    for i in 8..n - 9 {
        let mut s = 0.0f32;
        for k in 1..18 {
            s += a[i + k - 8];
        }
        want[i] = s;
    }
    on_each_device(|ty| assert_eq!(shifted_taps(&a), want, "on {ty}"));
}
