#[acc::parallel(num_gangs(1, 2, 3, 4))]
fn f() {}
fn main() {}
