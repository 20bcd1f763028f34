#[acc::routine(vector(32))]
fn f(x: f32) -> f32 { x }
fn main() {}
