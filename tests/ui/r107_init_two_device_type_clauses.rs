fn f() { acc::init!(device_type(nvidia), device_type(wgpu)); }
fn main() {}
