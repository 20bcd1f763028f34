#[acc::offload]
fn f(x: &[f32]) -> f32 {
    let mut s = 0.0;
    // 3.3 section 2.5.3: kernels takes no reduction clause.
    #[acc::kernels(reduction(+: s))]
    {
        for i in 0..x.len() {
            s += x[i];
        }
    }
    s
}
fn main() {}
