#[acc::parallel_loop(copyin(a, b), copyout(q, s, q32, s32))]
fn ops(a: &[f64], b: &[f64], q: &mut [f64], s: &mut [f64], q32: &mut [f32], s32: &mut [f32]) {
    for i in 0..a.len() {
        q[i] = a[i] / b[i];
        s[i] = a[i].sqrt();
        q32[i] = (a[i] as f32) / (b[i] as f32);
        s32[i] = (a[i] as f32).sqrt();
    }
}
fn main() {
    let n = 1 << 22;
    let mut x = 0x9E3779B97F4A7C15u64;
    let mut r = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let a: Vec<f64> = (0..n)
        .map(|_| f64::from_bits((r() >> 12) | 0x3FF0_0000_0000_0000) * (1.0 + (r() % 1000) as f64))
        .collect();
    let b: Vec<f64> = (0..n)
        .map(|_| f64::from_bits((r() >> 12) | 0x3FF0_0000_0000_0000) * (1.0 + (r() % 77) as f64))
        .collect();
    let (mut q, mut s, mut q32, mut s32) =
        (vec![0.0; n], vec![0.0; n], vec![0.0f32; n], vec![0.0f32; n]);
    ops(&a, &b, &mut q, &mut s, &mut q32, &mut s32);
    let dq = (0..n)
        .filter(|&i| q[i].to_bits() != (a[i] / b[i]).to_bits())
        .count();
    let ds = (0..n)
        .filter(|&i| s[i].to_bits() != a[i].sqrt().to_bits())
        .count();
    let dq32 = (0..n)
        .filter(|&i| q32[i].to_bits() != ((a[i] as f32) / (b[i] as f32)).to_bits())
        .count();
    let ds32 = (0..n)
        .filter(|&i| s32[i].to_bits() != (a[i] as f32).sqrt().to_bits())
        .count();
    println!("{}: of {n}: f64 div differ {dq}, f64 sqrt differ {ds}, f32 div differ {dq32}, f32 sqrt differ {ds32}", acc::get_device_type());
}
