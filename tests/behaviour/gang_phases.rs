//! Gang loops with code after their vector loop (3.3 sections 2.9.2 and 2.9.4): the matrix-
//! vector product's shape, `for i (gang) { s = 0; for j (vector, reduction(+: s)) {..}; y[i] = s }`.
//! On the GPU devices each gang iteration takes a block (workgroup): its threads share the
//! vector loop, the block combines the reduction, and one thread runs the code after it.

use crate::devices::on_each_device;

#[acc::offload]
fn matvec(a: &[f64], x: &[f64], n: usize) -> Vec<f64> {
    let m = x.len();
    let mut y = vec![0.0; n];
    #[acc::parallel_loop(gang, copyin(a, x), copyout(y))]
    for i in 0..n {
        let mut s = 0.0;
        #[acc::r#loop(vector, reduction(+: s))]
        for j in 0..m {
            s += a[i * m + j] * x[j];
        }
        y[i] = s;
    }
    y
}

#[test]
fn matrix_vector_product() {
    // Small integers: every order of summation gives the exact result.
    let (n, m) = (517, 1031);
    let a: Vec<f64> = (0..n * m).map(|k| ((k * 7) % 11) as f64 - 5.0).collect();
    let x: Vec<f64> = (0..m).map(|j| (j % 5) as f64).collect();
    let want: Vec<f64> = (0..n)
        .map(|i| (0..m).map(|j| a[i * m + j] * x[j]).sum())
        .collect();
    on_each_device(|ty| {
        assert_eq!(matvec(&a, &x, n), want, "on {ty}");
    });
}

/// Several reductions of the iteration, a starting value other than the identity, code after
/// the loop that branches, runs a sequential loop and adds into the gang loop's own reduction.
#[acc::offload]
fn row_stats(a: &[i32], n: usize, m: usize) -> (Vec<i64>, Vec<i32>, Vec<i32>, Vec<bool>, i64) {
    let mut sums = vec![0i64; n];
    let mut mins = vec![0i32; n];
    let mut hist = vec![0i32; n * 4];
    let mut positive = vec![false; n];
    let mut total = 0i64;
    #[acc::parallel(copyin(a), copyout(sums, mins, hist, positive), reduction(+: total))]
    {
        #[acc::r#loop(gang, reduction(+: total))]
        for i in 0..n {
            let mut s = 100i64;
            let mut lo = i32::MAX;
            let mut all = true;
            #[acc::r#loop(vector, reduction(+: s), reduction(min: lo), reduction(&&: all))]
            for j in 0..m {
                let v = a[i * m + j];
                s += v as i64;
                lo = lo.min(v);
                all = all && v > -1000;
            }
            sums[i] = s;
            mins[i] = lo;
            positive[i] = all;
            if s > 100 {
                for k in 0..4 {
                    hist[i * 4 + k] = (s % (k as i64 + 2)) as i32;
                }
            }
            total += s;
        }
    }
    (sums, mins, hist, positive, total)
}

#[test]
fn reductions_of_the_iteration_and_code_after_the_vector_loop() {
    let (n, m) = (301, 777);
    let a: Vec<i32> = (0..n * m).map(|k| ((k * 31) % 97) as i32 - 40).collect();
    let mut want = (
        vec![0i64; n],
        vec![0i32; n],
        vec![0i32; n * 4],
        vec![false; n],
        0i64,
    );
    for i in 0..n {
        let row = &a[i * m..(i + 1) * m];
        let s = 100 + row.iter().map(|&v| v as i64).sum::<i64>();
        want.0[i] = s;
        want.1[i] = *row.iter().min().unwrap();
        want.3[i] = row.iter().all(|&v| v > -1000);
        if s > 100 {
            for k in 0..4 {
                want.2[i * 4 + k] = (s % (k as i64 + 2)) as i32;
            }
        }
        want.4 += s;
    }
    on_each_device(|ty| {
        assert_eq!(row_stats(&a, n, m), want, "on {ty}");
    });
}

