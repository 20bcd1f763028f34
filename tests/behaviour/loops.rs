//! The loop construct (3.3 section 2.9): iteration spaces, collapse, tile, private, the levels,
//! `seq`, `auto` in kernels.

use crate::devices::on_each_device;

#[acc::offload]
fn visit_2d(n: usize, m: usize) -> Vec<u32> {
    let mut hits = vec![0u32; n * m];
    #[acc::parallel_loop(collapse(2), copy(hits))]
    for i in 0..n {
        for j in 0..m {
            hits[i * m + j] += 1 + (i + j) as u32;
        }
    }
    hits
}

#[test]
fn collapse_2_visits_every_point_once() {
    on_each_device(|_| {
        for (n, m) in [(0, 5), (1, 1), (7, 13), (300, 211)] {
            let hits = visit_2d(n, m);
            for i in 0..n {
                for j in 0..m {
                    assert_eq!(hits[i * m + j], 1 + (i + j) as u32, "({i}, {j}) of {n}x{m}");
                }
            }
        }
    });
}

#[acc::offload]
fn visit_3d(n: i32) -> Vec<i32> {
    let size = (n * n * n) as usize;
    let mut v = vec![0i32; size];
    #[acc::parallel_loop(collapse(3))]
    for i in (0..n).rev() {
        for j in (0..n).step_by(1) {
            for k in 0..=n - 1 {
                v[((i * n + j) * n + k) as usize] = i * 10_000 + j * 100 + k;
            }
        }
    }
    v
}

#[test]
fn collapse_3_with_rev_and_inclusive_ranges() {
    on_each_device(|_| {
        let n = 23;
        let v = visit_3d(n);
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    assert_eq!(v[((i * n + j) * n + k) as usize], i * 10_000 + j * 100 + k);
                }
            }
        }
    });
}

#[acc::offload]
fn strided(lo: i64, hi: i64, step: usize) -> Vec<i64> {
    let mut out = vec![0i64; (hi - lo + 1) as usize];
    #[acc::parallel_loop]
    for x in (lo..=hi).rev().step_by(step) {
        out[(x - lo) as usize] = x;
    }
    out
}

#[test]
fn rev_step_by_and_negative_ranges() {
    on_each_device(|_| {
        for (lo, hi, step) in [(-50i64, 49, 3usize), (-7, -7, 1), (0, 1000, 7), (5, 4, 2)] {
            let got = strided(lo, hi, step);
            let mut want = vec![0i64; (hi - lo + 1).max(0) as usize];
            for x in (lo..=hi).rev().step_by(step) {
                want[(x - lo) as usize] = x;
            }
            assert_eq!(got, want, "{lo}..={hi} rev step {step}");
        }
    });
}

#[acc::offload]
fn full_u8_range() -> Vec<u8> {
    let mut v = vec![0u8; 256];
    #[acc::parallel_loop]
    for b in 0u8..=255 {
        v[b as usize] = b.wrapping_mul(3);
    }
    v
}

#[test]
fn inclusive_range_to_the_type_maximum() {
    on_each_device(|_| {
        let v = full_u8_range();
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i as u8).wrapping_mul(3)));
    });
}

#[acc::offload]
fn tiled(n: usize) -> Vec<usize> {
    let mut v = vec![0; n * n];
    #[acc::parallel_loop(tile(8, 4))]
    for i in 0..n {
        for j in 0..n {
            v[i * n + j] = i * 1000 + j;
        }
    }
    v
}

#[test]
fn tile_computes_the_same_iterations() {
    on_each_device(|_| {
        let n = 37;
        let v = tiled(n);
        assert!((0..n * n).all(|k| v[k] == (k / n) * 1000 + k % n));
    });
}

/// `tile` with reductions, sizes that do not divide the trip counts and a `*` size: the same
/// sums as the plain nest.
#[acc::offload]
fn tiled_sums(n: usize, m: usize, a: &[f64]) -> (f64, f64, u64) {
    let (mut s, mut top, mut count) = (0.0, f64::MIN, 0u64);
    #[acc::parallel_loop(tile(16, *), copyin(a), reduction(+: s, count), reduction(max: top))]
    for i in 0..n {
        for j in 0..m {
            if (i + j) % 7 != 3 {
                s += a[i * m + j];
                top = top.max(a[i * m + j] * (j as f64));
                count += 1;
            }
        }
    }
    (s, top, count)
}

