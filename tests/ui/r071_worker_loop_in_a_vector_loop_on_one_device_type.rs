// Levels in `device_type` sections nest like the others, as that device type sees them (3.3
// sections 2.4 and 2.9.4): on nvidia this is a worker loop inside a vector loop.
#[acc::offload]
fn f(a: &mut [f32], n: usize) {
    #[acc::parallel_loop(gang, device_type(nvidia) vector)]
    for i in 0..n {
        #[acc::r#loop(device_type(nvidia, wgpu) worker)]
        for j in 0..n { a[i * n + j] = 0.0; }
    }
}
fn main() {}
