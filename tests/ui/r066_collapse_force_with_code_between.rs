#[acc::offload]
fn f(a: &mut [f32], n: usize) {
    #[acc::parallel_loop(collapse(force: 2))]
    for i in 0..n {
        let base = i * n;
        for j in 0..n { a[base + j] = 0.0; }
    }
}
fn main() {}