#[test]
fn tile_with_reductions_and_remainders() {
    let (n, m) = (37, 53);
    let a: Vec<f64> = (0..n * m).map(|k| ((k * 37) % 101) as f64 * 0.5).collect();
    let (mut s, mut top, mut count) = (0.0, f64::MIN, 0u64);
    for i in 0..n {
        for j in 0..m {
            if (i + j) % 7 != 3 {
                s += a[i * m + j];
                top = top.max(a[i * m + j] * j as f64);
                count += 1;
            }
        }
    }
    on_each_device(|ty| {
        let (gs, gtop, gcount) = tiled_sums(n, m, &a);
        assert_eq!(gcount, count, "{ty}");
        assert_eq!(gtop, top, "{ty}");
        assert!((gs - s).abs() <= 1e-9 * s.abs(), "{ty}: {gs} vs {s}");
    });
}

/// Three tiled loops over reversed, stepped and offset ranges; one tiled loop of `*`.
#[acc::offload]
fn tiled_3d(n: i32) -> (Vec<i32>, Vec<u32>) {
    let n_us = n as usize;
    let mut v = vec![0; n_us * n_us * n_us];
    let mut w = vec![0u32; 1000];
    #[acc::parallel_loop(tile(2, 3, 4))]
    for i in (0..n).rev() {
        for j in (-n..n).step_by(2) {
            for k in 1..=n {
                let at = (i * n * n + ((j + n) / 2) * n + (k - 1)) as usize;
                v[at] = i * 10_000 + j * 100 + k;
            }
        }
    }
    #[acc::parallel_loop(tile(*))]
    for i in (3..1000).step_by(3) {
        w[i] = i as u32 * 2;
    }
    (v, w)
}

#[test]
fn tile_over_three_loops_and_stepped_ranges() {
    let n = 9;
    on_each_device(|ty| {
        let (v, w) = tiled_3d(n);
        for i in 0..n {
            for jj in 0..n {
                let j = -n + 2 * jj;
                for k in 1..=n {
                    let at = (i * n * n + jj * n + (k - 1)) as usize;
                    assert_eq!(v[at], i * 10_000 + j * 100 + k, "{ty}: ({i}, {j}, {k})");
                }
            }
        }
        for (i, &x) in w.iter().enumerate() {
            let want = if i >= 3 && i % 3 == 0 {
                i as u32 * 2
            } else {
                0
            };
            assert_eq!(x, want, "{ty}: w[{i}]");
        }
    });
}

/// `tile` and `collapse` on loops inside a gang loop: nests that run within each gang.
#[acc::offload]
fn nested_nests(b: usize, n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut t = vec![0; b * n * n];
    let mut c = vec![0; b * n * n];
    #[acc::parallel(copyout(t, c))]
    {
        #[acc::r#loop(gang)]
        for g in 0..b {
            #[acc::r#loop(tile(4, 4))]
            for i in 0..n {
                for j in 0..n {
                    t[(g * n + i) * n + j] = g * 10_000 + i * 100 + j;
                }
            }
            #[acc::r#loop(collapse(2))]
            for i in 0..n {
                for j in 0..n {
                    c[(g * n + i) * n + j] = g + i + j;
                }
            }
        }
    }
    (t, c)
}

#[test]
fn tile_and_collapse_inside_a_gang_loop() {
    let (b, n) = (5, 10);
    on_each_device(|ty| {
        let (t, c) = nested_nests(b, n);
        for g in 0..b {
            for i in 0..n {
                for j in 0..n {
                    let at = (g * n + i) * n + j;
                    assert_eq!(
                        t[at],
                        g * 10_000 + i * 100 + j,
                        "{ty}: t at ({g}, {i}, {j})"
                    );
                    assert_eq!(c[at], g + i + j, "{ty}: c at ({g}, {i}, {j})");
                }
            }
        }
    });
}

/// A gang loop whose body sets scalars, runs a vector loop with its own reduction, and uses the
/// result.
#[acc::offload]
fn rows_by_gangs(n: usize, m: usize, a: &[f32]) -> (Vec<f32>, f32) {
    let mut rows = vec![0.0f32; n];
    let mut total = 0.0f32;
    #[acc::parallel(copyin(a), copyout(rows), reduction(+: total))]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            let base = i * m;
            let w = 1.0 + i as f32;
            let mut s = 0.0f32;
            #[acc::r#loop(vector, reduction(+: s))]
            for j in 0..m {
                s += a[base + j] * w;
            }
            rows[i] = s;
            total += s;
        }
    }
    (rows, total)
}

#[test]
fn gang_loops_over_vector_loops() {
    let (n, m) = (300, 1000);
    let a: Vec<f32> = (0..n * m).map(|k| (k % 13) as f32 * 0.25).collect();
    on_each_device(|ty| {
        let (rows, total) = rows_by_gangs(n, m, &a);
        let mut want_total = 0.0f64;
        for i in 0..n {
            let want: f64 = (0..m).map(|j| a[i * m + j] as f64 * (1.0 + i as f64)).sum();
            want_total += want;
            assert!(
                (rows[i] as f64 - want).abs() <= 1e-4 * want,
                "{ty}: row {i}: {} vs {want}",
                rows[i]
            );
        }
        assert!(
            (total as f64 - want_total).abs() <= 1e-4 * want_total,
            "{ty}: {total} vs {want_total}"
        );
    });
}

