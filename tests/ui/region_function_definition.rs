#[acc::serial]
fn f(a: &mut [f32]) {
    fn helper(x: f32) -> f32 { x }
    a[0] = helper(1.0);
}
fn main() {}
