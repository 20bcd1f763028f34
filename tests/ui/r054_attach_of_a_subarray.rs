fn f(a: &[f32]) { acc::enter_data!(attach(a[1..3])); }
fn main() {}
