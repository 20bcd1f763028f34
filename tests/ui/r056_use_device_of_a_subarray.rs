#[acc::offload]
fn f(a: &[f32]) {
    #[acc::host_data(use_device(a[0..2]))]
    {
        let _ = a;
    }
}
fn main() {}
