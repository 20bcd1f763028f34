#[acc::offload]
fn f(x: &mut [i32]) {
    #[acc::serial]
    {
        #[acc::atomic(read)]
        x[0] += 1;
    }
}
fn main() {}
