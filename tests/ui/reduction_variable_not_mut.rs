// A reduction variable bound without `mut` is reported at the clause, saying to add `mut`: one
// error, without rustc's own about the assignment in the body.
#[acc::offload]
fn f(v: &[f64]) -> f64 {
    let s = 0.0;
    #[acc::parallel_loop(reduction(+: s))]
    for i in 0..v.len() {
        s += v[i];
    }
    s
}
fn main() {}
