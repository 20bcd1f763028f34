#[acc::offload]
fn f(a: &[f32]) {
    #[acc::host_data(use_device(a), if(true), if(false))]
    {
        let _ = a;
    }
}
fn main() {}
