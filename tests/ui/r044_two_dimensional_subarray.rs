#[acc::data(copy(a[0..4][1..2]))]
fn f(a: &mut [f32]) { a[0] = 0.0; }
fn main() {}
