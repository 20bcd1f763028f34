#[acc::offload]
fn f(y: &mut [f32]) {
    #[acc::r#loop(gang)]
    for i in 0..y.len() {
        y[i] = 0.0;
    }
}
fn main() {}
