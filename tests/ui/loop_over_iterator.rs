// Loops over `iter()`, `iter_mut()`, `enumerate`, `zip` and `chunks*` become index loops;
// other iterators are refused on a loop construct.
#[acc::offload]
fn f(v: &[f32]) -> f32 {
    let mut s = 0.0;
    #[acc::parallel_loop(reduction(+: s))]
    for x in v.iter().rev() {
        s += x;
    }
    s
}
fn main() {}
