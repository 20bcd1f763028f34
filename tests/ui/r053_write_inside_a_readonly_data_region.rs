#[acc::offload]
fn f(y: &mut [f32], z: &mut [f32]) {
    #[acc::data(copyin(readonly: y), copy(z))]
    {
        #[acc::parallel_loop]
        for i in 0..z.len() {
            z[i] = y[i];
        }
        #[acc::parallel_loop]
        for i in 0..y.len() {
            y[i] = 0.0;
        }
    }
}
fn main() {}
