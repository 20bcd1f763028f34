#[acc::offload]
fn f(a: &mut [f32], n: usize) {
    #[acc::parallel_loop(worker)]
    for i in 0..n {
        #[acc::r#loop(gang)]
        for j in 0..n { a[i * n + j] = 0.0; }
    }
}
fn main() {}
