#[acc::offload]
fn f(y: &mut [f32]) -> Option<()> {
    #[acc::parallel]
    {
        if y.is_empty() {
            return None;
        }
        #[acc::r#loop]
        for i in 0..y.len() {
            y[i] = 1.0;
        }
    }
    Some(())
}
fn main() {}
