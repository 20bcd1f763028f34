fn scale(x: f32) -> f32 {
    2.0 * x
}
#[acc::parallel_loop]
fn f(y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] = scale(y[i]);
    }
}
fn main() {}
