#[acc::offload]
fn f(a: &mut [f32]) {
    #[acc::parallel(copy(a))]
    {
        acc::update!(self(a));
    }
}
fn main() {}
