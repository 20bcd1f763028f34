#[acc::offload]
fn f(y: &mut [f32]) {
    for _ in 0..3 {
        #[acc::parallel]
        {
            break;
        }
    }
    y[0] = 1.0;
}
fn main() {}
