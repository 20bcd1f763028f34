#[acc::offload]
fn f(y: &mut [f32], t: f32) {
    #[acc::parallel]
    {
        #[acc::r#loop(device_type(nvidia) private(t))]
        for i in 0..y.len() { y[i] = t; }
    }
}
fn main() {}
