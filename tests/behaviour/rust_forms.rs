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
            assert_eq!(
                tails[i],
                row[n / 2..].iter().sum::<f64>(),
                "row {i} on {ty}"
            );
            for j in 0..n {
                assert_eq!(b[i * n + j], 1.0 + row[n - 1 - j], "b[{i}][{j}] on {ty}");
            }
        }
    });
}

// Loops over slice iterators (no C OpenACC has them) run as the index loops they stand for.

#[acc::offload]
fn iterator_loops(
    x: &[f64],
    z: &[f64],
    y: &mut [f64],
    w: &mut Vec<f64>,
    n: usize,
) -> (f64, Vec<f64>) {
    let mut s = 0.0;
    let mut sums = vec![0.0; x.len() / n];
    #[acc::parallel_loop(copyin(x), copy(y))]
    for (i, y) in y.iter_mut().enumerate() {
        *y += x[i] * 2.0;
    }
    #[acc::parallel_loop(copyin(x, z), copy(w))]
    for ((w, x), z) in w.iter_mut().zip(x.iter()).zip(z.iter()) {
        *w = *w + x * z;
    }
    #[acc::parallel_loop(copyin(x), reduction(+: s))]
    for &v in x.iter() {
        s += v;
    }
    #[acc::parallel_loop(copyin(x), copyout(sums))]
    for (r, row) in x.chunks_exact(n).enumerate() {
        let mut t = 0.0;
        for v in row.iter() {
            t += v;
        }
        sums[r] = t;
    }
    #[acc::parallel_loop(copy(w))]
    for row in w.chunks_mut(n) {
        for k in 0..row.len() {
            row[k] *= 2.0;
        }
    }
    (s, sums)
}

#[test]
fn loops_over_slice_iterators() {
    let n = 7;
    let m = 10 * n;
    let x: Vec<f64> = (0..m).map(|k| (k % 11) as f64).collect();
    let z: Vec<f64> = (0..m + 3).map(|k| (k % 5) as f64).collect();
    on_each_device(|ty| {
        let mut y = vec![1.0; m];
        let mut w = vec![0.5; m + 1];
        let (s, sums) = iterator_loops(&x, &z, &mut y, &mut w, n);
        assert!(
            y.iter().zip(&x).all(|(y, x)| *y == 1.0 + 2.0 * x),
            "on {ty}"
        );
        for k in 0..m {
            assert_eq!(w[k], 2.0 * (0.5 + x[k] * z[k]), "w[{k}] on {ty}");
        }
        assert_eq!(w[m], 1.0, "the element past the zip on {ty}");
        assert_eq!(s, x.iter().sum::<f64>(), "on {ty}");
        let want: Vec<f64> = x.chunks_exact(n).map(|r| r.iter().sum()).collect();
        assert_eq!(sums, want, "on {ty}");
    });
}

// Struct members in data clauses (OpenACC 2.6+): `copyin(g.a)`, `present(self.h.b)`; the
// regions use `g.a[i]`, other fields stay usable, members may be swapped.

pub struct Halo {
    pub b: Vec<f64>,
}

pub struct Grid {
    pub a: Vec<f64>,
    pub next: Vec<f64>,
    pub h: Halo,
    pub n: usize,
    pub scale: f64,
}

#[acc::offload]
fn member_sweeps(g: &mut Grid, steps: usize) {
    #[acc::data(copy(g.a, g.next), copyin(g.h.b))]
    {
        for _ in 0..steps {
            #[acc::parallel_loop(present(g.a, g.next, g.h.b))]
            for i in 1..g.n - 1 {
                g.next[i] = g.scale * (g.a[i - 1] + g.a[i + 1]) + g.h.b[i];
            }
            std::mem::swap(&mut g.a, &mut g.next);
        }
        // The host copy of a member, refreshed from the device.
        acc::update!(self(g.a));
    }
}

impl Grid {
    #[acc::offload]
    fn add_halo(&mut self) {
        #[acc::parallel_loop(copyin(self.h.b), copy(self.a))]
        for i in 0..self.n {
            self.a[i] += self.h.b[i];
        }
    }
}

#[test]
fn struct_members_in_data_clauses() {
    let n = 300;
    let make = || Grid {
        a: (0..n).map(|i| (i % 7) as f64).collect(),
        next: vec![0.0; n],
        h: Halo {
            b: (0..n).map(|i| (i % 3) as f64 * 0.25).collect(),
        },
        n,
        scale: 0.5,
    };
    let mut want = make();
    for _ in 0..3 {
        for i in 1..n - 1 {
            want.next[i] = want.scale * (want.a[i - 1] + want.a[i + 1]) + want.h.b[i];
        }
        std::mem::swap(&mut want.a, &mut want.next);
    }
    for i in 0..n {
        want.a[i] += want.h.b[i];
    }
    on_each_device(|ty| {
        let mut g = make();
        member_sweeps(&mut g, 3);
        g.add_halo();
        assert_eq!(g.a, want.a, "on {ty}");
        assert_eq!(g.next, want.next, "on {ty}");
    });
}

#[acc::offload]
fn members_by_executable_directives(g: &mut Grid) -> f64 {
    acc::enter_data!(copyin(g.a, g.h.b));
    #[acc::parallel_loop(present(g.a, g.h.b))]
    for i in 0..g.n {
        g.a[i] = g.a[i] * g.scale + g.h.b[i];
    }
    acc::update!(self(g.a));
    acc::exit_data!(delete(g.a, g.h.b));
    g.a[1]
}

