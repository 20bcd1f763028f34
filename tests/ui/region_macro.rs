#[acc::parallel_loop]
fn f(a: &mut [f32]) {
    for i in 0..a.len() {
        a[i] = 1.0;
        println!("{}", a[i]);
    }
}
fn main() {}