/// Gang loops whose bodies set scalars and then run one vector loop (writing, or adding into
/// the gang loop's reduction): on the GPU devices each gang iteration takes a workgroup or
/// block, whose threads share the vector loop.
#[acc::offload]
fn scaled_by_gangs(n: usize, m: usize, a: &[f32]) -> (Vec<f32>, f64) {
    let mut out = vec![0.0f32; n * m];
    let mut total = 0.0f64;
    #[acc::parallel(copyin(a), copyout(out))]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            let base = i * m;
            let w = 1.0 + i as f32;
            #[acc::r#loop(vector)]
            for j in 0..m {
                out[base + j] = a[base + j] * w;
            }
        }
    }
    #[acc::parallel_loop(gang, copyin(a), reduction(+: total))]
    for i in 0..n {
        let w = 2.0 + i as f64;
        #[acc::r#loop(vector, reduction(+: total))]
        for j in 0..m {
            total += a[i * m + j] as f64 * w;
        }
    }
    (out, total)
}

#[test]
fn gang_loops_over_one_vector_loop() {
    let (n, m) = (300, 700);
    let a: Vec<f32> = (0..n * m).map(|k| (k % 13) as f32 * 0.25).collect();
    let mut want_total = 0.0f64;
    for i in 0..n {
        for j in 0..m {
            want_total += a[i * m + j] as f64 * (2.0 + i as f64);
        }
    }
    on_each_device(|ty| {
        let (out, total) = scaled_by_gangs(n, m, &a);
        for i in 0..n {
            for j in 0..m {
                assert_eq!(
                    out[i * m + j],
                    a[i * m + j] * (1.0 + i as f32),
                    "{ty}: ({i}, {j})"
                );
            }
        }
        assert!(
            (total - want_total).abs() <= 1e-12 * want_total,
            "{ty}: {total} vs {want_total}"
        );
    });
}

#[acc::offload]
fn levels(n: usize, m: usize, a: &[f64]) -> Vec<f64> {
    let mut rows = vec![0.0; n];
    #[acc::parallel(copyin(a), copyout(rows))]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            let mut s = 0.0;
            #[acc::r#loop(vector, reduction(+: s))]
            for j in 0..m {
                s += a[i * m + j];
            }
            #[acc::r#loop(seq)]
            for _ in 0..2 {
                s *= 0.5;
            }
            rows[i] = s;
        }
    }
    rows
}

#[test]
fn gang_vector_and_seq_levels() {
    on_each_device(|_| {
        let (n, m) = (200, 64);
        let a: Vec<f64> = (0..n * m).map(|k| (k % 17) as f64).collect();
        let rows = levels(n, m, &a);
        for i in 0..n {
            let s: f64 = a[i * m..(i + 1) * m].iter().sum();
            assert_eq!(rows[i], s * 0.25, "row {i}");
        }
    });
}

#[acc::offload]
fn with_continue(n: usize) -> Vec<i32> {
    let mut v = vec![-1; n];
    #[acc::parallel_loop]
    for i in 0..n {
        if i % 3 == 0 {
            continue;
        }
        v[i] = i as i32;
    }
    v
}

#[test]
fn continue_skips_one_iteration() {
    on_each_device(|_| {
        let v = with_continue(1000);
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, &x)| x == if i % 3 == 0 { -1 } else { i as i32 }));
    });
}

#[acc::offload]
fn kernels_mix(x: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let n = x.len();
    let mut y = vec![0.0f32; n];
    let mut shifted = vec![0.0f32; n + 1];
    #[acc::kernels_loop]
    for i in 0..n {
        y[i] = 2.0 * x[i];
    }
    #[acc::kernels]
    {
        for i in 0..n {
            shifted[i + 1] = y[i] + 1.0;
        }
        // Reads what the previous iteration wrote: the dependence test must keep it in order.
        for i in 1..n {
            shifted[i] += shifted[i - 1];
        }
    }
    (y, shifted)
}

#[test]
fn auto_loops_in_kernels() {
    on_each_device(|_| {
        let x: Vec<f32> = (0..4096).map(|i| (i % 5) as f32).collect();
        let (y, shifted) = kernels_mix(&x);
        assert!(y.iter().zip(&x).all(|(a, b)| *a == 2.0 * b));
        let mut want = vec![0.0f32; x.len() + 1];
        for i in 0..x.len() {
            want[i + 1] = 2.0 * x[i] + 1.0;
        }
        for i in 1..x.len() {
            want[i] += want[i - 1];
        }
        assert_eq!(shifted, want);
    });
}

