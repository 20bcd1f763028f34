fn f(a: &mut [f32]) { acc::exit_data!(copyout(zero: a)); }
fn main() {}
