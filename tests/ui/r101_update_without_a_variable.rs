fn f() { acc::update!(async(1)); }
fn main() {}