#[acc::offload]
fn empty_and_single(n: usize) -> u64 {
    let mut s = 7u64;
    #[acc::parallel_loop(reduction(+: s))]
    for i in 0..n {
        s += i as u64 + 1;
    }
    s
}

#[test]
fn zero_and_one_trip_loops() {
    on_each_device(|_| {
        assert_eq!(empty_and_single(0), 7);
        assert_eq!(empty_and_single(1), 8);
        assert_eq!(empty_and_single(100_000), 7 + 100_000 * 100_001 / 2);
    });
}

/// Iterations of `spin` that make a loop's iterations long enough for every pool thread of the
/// multicore device to wake and take some (a few microseconds each left one thread taking them
/// all on a loaded 2-core machine); short enough for lavapipe's loop limit on wgpu.
fn spin_for(ty: acc::DeviceType) -> u64 {
    if ty == acc::DeviceType::Multicore {
        2_000_000
    } else {
        50_000
    }
}

#[acc::offload]
fn who_ran(n: usize, work: u64) -> (Vec<usize>, Vec<usize>) {
    let mut in_kernels = vec![0; n];
    let mut in_gang_loop = vec![0; n];
    #[acc::kernels]
    {
        for i in 0..n {
            // `work + 0`: a bare name passed to a routine might be a `&mut` the routine
            // writes, which the dependence test must assume.
            in_kernels[i] =
                acc::gang_idx() + usize::from(crate::devices::spin(work + 0) == u64::MAX);
        }
    }
    #[acc::parallel]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            in_gang_loop[i] = acc::gang_idx() + usize::from(crate::devices::spin(work) == u64::MAX);
        }
    }
    (in_kernels, in_gang_loop)
}

#[test]
fn kernels_auto_loops_and_gang_loops_spread_over_threads() {
    on_each_device(|ty| {
        let (k, g) = who_ran(64, spin_for(ty));
        let distinct = |v: &[usize]| v.iter().collect::<std::collections::HashSet<_>>().len();
        if crate::devices::parallelism(ty) >= 2 {
            assert!(
                distinct(&k) >= 2,
                "kernels loop ran on one thread on {ty}: {k:?}"
            );
            assert!(
                distinct(&g) >= 2,
                "gang loop ran on one thread on {ty}: {g:?}"
            );
        } else {
            assert_eq!(distinct(&k), 1, "{ty}");
            assert_eq!(distinct(&g), 1, "{ty}");
        }
    });
}

#[acc::offload]
fn device_specific(n: usize, work: u64, gpu_seq_work: u64) -> (Vec<usize>, Vec<usize>) {
    let mut seq_on_multicore = vec![0; n];
    let mut seq_on_gpus = vec![0; n];
    #[acc::parallel_loop(device_type(multicore) seq, device_type(*) gang)]
    for i in 0..n {
        seq_on_multicore[i] = acc::gang_idx() + usize::from(crate::devices::spin(work) == u64::MAX);
    }
    // (Less work where the loop runs in one invocation: llvmpipe stops a loop after 65,535
    // iterations in all.)
    #[acc::parallel_loop(device_type(nvidia, wgpu) seq, device_type(*) gang)]
    for i in 0..n {
        seq_on_gpus[i] =
            acc::gang_idx() + usize::from(crate::devices::spin(gpu_seq_work) == u64::MAX);
    }
    (seq_on_multicore, seq_on_gpus)
}

/// A loop's clauses after `device_type(..)` apply on that device type and the `device_type(*)`
/// ones on the others (3.3 section 2.4), on every device: the GPU kernels are built per type.
#[test]
fn device_type_sections_apply_on_their_device() {
    on_each_device(|ty| {
        let gpu = matches!(ty, acc::DeviceType::Nvidia | acc::DeviceType::Wgpu);
        let work = spin_for(ty);
        let (s, g) = device_specific(64, work, if gpu { 500 } else { work });
        let distinct = |v: &[usize]| v.iter().collect::<std::collections::HashSet<_>>().len();
        let parallel = crate::devices::parallelism(ty) >= 2;
        // `device_type(multicore) seq`: one gang there, gangs elsewhere.
        if ty == acc::DeviceType::Multicore || !parallel {
            assert_eq!(
                distinct(&s),
                1,
                "`device_type(multicore) seq` ran in parallel on {ty}"
            );
        } else {
            assert!(
                distinct(&s) >= 2,
                "`device_type(*) gang` did not run in parallel on {ty}"
            );
        }
        // `device_type(nvidia, wgpu) seq`: one gang on the GPUs, gangs elsewhere.
        if gpu || !parallel {
            assert_eq!(
                distinct(&g),
                1,
                "`device_type(nvidia, wgpu) seq` ran in parallel on {ty}"
            );
        } else {
            assert!(
                distinct(&g) >= 2,
                "`device_type(*) gang` did not run in parallel on {ty}"
            );
        }
    });
}

