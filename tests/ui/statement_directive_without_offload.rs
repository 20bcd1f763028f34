// A statement directive takes effect inside a function with an acc attribute; the error says
// which to add.
fn f(a: &mut [f32]) {
    #[acc::parallel_loop]
    for i in 0..a.len() {
        a[i] += 1.0;
    }
}
fn main() {}
