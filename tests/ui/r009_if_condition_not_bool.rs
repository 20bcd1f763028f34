#[acc::parallel(if(1))]
fn f() {}
fn main() {}
