#[acc::parallel_loop(tile(8, 8), collapse(2))]
fn f(y: &mut [f32], n: usize) {
    for i in 0..n { for j in 0..n { y[i * n + j] = 0.0; } }
}
fn main() {}
