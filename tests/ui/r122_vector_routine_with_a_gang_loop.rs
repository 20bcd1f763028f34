#[acc::routine(vector)]
fn f(a: &mut [f32]) {
    #[acc::r#loop(gang)]
    for i in 0..a.len() { a[i] = 0.0; }
}
fn main() {}
