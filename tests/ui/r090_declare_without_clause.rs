#[acc::declare()]
fn f() {}
fn main() {}
