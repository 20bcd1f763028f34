#[acc::parallel(if(true), if(false))]
fn f() {}
fn main() {}