/// Rows shorter than a block, and empty ones: threads with no iteration still take part in
/// the block's reduction.
#[acc::offload]
fn ragged_row_max(a: &[f32], starts: &[usize], n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; n];
    #[acc::parallel_loop(gang, copyin(a, starts), copyout(out))]
    for i in 0..n {
        let mut best = f32::MIN;
        #[acc::r#loop(vector, reduction(max: best))]
        for j in starts[i]..starts[i + 1] {
            best = best.max(a[j]);
        }
        out[i] = if best == f32::MIN { -1.0 } else { best * 2.0 };
    }
    out
}

#[test]
fn ragged_rows() {
    let n = 200;
    // Row i has (i % 7) * 61 elements: empty rows, rows shorter and longer than a block.
    let mut starts = vec![0usize];
    for i in 0..n {
        starts.push(starts[i] + (i % 7) * 61);
    }
    let len = starts[n];
    let a: Vec<f32> = (0..len).map(|k| ((k * 13) % 101) as f32 * 0.5).collect();
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let row = &a[starts[i]..starts[i + 1]];
            row.iter()
                .cloned()
                .fold(None, |m: Option<f32>, v| Some(m.map_or(v, |m| m.max(v))))
                .map_or(-1.0, |m| m * 2.0)
        })
        .collect();
    on_each_device(|ty| {
        assert_eq!(ragged_row_max(&a, &starts, n), want, "on {ty}");
    });
}

/// Three levels, as stencil codes write them: gang over planes, worker over rows, vector over
/// columns. On the GPU devices a plane's block shares the worker and vector loops as one nest.
#[acc::offload]
fn smooth_planes(a: &[f64], nz: usize, ny: usize, nx: usize) -> Vec<f64> {
    let mut out = vec![0.0; nz * ny * nx];
    #[acc::parallel_loop(gang, copyin(a), copy(out))]
    for k in 1..nz - 1 {
        let plane = k * ny * nx;
        #[acc::r#loop(worker)]
        for j in 1..ny - 1 {
            let row = plane + j * nx;
            #[acc::r#loop(vector)]
            for i in 1..nx - 1 {
                // (Times 0.125: exact, where a division may be off by an ulp on wgpu.)
                out[row + i] = (a[row + i - 1]
                    + a[row + i + 1]
                    + a[row + i - nx]
                    + a[row + i + nx]
                    + a[row + i - ny * nx]
                    + a[row + i + ny * nx])
                    * 0.125;
            }
        }
    }
    out
}

#[test]
fn gang_worker_vector_nests() {
    let (nz, ny, nx) = (20, 33, 70);
    let a: Vec<f64> = (0..nz * ny * nx).map(|k| ((k * 13) % 29) as f64).collect();
    let mut want = vec![0.0; nz * ny * nx];
    for k in 1..nz - 1 {
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let c = (k * ny + j) * nx + i;
                want[c] =
                    (a[c - 1] + a[c + 1] + a[c - nx] + a[c + nx] + a[c - ny * nx] + a[c + ny * nx])
                        * 0.125;
            }
        }
    }
    on_each_device(|ty| {
        assert_eq!(smooth_planes(&a, nz, ny, nx), want, "on {ty}");
    });
}

/// A worker loop alone under the gang loop, and a worker loop over a vector loop whose bounds
/// depend on the worker's variable (a triangle: not one rectangular nest).
#[acc::offload]
fn worker_shapes(n: usize) -> (Vec<u64>, Vec<u64>) {
    let mut rows = vec![0u64; n * n];
    let mut tri = vec![0u64; n * n];
    #[acc::parallel(copy(rows, tri))]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            #[acc::r#loop(worker)]
            for j in 0..n {
                rows[i * n + j] = (i * 1000 + j) as u64;
            }
        }
        #[acc::r#loop(gang)]
        for i in 0..n {
            #[acc::r#loop(worker)]
            for j in 0..n {
                #[acc::r#loop(vector)]
                for k in 0..j {
                    tri[i * n + j] += (k + i) as u64;
                }
            }
        }
    }
    (rows, tri)
}

#[test]
fn worker_loops_under_gang_loops() {
    let n = 40;
    let mut want = (vec![0u64; n * n], vec![0u64; n * n]);
    for i in 0..n {
        for j in 0..n {
            want.0[i * n + j] = (i * 1000 + j) as u64;
            want.1[i * n + j] = (0..j).map(|k| (k + i) as u64).sum();
        }
    }
    on_each_device(|ty| {
        assert_eq!(worker_shapes(n), want, "on {ty}");
    });
}

