#[acc::data(num_workers(4), copy(y))]
fn f(y: &mut [f32]) { y[0] = 0.0; }
fn main() {}
