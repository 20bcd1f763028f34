//! Sequential loops around parallel loops inside a compute region: a time loop in `kernels`
//! (3.3 section 2.5.3: the region becomes a sequence of kernels) and a gang-redundant loop in
//! `parallel` (2.5.1). Every iteration must see what the one before wrote, and the parallel
//! loops inside must still spread over the device (on the GPU devices the host drives such a
//! loop and launches its parallel loops once per iteration).

// The loops are written as users write them in regions, index by index.
#![allow(clippy::manual_memcpy, clippy::unnecessary_cast)]

use acc::DeviceType;

use crate::devices::on_each_device;

fn gpu(ty: DeviceType) -> bool {
    matches!(ty, DeviceType::Nvidia | DeviceType::Wgpu)
}

fn distinct(v: &[usize]) -> usize {
    v.iter().collect::<std::collections::HashSet<_>>().len()
}

/// Explicit heat diffusion: each step reads the whole previous step.
#[acc::kernels(copy(u, v))]
fn heat(u: &mut [f64], v: &mut [f64], steps: usize) {
    let n = u.len();
    for _ in 0..steps {
        for i in 1..n - 1 {
            v[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        }
        for i in 1..n - 1 {
            u[i] = v[i];
        }
    }
}

#[test]
fn a_time_loop_in_kernels_sees_each_step() {
    let n = 3000;
    let start: Vec<f64> = (0..n)
        .map(|i| if i == n / 2 { 1000.0 } else { 0.0 })
        .collect();
    let mut want = start.clone();
    let mut next = start.clone();
    for _ in 0..50 {
        for i in 1..n - 1 {
            next[i] = want[i] + 0.25 * (want[i - 1] - 2.0 * want[i] + want[i + 1]);
        }
        want[1..n - 1].copy_from_slice(&next[1..n - 1]);
    }
    on_each_device(|ty| {
        let (mut u, mut v) = (start.clone(), start.clone());
        heat(&mut u, &mut v, 50);
        assert_eq!(u, want, "on {ty}");
        let (mut u, mut v) = (start.clone(), start.clone());
        heat(&mut u, &mut v, 0);
        assert_eq!(u, start, "no step on {ty}");
    });
}

/// The 2-D form with flattened indices: `kernels` proves each row's loop writes its own row
/// (`v[i * n + j]` with `j < n`), so both nests run over the grid every step (in integers: the
/// test is of the loops, not of f32 rounding, which NVIDIA's Vulkan driver fuses).
#[acc::kernels(copy(u, v))]
fn heat_2d(u: &mut [i64], v: &mut [i64], n: usize, steps: usize) {
    for _ in 0..steps {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let k = i * n + j;
                v[k] = (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] + 4 * u[k]) % 1009;
            }
        }
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                u[i * n + j] = v[i * n + j];
            }
        }
    }
}

#[test]
fn a_two_dimensional_time_loop_in_kernels() {
    let n = 97;
    let start: Vec<i64> = (0..n * n).map(|k| ((k * 13) % 17) as i64).collect();
    let mut want = start.clone();
    let mut next = start.clone();
    for _ in 0..20 {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let k = i * n + j;
                next[k] =
                    (want[k - 1] + want[k + 1] + want[k - n] + want[k + n] + 4 * want[k]) % 1009;
            }
        }
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                want[i * n + j] = next[i * n + j];
            }
        }
    }
    on_each_device(|ty| {
        let (mut u, mut v) = (start.clone(), start.clone());
        heat_2d(&mut u, &mut v, n, 20);
        assert!(u == want, "on {ty}");
    });
}

/// The loop variable inside the parallel loops, a record of the gangs, and code after them in
/// each iteration that uses the variable too.
#[acc::offload]
fn steps_with_their_index(n: usize, steps: usize) -> (Vec<i64>, Vec<i64>, Vec<usize>) {
    let mut a = vec![0i64; n];
    let mut trace = vec![0i64; steps];
    let mut gangs = vec![0usize; n];
    #[acc::parallel(copy(a, trace, gangs))]
    {
        for t in 0..steps {
            #[acc::r#loop(gang, vector)]
            for i in 0..n {
                a[i] = a[i] * 2 + (t * i) as i64 % 7;
                gangs[i] = acc::gang_idx();
            }
            trace[t] = a[t % n] + t as i64;
        }
    }
    (a, trace, gangs)
}