/// `gang(dim: 2)` loops around `gang(dim: 1)` loops under a two-dimensional `num_gangs` (3.3
/// section 2.9.2: an inner gang loop has a lower dimension).
#[acc::offload]
fn two_gang_dimensions(n: usize, m: usize) -> Vec<u64> {
    let mut out = vec![0u64; n * m];
    #[acc::parallel(num_gangs(4, 8), copyout(out))]
    {
        #[acc::r#loop(gang(dim: 2))]
        for i in 0..n {
            #[acc::r#loop(gang(dim: 1))]
            for j in 0..m {
                #[acc::r#loop(vector)]
                for k in 0..3 {
                    if k == 2 {
                        out[i * m + j] = (i * 1000 + j * 10 + k) as u64;
                    }
                }
            }
        }
    }
    out
}

#[test]
fn gang_loops_of_two_dimensions() {
    let (n, m) = (37, 53);
    let want: Vec<u64> = (0..n * m)
        .map(|x| ((x / m) * 1000 + (x % m) * 10 + 2) as u64)
        .collect();
    on_each_device(|ty| {
        assert_eq!(two_gang_dimensions(n, m), want, "on {ty}");
    });
}

/// `collapse(force: 2)` with `let` bindings between the loops (3.3 section 2.9.1): the nest
/// is collapsed on every device, the bindings computed for each iteration of it.
#[acc::offload]
fn forced_collapse(n: usize, m: usize) -> Vec<u64> {
    let mut out = vec![0u64; n * m];
    #[acc::parallel_loop(collapse(force: 2), copyout(out))]
    for i in 0..n {
        let row = i * m;
        let scale = (i + 1) as u64;
        for j in 0..m {
            out[row + j] = scale * (j as u64 + 7);
        }
    }
    out
}

#[test]
fn collapse_force_with_bindings_between_the_loops() {
    let (n, m) = (41, 67);
    let want: Vec<u64> = (0..n * m)
        .map(|x| ((x / m) as u64 + 1) * ((x % m) as u64 + 7))
        .collect();
    on_each_device(|ty| {
        assert_eq!(forced_collapse(n, m), want, "on {ty}");
    });
}

/// `cache!` with a window written as two bounds around the index (`a[i - 1..i + 2]`), as
/// stencils write it: a constant length of 3 (OpenACC 2.0 section 2.8); it changes no result.
#[acc::offload]
fn cached_window(a: &[f64]) -> Vec<f64> {
    let n = a.len();
    let mut b = vec![0.0; n];
    #[acc::parallel_loop(copyin(a), copy(b))]
    for i in 1..n - 1 {
        acc::cache!(a[i - 1..i + 2]);
        b[i] = a[i - 1] + a[i] + a[i + 1];
    }
    b
}

#[test]
fn cache_windows_around_the_index() {
    let a: Vec<f64> = (0..300).map(|i| (i % 11) as f64).collect();
    let mut want = vec![0.0; 300];
    for i in 1..299 {
        want[i] = a[i - 1] + a[i] + a[i + 1];
    }
    on_each_device(|ty| {
        assert_eq!(cached_window(&a), want, "on {ty}");
    });
}

/// A tiled transpose: the stores run along the outer loop, which GPUs then give to adjacent
/// threads; the tiles at the edges are partial.
#[acc::offload]
fn transpose_tiled(a: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut b = vec![0.0f32; rows * cols];
    #[acc::parallel_loop(tile(32, 32), copyin(a), copyout(b))]
    for i in 0..rows {
        for j in 0..cols {
            b[j * rows + i] = a[i * cols + j];
        }
    }
    b
}

#[test]
fn tiled_transpose() {
    let (rows, cols) = (70, 45);
    let a: Vec<f32> = (0..rows * cols).map(|k| k as f32).collect();
    on_each_device(|ty| {
        let b = transpose_tiled(&a, rows, cols);
        for i in 0..rows {
            for j in 0..cols {
                assert_eq!(b[j * rows + i], a[i * cols + j], "({i}, {j}) on {ty}");
            }
        }
    });
}

/// A tile whose reads run along the other loop than its stores, in two arrays of different
/// types and tile sizes that divide neither trip count: on the GPU devices the block copies
/// those reads into shared memory a tile at a time (adjacent threads along the reads), then
/// writes along the stores.
#[acc::offload]
fn transpose_scaled(a: &[f64], c: &[i32], w: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut b = vec![0.0f64; rows * cols];
    #[acc::parallel_loop(tile(8, 16), copyin(a, c, w), copyout(b))]
    for i in 0..rows {
        for j in 0..cols {
            b[j * rows + i] = a[i * cols + j] * w[i] + c[i * cols + j] as f64;
        }
    }
    b
}

