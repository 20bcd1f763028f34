#[acc::routine(vector)]
fn scale(x: f32) -> f32 { x * 2.0 }

#[acc::routine(seq)]
fn twice(x: f32) -> f32 { scale(x) }

#[acc::offload]
fn f(y: &mut [f32]) {
    #[acc::parallel_loop(gang, vector)]
    for i in 0..y.len() {
        y[i] = scale(y[i]);
    }
}
fn main() {}
