#[acc::routine(seq)]
fn f(x: f32) -> f32 {
    static SCALE: f32 = 2.0;
    x * SCALE
}
fn main() {}
