#[acc::data(copy(y), if(true), if(false))]
fn f(y: &mut [f32]) { y[0] = 0.0; }
fn main() {}
