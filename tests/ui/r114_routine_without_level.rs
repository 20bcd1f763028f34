#[acc::routine]
fn f(x: f32) -> f32 { x }
fn main() {}
