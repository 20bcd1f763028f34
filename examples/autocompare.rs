//! `ACC_AUTOCOMPARE=1`: a region with a bug that only shows off the host, and how autocompare
//! finds it.
//!
//! `forward_fill` carries the last positive value from one iteration to the next in a
//! `firstprivate` variable. That is wrong in a parallel loop: each gang or thread starts its
//! part of the iterations from the variable's initial value, so the result depends on how the
//! iterations are split. On the host (one thread) it looks right; on multicore or a GPU it is
//! not. Run it as
//!
//! ```sh
//! ACC_AUTOCOMPARE=1 cargo run --release --example autocompare
//! ```
//!
//! and autocompare reruns the region on the host twin and prints where the device's `y`
//! first differs from the host's, and how many elements differ. The program's own results
//! stay the device's.

#[acc::offload]
fn forward_fill(x: &[f64], y: &mut [f64]) {
    let mut last = 0.0;
    // The bug: `last` carries a value across iterations, which no parallel loop may do.
    #[acc::parallel_loop(copyin(x), copyout(y), firstprivate(last))]
    for i in 0..x.len() {
        if x[i] > 0.0 {
            last = x[i];
        }
        y[i] = last;
    }
}

fn main() {
    let n = 100_003;
    let x: Vec<f64> = (0..n)
        .map(|i| if i % 1000 == 7 { i as f64 } else { 0.0 })
        .collect();
    let mut y = vec![-1.0; n];
    forward_fill(&x, &mut y);
    let device = acc::get_device_type();
    let sequential = {
        let mut last = 0.0;
        x.iter()
            .map(|&v| {
                if v > 0.0 {
                    last = v;
                }
                last
            })
            .collect::<Vec<f64>>()
    };
    let wrong = y.iter().zip(&sequential).filter(|(a, b)| a != b).count();
    println!(
        "autocompare: device = {device}: {wrong} of {n} elements differ from a sequential fill"
    );
    let on =
        std::env::var("ACC_AUTOCOMPARE").is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0");
    if on {
        let found = acc::autocompare_differences();
        print!("{}", acc::autocompare_report());
        // Where the split gave a wrong result, autocompare must have said so.
        assert!(
            wrong == 0 || found > 0,
            "the device's result differs from the host's, but autocompare found nothing"
        );
        if wrong > 0 {
            println!("autocompare: verified: it found the difference");
        }
    } else if wrong > 0 {
        println!(
            "autocompare: run with ACC_AUTOCOMPARE=1 to have acc find the region and variable"
        );
    }
}
