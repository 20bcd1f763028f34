#[acc::offload]
fn f(a: &mut [[f32; 2]], b: [f32; 2]) {
    #[acc::parallel_loop]
    for i in 0..a.len() {
        #[acc::atomic(write)]
        a[i] = b;
    }
}
fn main() {}
