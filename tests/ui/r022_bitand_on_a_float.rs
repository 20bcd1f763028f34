#[acc::offload]
fn f(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    #[acc::parallel_loop(reduction(&: s))]
    for i in 0..x.len() { s = s + x[i]; }
    s
}
fn main() {}
