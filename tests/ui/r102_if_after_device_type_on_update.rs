fn f(a: &mut [f32]) { acc::update!(self(a), device_type(nvidia) if(true)); }
fn main() {}
