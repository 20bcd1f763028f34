//! Forms Rust and C OpenACC programmers write that the other tests do not: constructs on
//! `while` and `loop` statements (C puts `#pragma acc data` before any statement),
//! `host_data` on a statement, `present(self.field)` in a method, the remaining iterator
//! loops (a bare `iter_mut()`, a zip of two, `chunks_exact_mut(n).enumerate()`), `loop auto`
//! in `parallel`, and a `kernels` loop with an explicit `reduction` (issue 17, items 1, 2, 6
//! and 8). Each gives the host's answer on every device.

use crate::devices::on_each_device;

#[acc::offload]
fn constructs_on_while_and_loop(a: &mut Vec<f64>, n: usize) -> (usize, usize) {
    let mut k = 0;
    #[acc::data(copy(a))]
    while k < 3 {
        #[acc::parallel_loop(present(a))]
        for i in 0..n {
            a[i] += 1.0;
        }
        k += 1;
    }
    #[acc::data(copy(a))]
    loop {
        #[acc::parallel_loop(present(a))]
        for i in 0..n {
            a[i] *= 2.0;
        }
        k += 1;
        if k == 5 {
            break;
        }
    }
    let mut seen = 0;
    #[acc::data(copyin(a))]
    {
        #[acc::host_data(use_device(a))]
        seen += a.len();
    }
    (k, seen)
}

#[test]
fn data_on_while_and_loop_statements_and_host_data_on_a_statement() {
    on_each_device(|ty| {
        let n = 1000;
        let mut a = vec![0.5; n];
        assert_eq!(constructs_on_while_and_loop(&mut a, n), (5, n), "on {ty}");
        assert!(a.iter().all(|&v| v == 14.0), "on {ty}");
    });
}

pub struct Field {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub scale: f64,
}

impl Field {
    /// Steps inside a data region on its own fields, each region finding them `present`.
    #[acc::offload]
    fn steps(&mut self, steps: usize) {
        let n = self.a.len();
        #[acc::data(copy(self.a), copyin(self.b))]
        {
            for _ in 0..steps {
                #[acc::parallel_loop(present(self.a, self.b))]
                for i in 0..n {
                    self.a[i] = self.a[i] * self.scale + self.b[i];
                }
            }
        }
    }
}

impl Field {
    /// A `&self` method: its members are read through shared references.
    #[acc::offload]
    fn weighted_total(&self, w: &mut Vec<f64>) -> f64 {
        let mut s = 0.0;
        #[acc::parallel_loop(copyin(self.b), reduction(+: s, w[0..2]))]
        for i in 0..self.b.len() {
            s += self.b[i] * self.scale;
            w[i % 2] += self.b[i];
        }
        s
    }
}

#[test]
fn members_of_a_shared_self_and_a_subarray_reduction() {
    let f = Field {
        a: Vec::new(),
        b: (0..1001).map(|i| (i % 8) as f64).collect(),
        scale: 0.5,
    };
    let want: f64 = f.b.iter().sum::<f64>() * 0.5;
    let even: f64 = f.b.iter().step_by(2).sum();
    on_each_device(|ty| {
        let mut w = vec![1.0, 2.0, 3.0];
        assert_eq!(f.weighted_total(&mut w), want, "on {ty}");
        assert_eq!(w, [1.0 + even, 2.0 + 2.0 * want - even, 3.0], "on {ty}");
    });
}

#[test]
fn present_self_fields_in_a_method() {
    let n = 400;
    let make = || Field {
        a: (0..n).map(|i| (i % 9) as f64).collect(),
        b: (0..n).map(|i| (i % 4) as f64 * 0.5).collect(),
        scale: 0.5,
    };
    let mut want = make();
    for _ in 0..4 {
        for i in 0..n {
            want.a[i] = want.a[i] * want.scale + want.b[i];
        }
    }
    on_each_device(|ty| {
        let mut f = make();
        f.steps(4);
        assert_eq!(f.a, want.a, "on {ty}");
    });
}

#[acc::offload]
fn more_iterator_loops(x: &[f64], y: &mut [f64], rows: &mut [f64], n: usize) {
    #[acc::parallel_loop(copy(y))]
    for v in y.iter_mut() {
        *v *= 3.0;
    }
    #[acc::parallel_loop(copyin(x), copy(y))]
    for (v, u) in y.iter_mut().zip(x.iter()) {
        *v += u;
    }
    #[acc::parallel_loop(copy(rows))]
    for (r, row) in rows.chunks_exact_mut(n).enumerate() {
        for j in 0..n {
            row[j] = (r * n + j) as f64;
        }
    }
}

#[test]
fn bare_iter_mut_zip_of_two_and_rows_by_chunks_exact_mut() {
    let n = 9;
    let x: Vec<f64> = (0..500).map(|k| (k % 13) as f64).collect();
    on_each_device(|ty| {
        let mut y = vec![2.0; 500];
        let mut rows = vec![-1.0; 20 * n + 4];
        more_iterator_loops(&x, &mut y, &mut rows, n);
        assert!(y.iter().zip(&x).all(|(y, x)| *y == 6.0 + x), "on {ty}");
        for k in 0..20 * n {
            assert_eq!(rows[k], k as f64, "rows[{k}] on {ty}");
        }
        assert!(
            rows[20 * n..].iter().all(|&v| v == -1.0),
            "the remainder on {ty}"
        );
    });
}

#[acc::offload]
fn auto_loop_and_explicit_kernels_reduction(x: &[f64], y: &mut [f64]) -> f64 {
    let n = x.len();
    #[acc::parallel(copyin(x), copyout(y))]
    {
        #[acc::r#loop(auto)]
        for i in 0..n {
            y[i] = 2.0 * x[i];
        }
    }
    let mut s = 0.0;
    #[acc::kernels(copyin(x))]
    {
        #[acc::r#loop(reduction(+: s))]
        for i in 0..n {
            s += x[i];
        }
    }
    s
}

#[test]
fn loop_auto_in_parallel_and_a_kernels_loop_with_a_reduction_clause() {
    // More iterations than lavapipe lets one thread run (65,535): both loops must spread.
    let n = 100_000;
    let x: Vec<f64> = (0..n).map(|k| (k % 16) as f64).collect();
    on_each_device(|ty| {
        let mut y = vec![0.0; n];
        let s = auto_loop_and_explicit_kernels_reduction(&x, &mut y);
        assert!(y.iter().zip(&x).all(|(y, x)| *y == 2.0 * x), "on {ty}");
        assert_eq!(s, x.iter().sum::<f64>(), "on {ty}");
    });
}
