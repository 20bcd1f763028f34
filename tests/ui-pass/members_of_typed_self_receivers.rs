// Members of `self` in data clauses are borrowed as the receiver allows: shared in a `&self`
// method, mutable in `&mut self` and `self: &mut Self` ones. Every warning is an error here.
#![deny(warnings)]

struct Grid {
    t: Vec<f64>,
    scale: f64,
}

impl Grid {
    #[acc::offload]
    fn total(&self) -> f64 {
        let mut s = 0.0;
        #[acc::parallel_loop(copyin(self.t), reduction(+: s))]
        for i in 0..self.t.len() {
            s += self.t[i];
        }
        s
    }

    #[acc::offload]
    fn scale_typed(self: &mut Self) {
        let k = self.scale;
        #[acc::parallel_loop(copy(self.t))]
        for i in 0..self.t.len() {
            self.t[i] *= k;
        }
    }
}

fn main() {
    let mut g = Grid {
        t: vec![1.0; 8],
        scale: 2.0,
    };
    g.scale_typed();
    assert_eq!(g.total(), 16.0);
}
