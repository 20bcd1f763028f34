#[acc::parallel(default(shared))]
fn f() {}
fn main() {}
