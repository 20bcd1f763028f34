#[acc::parallel(copy(a))]
fn f(a: &mut [f32]) {
    let b = a.to_vec();
    a[0] = b[1];
}
fn main() {}
