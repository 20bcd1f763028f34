#[acc::parallel_loop(device_type(nvidia), copyin(x))]
fn f(x: &[f32], y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] = x[i];
    }
}
fn main() {}
