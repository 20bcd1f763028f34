// 3.3 section 2.12 (R88): the update operators are + * - / & | ^ << >> and, as Fortran's
// intrinsics, max and min; any other call or operator is refused.
#[acc::offload]
fn f(x: &mut [u32], e: u32) {
    #[acc::parallel_loop(copy(x))]
    for _ in 0..100 {
        #[acc::atomic]
        x[0] = x[0].pow(e);
        #[acc::atomic(update)]
        x[0] = x[0] % e;
        #[acc::atomic(capture)]
        {
            let v = x[0];
            x[0] = x[0].max(e);
        }
    }
}
fn main() {}
