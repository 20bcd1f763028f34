#[acc::offload]
fn f(a: &[f32], y: &mut [f32], n: usize) {
    #[acc::parallel_loop]
    for i in 0..y.len() {
        let s = 2.0;
        acc::cache!(a[i..i + 4]);
        y[i] = s * a[i];
    }
    #[acc::parallel_loop]
    for i in 0..y.len() {
        acc::cache!(a[0..n], y);
        y[i] = a[i];
    }
}
fn main() {}
