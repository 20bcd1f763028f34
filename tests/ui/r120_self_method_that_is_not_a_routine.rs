struct Grid {
    v: Vec<f64>,
}
impl Grid {
    fn weight(&self, i: usize) -> f64 {
        i as f64
    }
    #[acc::parallel_loop]
    fn weigh(&mut self) {
        for i in 0..self.v.len() {
            self.v[i] *= self.weight(i);
        }
    }
}
fn main() {}
