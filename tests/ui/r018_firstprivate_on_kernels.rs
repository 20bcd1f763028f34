#[acc::kernels(firstprivate(t))]
fn f(t: f32) { let _ = t; }
fn main() {}
