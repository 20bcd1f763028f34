#[acc::offload]
fn f(x: &mut [i32]) -> i32 {
    let mut v = 0;
    #[acc::serial]
    {
        #[acc::atomic(capture)]
        {
            v = 1;
            x[0] += 1;
        }
    }
    v
}
fn main() {}
