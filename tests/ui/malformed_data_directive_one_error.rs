// A malformed directive is one error: the statements inside it are not reported again for the
// directives they carry.
#[acc::offload]
fn f(a: &[i64]) -> i64 {
    let mut s = 0;
    #[acc::data(copyin(a[0..10], a[20..30]))]
    {
        #[acc::parallel_loop(reduction(+: s))]
        for i in 0..10 {
            s += a[i];
        }
    }
    s
}
fn main() {}
