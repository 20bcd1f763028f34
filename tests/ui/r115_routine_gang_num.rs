#[acc::routine(gang(num: 4))]
fn f(x: f32) -> f32 { x }
fn main() {}
