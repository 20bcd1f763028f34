#[acc::parallel_loop(gang(dim: 4))]
fn f(y: &mut [f32]) {
    for i in 0..y.len() { y[i] = 0.0; }
}
fn main() {}
