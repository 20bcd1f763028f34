#[acc::data(default(none), default(present))]
fn f() {}
fn main() {}