#[test]
fn tiles_stage_reads_along_the_other_loop() {
    let (rows, cols) = (37, 53);
    let a: Vec<f64> = (0..rows * cols).map(|k| k as f64 * 0.5).collect();
    let c: Vec<i32> = (0..rows * cols).map(|k| (k % 11) as i32 - 5).collect();
    let w: Vec<f64> = (0..rows).map(|i| 1.0 + i as f64).collect();
    on_each_device(|ty| {
        let b = transpose_scaled(&a, &c, &w, rows, cols);
        for i in 0..rows {
            for j in 0..cols {
                let want = a[i * cols + j] * w[i] + c[i * cols + j] as f64;
                assert_eq!(b[j * rows + i], want, "({i}, {j}) on {ty}");
            }
        }
    });
}

/// A tiled matrix product: each element's `k` loop reads a row of `a` and a column of `b`
/// that the tile's other elements read too. On the GPU devices the block runs the loop a
/// chunk at a time, copying the chunk's parts of `a` and `b` into shared memory first, each
/// element keeping its sum between chunks. Sizes that divide neither the tile nor the chunk;
/// a weight read by `k` alone; code before and after the loop.
#[acc::offload]
fn matmul_tiled(a: &[f32], b: &[f32], w: &[f32], n: usize, m: usize, p: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * p];
    #[acc::parallel_loop(tile(16, 16), copyin(a, b, w), copyout(c))]
    for i in 0..n {
        for j in 0..p {
            let mut s = 0.0f32;
            let bias = (i + j) as f32;
            for k in 0..m {
                s += a[i * m + k] * b[k * p + j] * w[k];
            }
            c[i * p + j] = s + bias;
        }
    }
    c
}

#[test]
fn tiled_matrix_products_stage_their_inner_loop() {
    let (n, m, p) = (37, 45, 29);
    // Small integers: every order of summation gives the exact result in f32.
    let a: Vec<f32> = (0..n * m).map(|k| ((k * 7) % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..m * p).map(|k| ((k * 3) % 7) as f32 - 3.0).collect();
    let w: Vec<f32> = (0..m).map(|k| (k % 3) as f32).collect();
    let mut want = vec![0.0f32; n * p];
    for i in 0..n {
        for j in 0..p {
            let s: f32 = (0..m).map(|k| a[i * m + k] * b[k * p + j] * w[k]).sum();
            want[i * p + j] = s + (i + j) as f32;
        }
    }
    on_each_device(|ty| {
        assert_eq!(matmul_tiled(&a, &b, &w, n, m, p), want, "on {ty}");
    });
}

/// The same shape in `f64` with the other tile shape (`tile(*, *)`: 32 x 8), a stepped and
/// offset inner loop, a transposed operand (`bt[j * m + k]`: contiguous along `k`, as `a`)
/// and an empty inner loop for some sizes.
#[acc::offload]
fn matmul_shapes(a: &[f64], bt: &[f64], n: usize, m: usize, p: usize, from: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; n * p];
    #[acc::parallel_loop(tile(*, *), copyin(a, bt), copyout(c))]
    for i in 0..n {
        for j in 0..p {
            let mut s = 1.0;
            let mut t = 0.0;
            for k in (from..m).step_by(2) {
                s += a[i * m + k] * bt[j * m + k];
                t = s * 0.5;
            }
            c[i * p + j] = s - t;
        }
    }
    c
}

#[test]
fn tiled_inner_loops_of_other_shapes() {
    let (n, m, p) = (41, 70, 35);
    let a: Vec<f64> = (0..n * m).map(|k| ((k * 11) % 9) as f64 - 4.0).collect();
    let bt: Vec<f64> = (0..p * m).map(|k| ((k * 5) % 13) as f64 - 6.0).collect();
    for from in [1, 69, 70] {
        let mut want = vec![0.0f64; n * p];
        for i in 0..n {
            for j in 0..p {
                let (mut s, mut t) = (1.0, 0.0);
                for k in (from..m).step_by(2) {
                    s += a[i * m + k] * bt[j * m + k];
                    t = s * 0.5;
                }
                want[i * p + j] = s - t;
            }
        }
        on_each_device(|ty| {
            assert_eq!(
                matmul_shapes(&a, &bt, n, m, p, from),
                want,
                "from {from} on {ty}"
            );
        });
    }
}

