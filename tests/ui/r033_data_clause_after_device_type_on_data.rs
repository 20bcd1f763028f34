#[acc::data(copyin(x), device_type(nvidia) copy(y))]
fn f(x: &[f32], y: &mut [f32]) {
    y[0] = x[0];
}
fn main() {}
