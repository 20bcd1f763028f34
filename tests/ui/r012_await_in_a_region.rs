#[acc::offload]
async fn f(y: &mut [f32], g: std::future::Ready<f32>) {
    #[acc::serial]
    {
        y[0] = g.await;
    }
}
fn main() {}
