#[acc::routine(gang, seq)]
fn f(x: f32) -> f32 { x }
fn main() {}
