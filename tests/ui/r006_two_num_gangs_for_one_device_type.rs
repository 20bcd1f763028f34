#[acc::parallel(num_gangs(2), device_type(nvidia) num_gangs(4), device_type(wgpu, nvidia) num_gangs(8))]
fn f(y: &mut [f32]) {
    y[0] = 1.0;
}
fn main() {}
