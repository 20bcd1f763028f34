// 3.3 section 2.12: in `{ v = x; x = e; }` the new value must not read `x`. Such a statement is
// not one of the update forms and could not be atomic: it is refused, not run as a swap.
#[acc::offload]
fn f(c: &mut [i64]) -> i64 {
    let mut v = 0;
    #[acc::parallel_loop(copy(c))]
    for _ in 0..100 {
        #[acc::atomic(capture)]
        {
            v = c[0];
            c[0] = c[0] * 1 + 1;
        }
    }
    v
}
#[acc::offload]
fn g(x: &mut [f64], e: f64) {
    #[acc::parallel_loop(copy(x))]
    for _ in 0..100 {
        #[acc::atomic(write)]
        x[0] = x[0] + e;
    }
}
#[acc::offload]
fn h(x: &mut [i32], v: &mut [i32]) {
    #[acc::parallel_loop(copy(x, v))]
    for i in 0..100 {
        #[acc::atomic(capture)]
        {
            v[0] = x[0];
            x[0] += v[i];
        }
    }
}
fn main() {}
