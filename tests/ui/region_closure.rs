#[acc::parallel_loop]
fn f(a: &mut [f32]) {
    for i in 0..a.len() {
        let g = |x: f32| x * 2.0;
        a[i] = g(1.0);
    }
}
fn main() {}
