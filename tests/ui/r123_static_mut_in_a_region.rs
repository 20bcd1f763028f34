static mut CALLS: u64 = 0;
#[acc::parallel_loop]
fn f(y: &mut [f32]) {
    for i in 0..y.len() {
        unsafe {
            CALLS += 1;
        }
        y[i] = 0.0;
    }
}
fn main() {}
