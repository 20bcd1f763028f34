#[acc::parallel_loop]
fn f(y: &mut [f32]) {
    for i in 0..y.len() {
        if i == 10 {
            break;
        }
        y[i] = 0.0;
    }
}
fn main() {}
