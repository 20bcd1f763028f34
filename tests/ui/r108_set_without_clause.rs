fn f() { acc::set!(if(true)); }
fn main() {}
