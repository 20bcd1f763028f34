#[acc::parallel(device_type(radeon) num_gangs(4))]
fn f() {}
fn main() {}
