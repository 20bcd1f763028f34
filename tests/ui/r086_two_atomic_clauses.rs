#[acc::offload]
fn f(x: &mut i32) {
    #[acc::parallel]
    {
        #[acc::atomic(update, read)]
        *x += 1;
    }
}
fn main() {}
