#[acc::parallel(device_type())]
fn f() {}
fn main() {}
