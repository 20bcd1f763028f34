#[acc::offload]
fn f(y: &mut [f32]) {
    #[acc::parallel_loop(copy(y), copyin(i))]
    for i in 0..y.len() { y[i] = 0.0; }
}
fn main() {}
