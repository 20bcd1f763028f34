#[acc::offload]
fn f(x: &[f64]) -> f64 {
    let mut s = 0.0;
    #[acc::parallel(copyin(x))]
    {
        #[acc::r#loop(gang, reduction(+: s))]
        for i in 0..x.len() { s += x[i]; }
    }
    s
}
fn main() {}
