fn f(a: &[f32]) { acc::enter_data!(copyin(a), finalize); }
fn main() {}
