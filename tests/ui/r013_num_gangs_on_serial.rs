#[acc::serial(num_gangs(2))]
fn f() {}
fn main() {}