#[test]
fn the_loop_variable_reaches_the_parallel_loops_and_the_code_after_them() {
    let (n, steps) = (5000, 9);
    let mut a = vec![0i64; n];
    let mut trace = vec![0i64; steps];
    for t in 0..steps {
        for i in 0..n {
            a[i] = a[i] * 2 + (t * i) as i64 % 7;
        }
        trace[t] = a[t % n] + t as i64;
    }
    on_each_device(|ty| {
        let (got, got_trace, gangs) = steps_with_their_index(n, steps);
        assert_eq!(got, a, "on {ty}");
        assert_eq!(got_trace, trace, "on {ty}");
        if gpu(ty) {
            assert!(distinct(&gangs) >= 2, "the loop ran on one gang on {ty}");
        }
    });
}

/// Fraction-free forward elimination (in wrapping integers, exact on every device): the
/// parallel loops' bounds follow the host loop's variable, and each gang iteration has code
/// before its vector loop.
#[acc::offload]
fn eliminate(m: &mut [i64], n: usize) {
    #[acc::parallel(copy(m))]
    {
        for k in 0..n {
            #[acc::r#loop(gang)]
            for i in k + 1..n {
                let (f, p) = (m[i * n + k], m[k * n + k]);
                #[acc::r#loop(vector)]
                for j in k..n {
                    m[i * n + j] = m[i * n + j]
                        .wrapping_mul(p)
                        .wrapping_sub(f.wrapping_mul(m[k * n + j]));
                }
            }
        }
    }
}

#[test]
fn triangular_loops_follow_the_host_loop() {
    let n = 67;
    let start: Vec<i64> = (0..n * n)
        .map(|x| {
            let (i, j) = (x / n, x % n);
            if i == j {
                4 * n as i64
            } else {
                ((i * 7 + j * 3) % 11) as i64
            }
        })
        .collect();
    let mut want = start.clone();
    for k in 0..n {
        for i in k + 1..n {
            let (f, p) = (want[i * n + k], want[k * n + k]);
            for j in k..n {
                want[i * n + j] = want[i * n + j]
                    .wrapping_mul(p)
                    .wrapping_sub(f.wrapping_mul(want[k * n + j]));
            }
        }
    }
    on_each_device(|ty| {
        let mut m = start.clone();
        eliminate(&mut m, n);
        assert!(m == want, "on {ty}");
    });
}

/// A reduction into a local of each iteration, read by the code after it, and the region's
/// reduction over every iteration of a repeated loop.
#[acc::offload]
fn maxima_and_total(a: &mut [i64], steps: usize) -> (Vec<i64>, i64) {
    let n = a.len();
    let mut maxima = vec![0i64; steps];
    let mut total = 0i64;
    #[acc::parallel(copy(a, maxima), reduction(+: total))]
    {
        for t in 0..steps {
            let mut m = i64::MIN;
            #[acc::r#loop(gang, vector, reduction(max: m), reduction(+: total))]
            for i in 0..n {
                a[i] = (a[i] * 3 + 1) % 1009;
                m = m.max(a[i]);
                total += a[i];
            }
            maxima[t] = m;
        }
    }
    (maxima, total)
}

#[test]
fn reductions_inside_a_repeated_loop() {
    let start: Vec<i64> = (0..4099).map(|i| (i * 37) % 1009).collect();
    let steps = 6;
    let mut a = start.clone();
    let (mut maxima, mut total) = (vec![0; steps], 0i64);
    for t in 0..steps {
        for x in a.iter_mut() {
            *x = (*x * 3 + 1) % 1009;
        }
        maxima[t] = *a.iter().max().unwrap();
        total += a.iter().sum::<i64>();
    }
    on_each_device(|ty| {
        let mut got = start.clone();
        assert_eq!(
            maxima_and_total(&mut got, steps),
            (maxima.clone(), total),
            "on {ty}"
        );
        assert_eq!(got, a, "on {ty}");
    });
}

/// Host loops inside host loops, the inner range following the outer variable.
#[acc::offload]
fn nested(n: usize, outer: usize) -> Vec<u64> {
    let mut a = vec![1u64; n];
    #[acc::parallel(copy(a))]
    {
        for t in 0..outer {
            for s in 0..t + 1 {
                #[acc::r#loop(gang, vector)]
                for i in 0..n {
                    a[i] = a[i].wrapping_mul(3).wrapping_add((t * 10 + s + i) as u64);
                }
            }
        }
    }
    a
}

