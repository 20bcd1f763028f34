#[acc::parallel(reduction(+: f()))]
fn g() {}
fn main() {}
