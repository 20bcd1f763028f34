#[acc::offload]
fn f(a: &mut [f64], n: usize) {
    #[acc::parallel_loop(collapse(2))]
    for i in 0..n {
        for j in 0..i {
            a[i * n + j] = 1.0;
        }
    }
}
fn main() {}
