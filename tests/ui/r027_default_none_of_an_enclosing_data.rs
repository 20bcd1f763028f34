#[acc::offload]
fn f(x: &[f32], y: &mut [f32]) {
    let N = y.len();
    #[acc::data(copyin(x), default(none))]
    {
        #[acc::parallel_loop]
        for i in 0..N {
            y[i] = x[i];
        }
    }
}
fn main() {}
