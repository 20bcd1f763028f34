#[acc::offload]
fn f(x: &mut i32, y: i32) {
    #[acc::parallel]
    {
        #[acc::atomic(update)]
        *x %= y;
    }
}
fn main() {}