/// A flat parallel loop whose iterations each run a loop over data all of them read (all-pairs
/// forces): on the GPU devices acc tiles it, a block per 256 bodies, and the block stages the
/// other bodies through shared memory a chunk at a time. Body counts that divide neither.
#[acc::offload]
fn forces(px: &[f32], py: &[f32], m: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let n = px.len();
    let (mut fx, mut fy) = (vec![0.0f32; n], vec![0.0f32; n]);
    #[acc::parallel_loop(copyin(px, py, m), copyout(fx, fy))]
    for i in 0..n {
        let (xi, yi) = (px[i], py[i]);
        let (mut ax, mut ay) = (0.0f32, 0.0f32);
        for j in 0..n {
            let (dx, dy) = (px[j] - xi, py[j] - yi);
            let d2 = dx * dx + dy * dy + 0.5;
            let s = m[j] / (d2 * d2.sqrt());
            ax += dx * s;
            ay += dy * s;
        }
        fx[i] = ax;
        fy[i] = ay;
    }
    (fx, fy)
}

#[test]
fn flat_loops_over_shared_data_stage_it() {
    for n in [1, 300, 1000] {
        let px: Vec<f32> = (0..n).map(|k| ((k * 37) % 101) as f32 * 0.1).collect();
        let py: Vec<f32> = (0..n).map(|k| ((k * 53) % 89) as f32 * 0.1).collect();
        let m: Vec<f32> = (0..n).map(|k| 1.0 + (k % 3) as f32).collect();
        let (mut wx, mut wy) = (vec![0.0f32; n], vec![0.0f32; n]);
        for i in 0..n {
            for j in 0..n {
                let (dx, dy) = (px[j] - px[i], py[j] - py[i]);
                let d2 = dx * dx + dy * dy + 0.5;
                let s = m[j] / (d2 * d2.sqrt());
                wx[i] += dx * s;
                wy[i] += dy * s;
            }
        }
        on_each_device(|ty| {
            let (fx, fy) = forces(&px, &py, &m);
            for i in 0..n {
                // (wgpu's division and square root may differ from the host's in the last
                // bits.)
                let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * (1.0 + b.abs());
                assert!(
                    close(fx[i], wx[i]) && close(fy[i], wy[i]),
                    "body {i} of {n}: ({}, {}) against ({}, {}) on {ty}",
                    fx[i],
                    fy[i],
                    wx[i],
                    wy[i]
                );
            }
        });
    }
}

/// A filter: the weights every iteration reads are staged, the window each reads alone is not.
#[acc::offload]
fn filtered(x: &[i64], w: &[i64]) -> Vec<i64> {
    let taps = w.len();
    let n = x.len() - taps + 1;
    let mut y = vec![0i64; n];
    #[acc::parallel_loop(copyin(x, w), copyout(y))]
    for i in 0..n {
        let mut s = 0i64;
        for k in 0..taps {
            s += w[k] * x[i + k];
        }
        y[i] = s;
    }
    y
}

#[test]
fn filters_stage_their_weights() {
    let x: Vec<i64> = (0..5000).map(|k| (k * 7 % 23) as i64 - 11).collect();
    for taps in [1, 7, 300] {
        let w: Vec<i64> = (0..taps).map(|k| (k % 5) as i64 - 2).collect();
        let want: Vec<i64> = (0..x.len() - taps + 1)
            .map(|i| (0..taps).map(|k| w[k] * x[i + k]).sum())
            .collect();
        on_each_device(|ty| {
            assert_eq!(filtered(&x, &w), want, "{taps} taps on {ty}");
        });
    }
}

/// In `kernels` a `loop vector` without `independent` is `auto` (3.3 section 2.9.6): a dot
/// product into a scalar of the gang's iteration without a reduction clause is recognized as
/// the reduction it is (Rodinia's lud writes it so; shared among a gang's threads without one,
/// the sum raced); a recurrence, which is no reduction, runs in order in each thread.
#[acc::offload]
fn row_dots(a: &[f64], x: &[f64], y: &mut [f64], z: &mut [f64], n: usize) {
    #[acc::kernels_loop(independent, gang, copyin(a, x), copyout(y))]
    for i in 0..n {
        let mut sum = 0.0;
        #[acc::r#loop(vector(length: 32))]
        for k in 0..n {
            sum += a[i * n + k] * x[k];
        }
        y[i] = sum;
    }
    #[acc::kernels(copyin(a), copyout(z))]
    {
        #[acc::r#loop(independent, gang)]
        for i in 0..n {
            let mut s = 0.0;
            #[acc::r#loop(vector)]
            for k in 0..n {
                s = s * 0.5 + a[i * n + k];
            }
            z[i] = s;
        }
    }
}

#[test]
fn a_kernels_vector_loop_without_independent_is_auto() {
    on_each_device(|ty| {
        let n = 300;
        let a: Vec<f64> = (0..n * n).map(|k| ((k * 7) % 13) as f64 - 6.0).collect();
        let x: Vec<f64> = (0..n).map(|k| 1.0 / (1.0 + k as f64)).collect();
        let (mut y, mut z) = (vec![0.0; n], vec![0.0; n]);
        row_dots(&a, &x, &mut y, &mut z, n);
        for i in 0..n {
            let (mut dot, mut s) = (0.0, 0.0);
            for k in 0..n {
                dot += a[i * n + k] * x[k];
                s = s * 0.5 + a[i * n + k];
            }
            assert!(
                (y[i] - dot).abs() <= 1e-12 * dot.abs().max(1.0),
                "row {i} on {ty}"
            );
            assert_eq!(z[i], s, "row {i} on {ty}");
        }
    });
}

