// Expansions put the user's expressions where their own parentheses may look unneeded; no
// lint may fire at them (`cargo fix` would then change the user's code: `x - (a + b)` into
// `x - a + b`). Every warning is an error here.
#![deny(warnings)]

#[acc::offload]
fn atomics(totals: &mut [f64], a: &[f64], b: &[f64], n: usize) -> (f64, u32) {
    let mut last = 0.0;
    let mut bits = 1u32;
    #[acc::parallel_loop(copyin(a[(n - n)..(n + 0)], b), copy(totals, last, bits), if(n > (a.len() - a.len())))]
    for x in 0..n {
        let k = x % 2;
        #[acc::atomic]
        totals[k] = totals[k] - (a[x] + b[x]);
        #[acc::atomic(update)]
        totals[k] = (a[x] * b[x]) - totals[k];
        #[acc::atomic(update)]
        totals[k] -= (a[x] + 1.0) * 2.0;
        #[acc::atomic]
        bits = bits << (x % 2);
        #[acc::atomic]
        totals[k] = totals[k].max(a[x] + (b[x] - 1.0));
        #[acc::atomic(capture)]
        {
            last = totals[k];
            totals[k] = totals[k] * (a[x] + 1.0);
        }
        #[acc::atomic(write)]
        totals[1] = (a[x] - 1.0) * 2.0;
    }
    (last, bits)
}

#[acc::offload]
fn regions(a: &mut [f64], n: usize) {
    #[acc::parallel(num_gangs((n / 2) + 1), copy(a))]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            a[i] = (a[i] + 1.0) * 2.0;
        }
    }
    acc::update!(self(a[(n - n)..(n / 2 + 1)]));
}

fn main() {
    let (a, b) = (vec![1.0; 8], vec![2.0; 8]);
    let mut t = vec![0.0; 2];
    let _ = atomics(&mut t, &a, &b, 8);
    let mut c = vec![0.0; 8];
    regions(&mut c, 8);
}
