#[acc::parallel_loop(reduction(+: s), reduction(max: s))]
fn f(x: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..x.len() { s += x[i]; }
    s
}
fn main() {}
