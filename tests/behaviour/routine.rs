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
