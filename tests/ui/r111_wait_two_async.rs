fn f() { acc::wait!(1, async(2), async(3)); }
fn main() {}
