#[acc::routine(seq, device_type(nvidia) nohost)]
fn f(x: f32) -> f32 { x }
fn main() {}
