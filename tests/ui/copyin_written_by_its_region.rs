// A write to what the construct's own `copyin` brings in would be lost on a GPU (the device
// copy is freed at the region's end) and kept on the host: an error naming the fix.
#[acc::offload]
fn write_inside_copyin(a: &mut [f32]) {
    #[acc::parallel_loop(copyin(a))]
    for i in 0..a.len() {
        a[i] = 1.0;
    }
}
fn main() {}
