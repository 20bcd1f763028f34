#[acc::parallel(self(true), self(false))]
fn f() {}
fn main() {}
