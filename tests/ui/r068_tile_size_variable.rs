#[acc::offload]
fn f(y: &mut [f32], t: usize) {
    #[acc::parallel_loop(tile(t))]
    for i in 0..y.len() { y[i] = 0.0; }
}
fn main() {}
