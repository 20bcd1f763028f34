// 3.3 section 2.13: `declare` after a local declaration names the variables it declares.
#[acc::offload]
fn f(n: usize) -> f64 {
    let y = vec![1.0; n];
    #[acc::declare(copyin(x, y))]
    let x = vec![0.0; n];
    x[0] + y[0]
}
fn main() {}
