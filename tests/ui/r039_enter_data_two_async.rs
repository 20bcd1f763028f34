fn f(a: &[f32]) { acc::enter_data!(copyin(a), async(1), async(2)); }
fn main() {}
