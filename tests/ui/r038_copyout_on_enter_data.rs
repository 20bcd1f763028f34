fn f(a: &[f32]) { acc::enter_data!(copyout(a)); }
fn main() {}
