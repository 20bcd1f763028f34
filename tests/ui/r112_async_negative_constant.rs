#[acc::parallel(async(-5))]
fn f() {}
fn main() {}
