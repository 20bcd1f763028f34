fn f(a: &[f32]) { acc::enter_data!(present(a)); }
fn main() {}