/// `vector_length(32)`: on nvidia each gang iteration takes a warp (the block's warps take
/// consecutive rows, with no barriers); elsewhere the same results as any other shape.
#[acc::offload]
fn short_rows(a: &[f64], starts: &[usize], n: usize) -> (Vec<f64>, Vec<i64>, Vec<bool>, f64) {
    let mut sums = vec![0.0; n];
    let mut mins = vec![0i64; n];
    let mut any_big = vec![false; n];
    let mut total = 0.0;
    #[acc::parallel_loop(gang, vector_length(32), copyin(a, starts), copyout(sums, mins, any_big), reduction(+: total))]
    for i in 0..n {
        let mut s = 1.0;
        let mut lo = i64::MAX;
        let mut big = false;
        #[acc::r#loop(vector, reduction(+: s), reduction(min: lo), reduction(||: big))]
        for k in starts[i]..starts[i + 1] {
            s += a[k];
            lo = lo.min(a[k] as i64);
            big = big || a[k] > 90.0;
        }
        sums[i] = s;
        mins[i] = if lo == i64::MAX { -1 } else { lo };
        any_big[i] = big;
        total += s;
    }
    (sums, mins, any_big, total)
}

#[test]
fn gang_iterations_of_a_warp() {
    let n = 1000;
    // Rows of 0 to 70 entries: empty, shorter and longer than a warp.
    let mut starts = vec![0usize];
    for i in 0..n {
        starts.push(starts[i] + (i * 7) % 71);
    }
    let a: Vec<f64> = (0..starts[n]).map(|k| ((k * 37) % 97) as f64).collect();
    let mut want = (vec![0.0; n], vec![0i64; n], vec![false; n], 0.0);
    for i in 0..n {
        let row = &a[starts[i]..starts[i + 1]];
        want.0[i] = 1.0 + row.iter().sum::<f64>();
        want.1[i] = row.iter().map(|&v| v as i64).min().unwrap_or(-1);
        want.2[i] = row.iter().any(|&v| v > 90.0);
        want.3 += want.0[i];
    }
    on_each_device(|ty| {
        // Sums of small integers: exact in any order.
        assert_eq!(short_rows(&a, &starts, n), want, "on {ty}");
    });
}

/// Several vector loops in one gang iteration: a row's softmax (the row's maximum, then the
/// sum of exponentials, then each element scaled), with scalar code between the loops that
/// reads the earlier loops' results, and a loop reading what the one before it wrote.
#[acc::offload]
fn softmax_rows(x: &[f64], n: usize, m: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut y = vec![0.0; n * m];
    let mut shifted = vec![0.0; n * m];
    let mut norms = vec![0.0; n];
    #[acc::parallel_loop(gang, copyin(x), copyout(y, shifted, norms))]
    for i in 0..n {
        let mut hi = f64::NEG_INFINITY;
        #[acc::r#loop(vector, reduction(max: hi))]
        for j in 0..m {
            hi = hi.max(x[i * m + j]);
        }
        let mut s = 0.0;
        #[acc::r#loop(vector, reduction(+: s))]
        for j in 0..m {
            shifted[i * m + j] = x[i * m + j] - hi;
            s += (x[i * m + j] - hi).exp();
        }
        let scale = 1.0 / s;
        #[acc::r#loop(vector)]
        for j in 0..m {
            // The element the previous loop wrote in another thread (a reversed row).
            y[i * m + j] = shifted[i * m + (m - 1 - j)].exp() * scale;
        }
        norms[i] = s;
    }
    (y, shifted, norms)
}

#[test]
fn several_vector_loops_in_one_gang_iteration() {
    let (n, m) = (37, 700);
    let x: Vec<f64> = (0..n * m)
        .map(|k| ((k * 13) % 29) as f64 * 0.25 - 3.0)
        .collect();
    on_each_device(|ty| {
        let (y, shifted, norms) = softmax_rows(&x, n, m);
        for i in 0..n {
            let row = &x[i * m..(i + 1) * m];
            let hi = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = row.iter().map(|v| (v - hi).exp()).sum();
            assert!(
                (norms[i] - s).abs() <= 1e-9 * s,
                "row {i} sum {} on {ty}",
                norms[i]
            );
            for j in 0..m {
                assert_eq!(shifted[i * m + j], row[j] - hi, "on {ty}");
                let want = (row[m - 1 - j] - hi).exp() / s;
                assert!((y[i * m + j] - want).abs() <= 1e-12, "y[{i}][{j}] on {ty}");
            }
        }
    });
}

