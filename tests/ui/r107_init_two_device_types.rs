fn f() { acc::init!(device_type(nvidia, wgpu)); }
fn main() {}
