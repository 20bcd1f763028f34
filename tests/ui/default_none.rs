#[acc::offload]
fn f(a: f32, x: &[f32], y: &mut [f32]) {
    #[acc::parallel_loop(default(none), copyin(x))]
    for i in 0..y.len() {
        y[i] = a * x[i];
    }
}
fn main() {}
