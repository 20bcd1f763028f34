fn f() { acc::exit_data!(finalize); }
fn main() {}
