#[acc::data(if(true))]
fn f() {}
fn main() {}