/// Code after the vector loop reading what other threads wrote in it.
#[acc::offload]
fn last_of_each_row(n: usize, m: usize) -> (Vec<u32>, Vec<u32>) {
    let mut t = vec![0u32; n * m];
    let mut last = vec![0u32; n];
    #[acc::parallel_loop(gang, copyout(t, last))]
    for i in 0..n {
        #[acc::r#loop(vector)]
        for j in 0..m {
            t[i * m + j] = (i * m + j) as u32;
        }
        last[i] = t[i * m + m - 1] + t[i * m];
    }
    (t, last)
}

#[test]
fn code_after_a_vector_loop_sees_what_it_wrote() {
    on_each_device(|ty| {
        let (n, m) = (300, 999);
        let (_, last) = last_of_each_row(n, m);
        assert!(
            last.iter()
                .enumerate()
                .all(|(i, &v)| v == (2 * i * m + m - 1) as u32),
            "on {ty}"
        );
    });
}

/// An array private to each gang iteration (declared in the gang loop's body, 3.3 section
/// 2.5.13): one vector loop fills it, the next reads elements other threads wrote.
#[acc::offload]
fn shifted_rows(a: &[f32], n: usize, m: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; n * m];
    #[acc::parallel_loop(gang, copyin(a), copyout(out))]
    for i in 0..n {
        let mut row = [0.0f32; 128];
        #[acc::r#loop(vector)]
        for j in 0..m {
            row[j] = a[i * m + j] * 2.0;
        }
        #[acc::r#loop(vector)]
        for j in 0..m {
            out[i * m + j] = row[(j + 1) % m] + row[j];
        }
    }
    out
}

#[test]
fn gang_private_arrays_are_shared_by_the_gang() {
    let (n, m) = (40, 100);
    let a: Vec<f32> = (0..n * m).map(|k| (k % 17) as f32).collect();
    on_each_device(|ty| {
        let out = shifted_rows(&a, n, m);
        for i in 0..n {
            for j in 0..m {
                let want = a[i * m + (j + 1) % m] * 2.0 + a[i * m + j] * 2.0;
                assert_eq!(out[i * m + j], want, "out[{i}][{j}] on {ty}");
            }
        }
    });
}

/// The gang's arrays in more shapes: one named in the gang loop's `private` (3.3 section
/// 2.9.10), one set between two vector loops by every thread, a flag array, a reduction
/// beside them, the first thread reading an array after the last loop, and an array a vector
/// loop writes at an element its iterations share (which runs each gang iteration on one
/// thread, as before, with the same results).
#[acc::offload]
fn gang_array_shapes(a: &[i32], n: usize) -> (Vec<i64>, Vec<i32>, Vec<i32>) {
    const M: usize = 64;
    let mut out = vec![0i64; n * M];
    let mut firsts = vec![0i32; n];
    let mut same = vec![0i32; n];
    let mut scratch = [0i32; M];
    #[acc::parallel_loop(gang, private(scratch), copyin(a), copyout(out, firsts, same))]
    for i in 0..n {
        let mut big = [false; M];
        let mut bias = [0i64; 4];
        #[acc::r#loop(vector)]
        for j in 0..M {
            scratch[j] = a[i * M + j] - 3;
            big[j] = a[i * M + j] > 5;
        }
        bias[0] = i as i64;
        bias[3] = 7;
        let mut s = 0i64;
        #[acc::r#loop(vector, reduction(+: s))]
        for j in 0..M {
            let k = M - 1 - j;
            let v = if big[k] {
                scratch[k] as i64 * 10
            } else {
                scratch[k] as i64
            } + bias[0]
                + bias[3];
            out[i * M + j] = v;
            s += v;
        }
        firsts[i] = scratch[0] + scratch[M - 1] + s as i32;
    }
    #[acc::parallel_loop(gang, copyout(same))]
    for i in 0..n {
        let mut last = [0i32; 1];
        #[acc::r#loop(vector)]
        for j in 0..M {
            last[0] = (j + i - i) as i32;
        }
        same[i] = last[0];
    }
    (out, firsts, same)
}

