mod util {
    pub fn half(x: f64) -> f64 {
        x / 2.0
    }
}
#[acc::routine(seq)]
fn quarter(x: f64) -> f64 {
    util::half(util::half(x))
}
fn main() {
    let _ = quarter(1.0);
}
