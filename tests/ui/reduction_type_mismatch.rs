#[acc::offload]
fn f(x: &[f64]) -> f64 {
    let mut s = 1.0;
    #[acc::parallel_loop(reduction(&&: s))]
    for i in 0..x.len() {
        s *= x[i];
    }
    s
}
fn main() {}