#[test]
fn gang_arrays_in_more_shapes() {
    const M: usize = 64;
    let n = 37;
    let a: Vec<i32> = (0..n * M).map(|k| ((k * 7) % 13) as i32).collect();
    on_each_device(|ty| {
        let (out, firsts, same) = gang_array_shapes(&a, n);
        for i in 0..n {
            let mut s = 0i64;
            for j in 0..M {
                let k = M - 1 - j;
                let x = a[i * M + k];
                let v = if x > 5 {
                    (x - 3) as i64 * 10
                } else {
                    (x - 3) as i64
                } + i as i64
                    + 7;
                assert_eq!(out[i * M + j], v, "out[{i}][{j}] on {ty}");
                s += v;
            }
            assert_eq!(
                firsts[i],
                a[i * M] - 3 + a[i * M + M - 1] - 3 + s as i32,
                "row {i} on {ty}"
            );
            assert_eq!(same[i], M as i32 - 1, "row {i} on {ty}");
        }
    });
}

/// A sequential loop around vector loops in a gang iteration (3.3 section 2.9.4): every
/// thread of the gang's block runs it in step, and the block synchronizes between the loops
/// inside. Here a row smoothed `iters` times through two arrays of the gang, each sweep
/// reading its neighbours' values from the other.
#[acc::offload]
fn smooth_rows(a: &[f32], n: usize, m: usize, iters: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; n * m];
    #[acc::parallel_loop(gang, copyin(a), copyout(out))]
    for i in 0..n {
        let mut t = [0.0f32; 200];
        let mut u = [0.0f32; 200];
        #[acc::r#loop(vector)]
        for j in 0..m {
            t[j] = a[i * m + j];
        }
        for _ in 0..iters {
            #[acc::r#loop(vector)]
            for j in 0..m {
                let left = if j > 0 { t[j - 1] } else { t[j] };
                let right = if j + 1 < m { t[j + 1] } else { t[j] };
                u[j] = 0.5 * t[j] + 0.25 * (left + right);
            }
            #[acc::r#loop(vector)]
            for j in 0..m {
                t[j] = u[j];
            }
        }
        #[acc::r#loop(vector)]
        for j in 0..m {
            out[i * m + j] = t[j];
        }
    }
    out
}

#[test]
fn sequential_loops_around_vector_loops() {
    let (n, m, iters) = (23, 200, 7);
    // Multiples of 1/16 with few bits: every sweep is exact in f32.
    let a: Vec<f32> = (0..n * m).map(|k| ((k * 7) % 16) as f32).collect();
    let mut want = vec![0.0f32; n * m];
    for i in 0..n {
        let mut t: Vec<f32> = a[i * m..(i + 1) * m].to_vec();
        for _ in 0..iters {
            let u: Vec<f32> = (0..m)
                .map(|j| {
                    let left = if j > 0 { t[j - 1] } else { t[j] };
                    let right = if j + 1 < m { t[j + 1] } else { t[j] };
                    0.5 * t[j] + 0.25 * (left + right)
                })
                .collect();
            t = u;
        }
        want[i * m..(i + 1) * m].copy_from_slice(&t);
    }
    on_each_device(|ty| {
        assert_eq!(smooth_rows(&a, n, m, iters), want, "on {ty}");
    });
}

/// A column's levels, as atmosphere codes write them: a sequential loop over levels inside
/// the gang loop, a vector reduction per level whose result the redundant code after it reads
/// (every thread holds it), a sequential loop whose trip count is such a result, and `if`s
/// around vector loops decided alike by every thread.
#[acc::offload]
fn column_levels(a: &[i64], n: usize, nk: usize, m: usize) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let mut totals = vec![0i64; n];
    let mut marks = vec![0i64; n * m];
    let mut peaks = vec![0i64; n];
    #[acc::parallel_loop(gang, copyin(a), copyout(totals, marks, peaks))]
    for i in 0..n {
        let mut total = 0i64;
        let mut peak = 0i64;
        for k in 0..nk {
            let mut s = 0i64;
            #[acc::r#loop(vector, reduction(+: s))]
            for j in 0..m {
                s += a[(i * nk + k) * m + j];
            }
            total = total * 3 + s;
            peak = peak.max(s);
        }
        let mut hi = 0i64;
        #[acc::r#loop(vector, reduction(max: hi))]
        for j in 0..m {
            hi = hi.max(a[i * nk * m + j] % 5);
        }
        for r in 0..hi {
            if i % 2 == 0 {
                #[acc::r#loop(vector)]
                for j in 0..m {
                    marks[i * m + j] += r + 1;
                }
            } else {
                #[acc::r#loop(vector)]
                for j in 0..m {
                    marks[i * m + j] -= r;
                }
            }
        }
        totals[i] = total;
        peaks[i] = peak;
    }
    (totals, marks, peaks)
}