#[test]
fn nested_host_loops() {
    let (n, outer) = (1000, 5);
    let mut want = vec![1u64; n];
    for t in 0..outer {
        for s in 0..t + 1 {
            for i in 0..n {
                want[i] = want[i]
                    .wrapping_mul(3)
                    .wrapping_add((t * 10 + s + i) as u64);
            }
        }
    }
    on_each_device(|ty| assert_eq!(nested(n, outer), want, "on {ty}"));
}

/// Loops the host cannot drive keep their meaning (one left by `break`, one whose range is data
/// on the device), and one counting down, which it drives.
#[acc::offload]
fn undriven(a: &mut [i32], limit: i32) -> i32 {
    let n = a.len();
    let mut rounds = vec![0i32; 1];
    #[acc::parallel(copy(a, rounds))]
    {
        for _ in 0..100 {
            if a[0] >= limit {
                break;
            }
            #[acc::r#loop(gang, vector)]
            for i in 0..n {
                a[i] += 1;
            }
            rounds[0] += 1;
        }
        for _ in 0..a[1] as usize {
            #[acc::r#loop(gang, vector)]
            for i in 0..n {
                a[i] += 2;
            }
        }
        for t in (0..3).rev() {
            #[acc::r#loop(gang, vector)]
            for i in 0..n {
                a[i] = a[i] * 10 + t as i32;
            }
        }
    }
    rounds[0]
}

#[test]
fn loops_the_host_cannot_drive() {
    on_each_device(|ty| {
        let mut a = vec![0i32; 700];
        assert_eq!(undriven(&mut a, 5), 5, "on {ty}");
        // 5 after the first loop, then 5 rounds of +2, then *10 + 2, *10 + 1, *10 + 0.
        assert!(a.iter().all(|&x| x == 15_210), "on {ty}: {:?}", &a[..3]);
    });
}

/// More iterations than one pass of dispatches holds on wgpu (4096), the variable read by the
/// loop: each pass's values must reach its own dispatches.
#[acc::offload]
fn many_steps(n: usize, steps: usize) -> Vec<u64> {
    let mut a = vec![0u64; n];
    #[acc::parallel(copy(a))]
    {
        for t in 0..steps {
            #[acc::r#loop(gang, vector)]
            for i in 0..n {
                a[i] += (t * (i + 1)) as u64;
            }
        }
    }
    a
}

#[test]
fn more_iterations_than_a_pass_holds() {
    let (n, steps) = (64, 5000);
    let want: Vec<u64> = (0..n)
        .map(|i| (0..steps).map(|t| (t * (i + 1)) as u64).sum())
        .collect();
    on_each_device(|ty| assert_eq!(many_steps(n, steps), want, "on {ty}"));
}

/// A time loop alternating its arrays (`if t % 2 == 0 { b = f(a) } else { a = f(b) }`) and
/// reporting every third step: the host picks each iteration's branch.
#[acc::offload]
fn ping_pong(a: &mut [i64], b: &mut [i64], steps: usize) -> Vec<i64> {
    let n = a.len();
    let mut report = vec![0i64; steps];
    #[acc::parallel(copy(a, b, report))]
    {
        for t in 0..steps {
            if t % 2 == 0 {
                #[acc::r#loop(gang, vector)]
                for i in 1..n - 1 {
                    b[i] = (a[i - 1] + 2 * a[i] + a[i + 1]) % 10007;
                }
            } else {
                #[acc::r#loop(gang, vector)]
                for i in 1..n - 1 {
                    a[i] = (b[i - 1] + 2 * b[i] + b[i + 1]) % 10007;
                }
            }
            if t % 3 == 0 {
                let mut s = 0i64;
                #[acc::r#loop(gang, vector, reduction(+: s))]
                for i in 0..n {
                    s += a[i] - b[i];
                }
                report[t] = s;
            }
        }
    }
    report
}

