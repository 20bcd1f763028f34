#[acc::declare(create(a[0..2]))]
fn f(a: &mut [f32]) { a[0] = 0.0; }
fn main() {}
