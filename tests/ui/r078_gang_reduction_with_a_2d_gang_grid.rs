#[acc::offload]
fn f(x: &[f32], n: usize) -> f32 {
    let mut s = 0.0;
    #[acc::parallel(num_gangs(4, 2), copy(s))]
    {
        #[acc::r#loop(gang, reduction(+: s))]
        for i in 0..n { s += x[i]; }
    }
    s
}
fn main() {}
