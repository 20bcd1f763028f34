#[acc::offload]
fn f(x: &mut [i32]) {
    #[acc::serial]
    {
        #[acc::atomic(write)]
        x[0] += 1;
    }
}
fn main() {}
