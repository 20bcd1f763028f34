#[acc::offload]
fn f(y: &mut [f32], n: usize) {
    #[acc::parallel_loop(collapse(n))]
    for i in 0..y.len() { y[i] = 0.0; }
}
fn main() {}
