// Members go in data clauses and `update`; `private` takes whole variables.
struct G { a: [f64; 4] }
#[acc::offload]
fn f(g: &mut G) {
    let _ = &g;
    #[acc::parallel_loop(private(g.a))]
    for i in 0..4 {
        let _ = i;
    }
}
fn main() {}
