#[acc::offload]
fn f(y: &mut [f64]) {
    static WEIGHTS: [f64; 4] = [0.1, 0.2, 0.3, 0.4];
    #[acc::declare(copyin(OFFSETS))]
    static OFFSETS: [f64; 4] = [1.0, 2.0, 3.0, 4.0];
    #[acc::parallel_loop]
    for i in 0..y.len() {
        y[i] = WEIGHTS[i % 4] + OFFSETS[i % 4];
    }
}
fn main() {}
