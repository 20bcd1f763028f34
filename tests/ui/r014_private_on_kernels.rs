#[acc::kernels(private(t))]
fn f(t: f32) { let _ = t; }
fn main() {}
