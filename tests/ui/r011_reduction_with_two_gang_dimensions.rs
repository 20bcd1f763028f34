#[acc::offload]
fn f(x: &[f32]) -> f32 {
    let mut s = 0.0;
    #[acc::parallel_loop(num_gangs(4, 2), reduction(+: s))]
    for i in 0..x.len() { s += x[i]; }
    s
}
fn main() {}
