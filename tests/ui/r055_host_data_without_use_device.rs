#[acc::offload]
fn f(a: &[f32]) {
    #[acc::host_data(if_present)]
    {
        let _ = a;
    }
}
fn main() {}
