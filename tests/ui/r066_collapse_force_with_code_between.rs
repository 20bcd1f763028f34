// `collapse(force: n)` takes `let` bindings between the loops; other code there is refused.
#[acc::offload]
fn f(a: &mut [f32], n: usize) {
    #[acc::parallel_loop(collapse(force: 2))]
    for i in 0..n {
        a[i] = 1.0;
        for j in 0..n { a[i * n + j] = 0.0; }
    }
}
fn main() {}
