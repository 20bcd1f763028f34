#[acc::offload]
fn f(x: &mut [i32]) {
    #[acc::parallel_loop]
    for i in 0..4 {
        #[acc::atomic]
        x[0] += x[0] + i;
    }
}
fn main() {}
