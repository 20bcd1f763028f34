#[acc::offload]
fn f(y: &mut [f32]) {
    #[acc::parallel]
    {
        let mut i = 0;
        #[acc::r#loop]
        while i < y.len() { y[i] = 0.0; i += 1; }
    }
}
fn main() {}
