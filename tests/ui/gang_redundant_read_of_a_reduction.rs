// Code outside the gang loops runs in every gang on its own copy of `s`: acc repeats updates of
// it per gang, which is exact only while that code does not read `s` otherwise.
#[acc::offload]
fn f(x: &mut [f32]) -> f32 {
    let mut s = 0.0;
    #[acc::parallel(num_gangs(4), reduction(+: s), copy(x))]
    {
        s += 1.0;
        x[0] = s;
        s = s * 2.0;
    }
    s
}
fn main() {}
