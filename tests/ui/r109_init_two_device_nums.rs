fn f() { acc::init!(device_num(0), device_num(1)); }
fn main() {}
