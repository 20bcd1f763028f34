#[acc::parallel_loop]
fn f(y: &mut [f32], x: &[f32]) {
    for i in 0..y.len() {
        y[i] = x.iter().sum();
    }
}
fn main() {}
