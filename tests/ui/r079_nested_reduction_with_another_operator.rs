#[acc::offload]
fn f(x: &[f32]) -> f32 {
    let mut s = 1.0;
    #[acc::parallel(reduction(*: s))]
    {
        #[acc::r#loop(gang, reduction(+: s))]
        for i in 0..x.len() { s += x[i]; }
    }
    s
}
fn main() {}
