#[acc::parallel(default(none), default(present))]
fn f() {}
fn main() {}