#[test]
fn the_host_picks_each_iterations_branch() {
    let n = 3001;
    let start: Vec<i64> = (0..n).map(|i| ((i * 31) % 101) as i64).collect();
    let steps = 9;
    let (mut a, mut b) = (start.clone(), start.clone());
    let mut report = vec![0i64; steps];
    for t in 0..steps {
        if t % 2 == 0 {
            for i in 1..n - 1 {
                b[i] = (a[i - 1] + 2 * a[i] + a[i + 1]) % 10007;
            }
        } else {
            for i in 1..n - 1 {
                a[i] = (b[i - 1] + 2 * b[i] + b[i + 1]) % 10007;
            }
        }
        if t % 3 == 0 {
            report[t] = (0..n).map(|i| a[i] - b[i]).sum();
        }
    }
    on_each_device(|ty| {
        let (mut ga, mut gb) = (start.clone(), start.clone());
        assert_eq!(ping_pong(&mut ga, &mut gb, steps), report, "on {ty}");
        assert!(ga == a && gb == b, "on {ty}");
    });
}

/// The region's reduction in branches the host decides: only the branch that ran counts, call
/// after call.
#[acc::offload]
fn branch_sums(x: &[i64], flag: bool) -> (i64, i64) {
    let n = x.len();
    let (mut s, mut m) = (0i64, -1i64);
    #[acc::parallel(copyin(x), reduction(+: s), reduction(max: m))]
    {
        if flag {
            #[acc::r#loop(gang, vector, reduction(+: s), reduction(max: m))]
            for i in 0..n {
                s += x[i];
                m = m.max(3 * x[i]);
            }
        } else {
            #[acc::r#loop(gang, vector, reduction(+: s))]
            for i in 0..n {
                s += 2 * x[i];
            }
        }
    }
    (s, m)
}

#[test]
fn reductions_in_branches_the_host_decides() {
    let x: Vec<i64> = (0..5000).map(|i| (i % 13) as i64).collect();
    let sum: i64 = x.iter().sum();
    on_each_device(|ty| {
        assert_eq!(branch_sums(&x, true), (sum, 36), "on {ty}");
        assert_eq!(branch_sums(&x, false), (2 * sum, -1), "on {ty}");
        assert_eq!(branch_sums(&x, true), (sum, 36), "on {ty}");
    });
}

/// A parallel loop of a region on `&mut Vec` parameters, with a reduction into a variable that
/// already holds a value and a private scratch array: the host device runs it as the
/// multicore device's one chunk of all iterations, which must still be the loop as written,
/// in order (the float sum gives the plain loop's bits).
#[allow(clippy::ptr_arg)]
#[acc::offload]
fn vec_loop(x: &Vec<f32>, y: &mut Vec<f32>, w: &mut Vec<f32>, last: &mut [f32]) -> f32 {
    let mut s = 0.1f32;
    let mut scratch = [0.0f32; 2];
    let mut seen = -1.0f32;
    #[acc::parallel(copy(s), copyout(last))]
    {
        #[acc::r#loop(gang, private(scratch), reduction(+: s))]
        for i in 0..y.len() {
            scratch[0] = x[i] * 0.5;
            scratch[1] = x[i] + 1.0;
            y[i] += scratch[0];
            w[2 * i] = scratch[0];
            w[2 * i + 1] = scratch[1];
            s += x[i] * 1e-3;
            // `seen` is the region's (firstprivate): each gang writes its own copy.
            seen = x[i];
        }
        last[0] = seen;
    }
    s
}

#[test]
fn vec_parameters_and_an_in_place_reduction_run_as_written() {
    let n = 10_001;
    let x: Vec<f32> = (0..n).map(|i| (i % 113) as f32 * 0.37 - 9.0).collect();
    let want_s = {
        let mut s = 0.1f32;
        for v in &x {
            s += v * 1e-3;
        }
        s
    };
    on_each_device(|ty| {
        let (mut y, mut w, mut last) = (vec![1.0f32; n], vec![0.0f32; 2 * n], [0.0f32]);
        let s = vec_loop(&x, &mut y, &mut w, &mut last);
        for i in 0..n {
            assert_eq!(y[i], 1.0 + x[i] * 0.5, "{ty}: y[{i}]");
            assert_eq!(
                [w[2 * i], w[2 * i + 1]],
                [x[i] * 0.5, x[i] + 1.0],
                "{ty}: w[{i}]"
            );
        }
        if ty == DeviceType::Host {
            assert_eq!(s.to_bits(), want_s.to_bits(), "host: {s} against {want_s}");
            // The host's one gang ran every iteration, in order, on the region's `seen`.
            assert_eq!(
                last[0],
                x[n - 1],
                "host: the region's variable after the loop"
            );
        } else {
            assert!(
                (s - want_s).abs() <= 1e-3 * want_s.abs().max(1.0),
                "{ty}: {s} against {want_s}"
            );
        }
    });
}
