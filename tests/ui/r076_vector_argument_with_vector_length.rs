#[acc::kernels_loop(vector_length(128), vector(64))]
fn f(y: &mut [f32]) {
    for i in 0..y.len() { y[i] = 0.0; }
}
fn main() {}
