fn f(a: &[f32]) { acc::enter_data!(copyin(readonly: a)); }
fn main() {}
