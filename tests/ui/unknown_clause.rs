#[acc::parallel_loop(copyn(x))]
fn f(x: &[f32], y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] = x[i];
    }
}
fn main() {}
