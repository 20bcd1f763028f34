#[acc::kernels(num_gangs(2, 2))]
fn f() {}
fn main() {}
