#[acc::offload]
fn f(y: &mut [f32], o: Option<f32>) -> Option<()> {
    #[acc::serial]
    {
        y[0] = o?;
    }
    Some(())
}
fn main() {}
