fn f(a: &mut [f32]) { acc::update!(self(a), if(true), if(false)); }
fn main() {}
