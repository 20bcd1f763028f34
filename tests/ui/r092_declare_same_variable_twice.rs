#[acc::declare(create(a), copyin(a))]
fn f(a: &mut [f32]) { a[0] = 0.0; }
fn main() {}
