fn f(a: &[f32]) { acc::enter_data!(deviceptr(a)); }
fn main() {}
