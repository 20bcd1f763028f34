fn f() { acc::enter_data!(async(1)); }
fn main() {}
