#[acc::parallel(device_type(nvidia) private(t))]
fn f(t: f32) { let _ = t; }
fn main() {}
