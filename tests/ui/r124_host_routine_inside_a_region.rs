#[acc::parallel_loop]
fn f(a: &mut [usize]) {
    for i in 0..a.len() { a[i] = acc::get_num_devices(acc::DeviceType::Host); }
}
fn main() {}