#[test]
fn reductions_and_branches_inside_sequential_loops() {
    let (n, nk, m) = (45, 9, 300);
    let a: Vec<i64> = (0..n * nk * m)
        .map(|k| ((k * 29) % 23) as i64 - 7)
        .collect();
    let mut want = (vec![0i64; n], vec![0i64; n * m], vec![0i64; n]);
    for i in 0..n {
        let mut total = 0i64;
        let mut peak = 0i64;
        for k in 0..nk {
            let s: i64 = a[(i * nk + k) * m..(i * nk + k + 1) * m].iter().sum();
            total = total * 3 + s;
            peak = peak.max(s);
        }
        let hi = (0..m).map(|j| a[i * nk * m + j] % 5).max().unwrap().max(0);
        for r in 0..hi {
            for j in 0..m {
                if i % 2 == 0 {
                    want.1[i * m + j] += r + 1;
                } else {
                    want.1[i * m + j] -= r;
                }
            }
        }
        want.0[i] = total;
        want.2[i] = peak;
    }
    on_each_device(|ty| {
        assert_eq!(column_levels(&a, n, nk, m), want, "on {ty}");
    });
}

/// Batched elimination: a small matrix per gang, held in the gang's array, reduced to upper
/// triangular form column by column (a sequential loop over pivots, two vector loops per
/// pivot: the factors, then the update of the rows below, which reads the factors other
/// threads computed).
#[acc::offload]
fn eliminate(a: &[f64], batches: usize) -> Vec<f64> {
    const N: usize = 12;
    let mut out = vec![0.0; batches * N * N];
    #[acc::parallel_loop(gang, copyin(a), copyout(out))]
    for b in 0..batches {
        let mut m = [0.0f64; 144];
        let mut f = [0.0f64; 12];
        #[acc::r#loop(vector)]
        for e in 0..N * N {
            m[e] = a[b * N * N + e];
        }
        for k in 0..N - 1 {
            #[acc::r#loop(vector)]
            for i in 0..N {
                f[i] = if i > k {
                    m[i * N + k] / m[k * N + k]
                } else {
                    0.0
                };
            }
            #[acc::r#loop(vector)]
            for e in 0..N * N {
                let (i, j) = (e / N, e % N);
                if i > k && j >= k {
                    m[e] -= f[i] * m[k * N + j];
                }
            }
        }
        #[acc::r#loop(vector)]
        for e in 0..N * N {
            out[b * N * N + e] = m[e];
        }
    }
    out
}

#[test]
fn batched_elimination_in_the_gangs_arrays() {
    const N: usize = 12;
    let batches = 70;
    // Diagonally dominant: no pivoting needed.
    let a: Vec<f64> = (0..batches * N * N)
        .map(|k| {
            let (i, j) = ((k / N) % N, k % N);
            if i == j {
                40.0 + (k % 7) as f64
            } else {
                ((k * 13) % 9) as f64 - 4.0
            }
        })
        .collect();
    let mut want = a.clone();
    for b in 0..batches {
        let m = &mut want[b * N * N..(b + 1) * N * N];
        for k in 0..N - 1 {
            let f: Vec<f64> = (0..N)
                .map(|i| {
                    if i > k {
                        m[i * N + k] / m[k * N + k]
                    } else {
                        0.0
                    }
                })
                .collect();
            for i in k + 1..N {
                for j in k..N {
                    m[i * N + j] -= f[i] * m[k * N + j];
                }
            }
        }
    }
    on_each_device(|ty| {
        let got = eliminate(&a, batches);
        for (e, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "element {e}: {g} against {w} on {ty}"
            );
        }
    });
}
