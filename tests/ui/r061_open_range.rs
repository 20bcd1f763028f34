#[acc::offload]
fn f(y: &mut [f32]) {
    #[acc::parallel_loop]
    for i in 0.. { y[i] = 0.0; }
}
fn main() {}