#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Force {
    v: f64,
    x: f64,
}

/// Sequential loops that accumulate into an array element (`c[i * n + j] += ..`, a struct
/// field `f[i].v += ..`), which the GPU devices keep in a register across the loop: the same
/// values in the same order as the host, a loop of no iterations neither reads nor writes its
/// element (here one past the end), and a loop that also reads another element of the array
/// keeps its loads and stores.
#[acc::offload]
#[allow(clippy::needless_range_loop)]
fn accumulations(a: &[f64], c: &mut [f64], f: &mut [Force], n: usize, empty: usize) {
    #[acc::parallel_loop(copyin(a), copy(c, f))]
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                c[i * n + j] += a[i * n + k] * a[k * n + j];
            }
        }
        for k in 0..n {
            f[i].v += a[i * n + k];
            f[i].x = f[i].x * 0.5 + f[i].v;
        }
        // No iteration: `c[n * n]` is past the end, and must be neither loaded nor stored.
        for k in 0..empty {
            c[n * n] += a[k];
        }
        // Another element of `c` read in the loop: `c[i * n]` may be `c[i * n + k]`.
        for k in 1..n {
            c[i * n + k] += c[i * n + k - 1] * 0.25;
        }
    }
}

#[test]
fn accumulations_into_array_elements_in_sequential_loops() {
    on_each_device(|ty| {
        let n = 70;
        let a: Vec<f64> = (0..n * n)
            .map(|k| ((k * 5) % 17) as f64 * 0.125 - 1.0)
            .collect();
        let (mut c, mut f) = (vec![1.0; n * n], vec![Force { v: 0.5, x: -1.0 }; n]);
        accumulations(&a, &mut c, &mut f, n, 0);
        let (mut c2, mut f2) = (vec![1.0; n * n], vec![Force { v: 0.5, x: -1.0 }; n]);
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    c2[i * n + j] += a[i * n + k] * a[k * n + j];
                }
            }
            for k in 0..n {
                f2[i].v += a[i * n + k];
                f2[i].x = f2[i].x * 0.5 + f2[i].v;
            }
            for k in 1..n {
                c2[i * n + k] += c2[i * n + k - 1] * 0.25;
            }
        }
        // Exact: each element's sums run in the source's order on every device (values of
        // eighths, products and sums exact in f64 except the last loop's quarters, also exact).
        assert_eq!(c, c2, "on {ty}");
        assert_eq!(f, f2, "on {ty}");
    });
}

/// The C spelling of a matrix product without a scalar, `c[i * n + j] = 0` then `+=` in the
/// `k` loop, which the GPU devices turn into a sum in a register (and then tile); and the same
/// with a `k` loop of no iterations, which must leave the value stored before it.
#[acc::offload]
fn products_in_c(
    a: &[f64],
    (c, d, e): (&mut [f64], &mut [f64], &mut [f64]),
    n: usize,
    empty: usize,
) {
    #[acc::parallel_loop(collapse(2), copyin(a), copyout(c, d, e))]
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = 0.0;
            for k in 0..n {
                c[i * n + j] += a[i * n + k] * a[k * n + j];
            }
            d[i * n + j] = 5.0;
            for k in 0..empty {
                d[i * n + j] += a[k];
            }
            // A loop whose range reads the element stored just before it.
            e[i * n + j] = 2.0;
            for _ in (e[i * n + j] as usize)..4 {
                e[i * n + j] += 1.0;
            }
        }
    }
}

#[test]
fn products_accumulated_in_the_result_array() {
    on_each_device(|ty| {
        for n in [1, 17, 70] {
            let a: Vec<f64> = (0..n * n)
                .map(|k| ((k * 3) % 11) as f64 * 0.25 - 1.0)
                .collect();
            let (mut c, mut d, mut e) = (
                vec![f64::NAN; n * n],
                vec![f64::NAN; n * n],
                vec![f64::NAN; n * n],
            );
            products_in_c(&a, (&mut c, &mut d, &mut e), n, 0);
            for i in 0..n {
                for j in 0..n {
                    let mut s = 0.0;
                    for k in 0..n {
                        s += a[i * n + k] * a[k * n + j];
                    }
                    assert_eq!(c[i * n + j], s, "({i}, {j}) of {n} on {ty}");
                }
            }
            assert!(d.iter().all(|&v| v == 5.0), "on {ty}");
            assert!(e.iter().all(|&v| v == 4.0), "on {ty}");
        }
    });
}
