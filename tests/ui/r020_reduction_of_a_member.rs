struct S { total: f64 }
#[acc::parallel(reduction(+: s.total))]
fn g(s: &mut S) { s.total = 0.0; }
fn main() {}
