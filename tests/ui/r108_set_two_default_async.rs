fn f() { acc::set!(default_async(1), default_async(2)); }
fn main() {}
