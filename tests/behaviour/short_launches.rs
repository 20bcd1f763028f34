//! Programs of many short launches (issue 16): a time loop of small regions on present data
//! whose scalar changes every step, with a sum the host reads every tenth step, and a wavefront
//! launching one region per anti-diagonal. Launches that return before the GPU ran them, and
//! proofs reused across steps, must give the answers of plain loops on every device.

use crate::devices::on_each_device;

#[path = "../../benches/launches/programs.rs"]
mod programs;

use programs::{tiny_regions as time_loop, wavefront_diagonals as wavefront};

#[test]
fn a_time_loop_of_small_regions_gives_the_plain_loops_answers() {
    let start: Vec<f64> = (0..300).map(|i| (i % 13) as f64).collect();
    let (mut want, mut total) = (start.clone(), 0.0);
    for step in 0..100 {
        let a = (step % 7) as f64;
        for v in want.iter_mut() {
            *v = *v * 0.5 + a;
        }
        if step % 10 == 9 {
            // Summed in another order on other devices: compared within a tolerance.
            total += want.iter().sum::<f64>();
        }
    }
    on_each_device(|ty| {
        let mut x = start.clone();
        let got = time_loop(&mut x, 100);
        assert_eq!(x, want, "on {ty}");
        assert!(
            (got - total).abs() <= 1e-9 * total.abs(),
            "{got} against {total} on {ty}"
        );
    });
}

/// The whole table, row by row.
fn score(a: &[u8], b: &[u8]) -> i32 {
    let n = a.len();
    let w = n + 1;
    let mut h = vec![0i32; w * w];
    for k in 0..w {
        h[k] = -(k as i32);
        h[k * w] = -(k as i32);
    }
    for i in 1..=n {
        for j in 1..=n {
            let m = if a[i - 1] == b[j - 1] { 2 } else { -1 };
            h[i * w + j] = (h[(i - 1) * w + j - 1] + m)
                .max(h[(i - 1) * w + j] - 1)
                .max(h[i * w + j - 1] - 1);
        }
    }
    h[n * w + n]
}

#[test]
fn a_wavefront_of_one_region_per_diagonal_scores_as_the_whole_table() {
    for n in [1usize, 7, 300] {
        let a: Vec<u8> = (0..n).map(|i| b"ACGT"[(i * 7 + i / 3) % 4]).collect();
        let b: Vec<u8> = (0..n).map(|i| b"ACGT"[(i * 5 + 1) % 4]).collect();
        let want = score(&a, &b);
        on_each_device(|ty| {
            let mut r = vec![0i32; 3 * (n + 1)];
            assert_eq!(wavefront(&mut r, &a, &b), want, "n = {n} on {ty}");
        });
    }
}