#[test]
fn struct_members_in_executable_directives() {
    on_each_device(|ty| {
        let n = 50;
        let mut g = Grid {
            a: (0..n).map(|i| i as f64).collect(),
            next: Vec::new(),
            h: Halo { b: vec![1.0; n] },
            n,
            scale: 2.0,
        };
        assert_eq!(members_by_executable_directives(&mut g), 3.0, "on {ty}");
        assert!(
            g.a.iter()
                .enumerate()
                .all(|(i, &v)| v == 2.0 * i as f64 + 1.0),
            "on {ty}"
        );
    });
}

/// `match` on integers in kernels: literals, `|`, ranges, a constant, a binding with a guard,
/// a computed scrutinee, as a value and as a statement.
const SPECIAL: i64 = 42;

#[acc::parallel_loop(copyin(k), copyout(out, kind))]
fn classify(k: &[i64], out: &mut [f64], kind: &mut [u8]) {
    for i in 0..k.len() {
        let v = k[i];
        out[i] = match v {
            0 => 1.0,
            1 | 2 => 2.5,
            3..=9 => v as f64 * 0.5,
            SPECIAL => -1.0,
            n if n < 0 => (n * n) as f64,
            ..=100 => 100.0,
            _ => 7.0,
        };
        match k[i] % 3 {
            0 => {
                kind[i] = 10;
            }
            r => {
                kind[i] = r as u8;
            }
        }
    }
}

#[test]
fn match_on_integers_runs_as_on_the_host() {
    let k: Vec<i64> = (-20..200).collect();
    let n = k.len();
    let (mut want, mut want_kind) = (vec![0.0; n], vec![0u8; n]);
    acc::set_device_type(acc::DeviceType::Host);
    classify(&k, &mut want, &mut want_kind);
    on_each_device(|ty| {
        let (mut out, mut kind) = (vec![0.0; n], vec![0u8; n]);
        classify(&k, &mut out, &mut kind);
        assert_eq!(out, want, "on {ty}");
        assert_eq!(kind, want_kind, "on {ty}");
    });
}

/// `match` on a tuple in a kernel: a 2-D grid's edges, corners and a guarded binding.
#[acc::parallel_loop(collapse(2), copyin(u), copyout(v))]
fn edges(u: &[f64], v: &mut [f64], n: usize) {
    for i in 0..n {
        for j in 0..n {
            v[i * n + j] = match (i == 0 || i == n - 1, j == 0 || j == n - 1, i % 4) {
                (true, true, _) => -1.0,
                (true, false, _) | (false, true, _) => 0.0,
                (.., q) if q == 3 => u[i * n + j] * 2.0,
                (_, _, 0 | 1) => {
                    0.25 * (u[i * n + j - 1]
                        + u[i * n + j + 1]
                        + u[(i - 1) * n + j]
                        + u[(i + 1) * n + j])
                }
                _ => u[i * n + j],
            };
        }
    }
}

#[test]
fn match_on_tuples_runs_as_on_the_host() {
    let n = 64;
    let u: Vec<f64> = (0..n * n).map(|k| (k % 17) as f64 * 0.5).collect();
    let mut want = vec![0.0; n * n];
    acc::set_device_type(acc::DeviceType::Host);
    edges(&u, &mut want, n);
    on_each_device(|ty| {
        let mut v = vec![9.0; n * n];
        edges(&u, &mut v, n);
        assert_eq!(v, want, "on {ty}");
    });
}

/// Tuple assignments: a swap, a Fibonacci step, and a routine's tuple into an element and a
/// local.
#[acc::routine(seq)]
fn div_mod(a: u64, b: u64) -> (u64, u64) {
    (a / b, a % b)
}

#[acc::parallel_loop(copyin(n), copyout(fib, q, r))]
fn tuple_steps(n: &[u64], fib: &mut [u64], q: &mut [u64], r: &mut [u64]) {
    for i in 0..n.len() {
        let (mut a, mut b) = (0u64, 1u64);
        for _ in 0..n[i] {
            (a, b) = (b, a + b);
        }
        let (mut x, mut y) = (a, b);
        (x, y) = (y, x);
        fib[i] = x - y;
        let rem;
        (q[i], rem) = div_mod(n[i] * 7 + 3, 5);
        r[i] = rem;
    }
}

#[test]
fn tuple_assignments_compute_every_value_before_writing() {
    let n: Vec<u64> = (0..60).collect();
    let m = n.len();
    let (mut fib, mut q, mut r) = (vec![0u64; m], vec![0u64; m], vec![0u64; m]);
    acc::set_device_type(acc::DeviceType::Host);
    tuple_steps(&n, &mut fib, &mut q, &mut r);
    assert_eq!(fib[10], 89 - 55);
    on_each_device(|ty| {
        let (mut f2, mut q2, mut r2) = (vec![0u64; m], vec![0u64; m], vec![0u64; m]);
        tuple_steps(&n, &mut f2, &mut q2, &mut r2);
        assert_eq!((&f2, &q2, &r2), (&fib, &q, &r), "on {ty}");
    });
}
