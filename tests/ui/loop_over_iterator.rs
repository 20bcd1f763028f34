#[acc::offload]
fn f(v: &[f32]) -> f32 {
    let mut s = 0.0;
    #[acc::parallel_loop(reduction(+: s))]
    for x in v.iter() {
        s += x;
    }
    s
}
fn main() {}
