#[acc::parallel_loop]
fn f(a: &mut [usize]) {
    for i in 0..a.len() {
        let v: Vec<usize> = Vec::with_capacity(4);
        a[i] = v.capacity();
    }
}
fn main() {}
