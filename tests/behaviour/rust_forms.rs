//! Rust as users write it inside regions: forms with no C OpenACC counterpart, lowered to what
//! the directives mean. Subslice bindings (`let row = &a[i * n..(i + 1) * n]`, `&mut` too)
//! are views of the array, on every device.

use crate::devices::on_each_device;

#[acc::routine(seq)]
fn total(v: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..v.len() {
        s += v[k];
    }
    s
}

#[acc::offload]
fn row_views(a: &[f64], b: &mut [f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let m = a.len() / n;
    let mut sums = vec![0.0; m];
    let mut tails = vec![0.0; m];
    #[acc::parallel_loop(copyin(a), copy(b), copyout(sums, tails))]
    for i in 0..m {
        let row = &a[i * n..(i + 1) * n];
        let mut s = 0.0;
        for j in 0..row.len() {
            s += row[j];
        }
        sums[i] = s;
        // A view of a view, passed to a routine.
        let tail = &row[n / 2..];
        tails[i] = total(tail);
        let out = &mut b[i * n..(i + 1) * n];
        for j in 0..n {
            out[j] += row[n - 1 - j];
        }
    }
    (sums, tails)
}

#[test]
fn subslice_bindings_are_views_of_the_array() {
    let (m, n) = (300, 16);
    let a: Vec<f64> = (0..m * n).map(|k| (k % 97) as f64).collect();
    on_each_device(|ty| {
        let mut b = vec![1.0; m * n];
        let (sums, tails) = row_views(&a, &mut b, n);
        for i in 0..m {
            let row = &a[i * n..(i + 1) * n];
            assert_eq!(sums[i], row.iter().sum::<f64>(), "row {i} on {ty}");
            assert_eq!(tails[i], row[n / 2..].iter().sum::<f64>(), "row {i} on {ty}");
            for j in 0..n {
                assert_eq!(b[i * n + j], 1.0 + row[n - 1 - j], "b[{i}][{j}] on {ty}");
            }
        }
    });
}
