#[acc::parallel(num_gangs(0))]
fn f() {}
fn main() {}
