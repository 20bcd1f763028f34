fn f(a: &mut [f32]) { acc::exit_data!(copy(a)); }
fn main() {}
