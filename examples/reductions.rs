//! Every reduction operator of OpenACC (`+ * max min & | ^ && ||`, 3.3 section 2.5.15) in one
//! `parallel loop`, checked against plain loops. Runs on the current device.

use std::time::Instant;

struct Results {
    sum: i64,
    product: f64,
    max: f32,
    min: i32,
    and: u32,
    or: u32,
    xor: u64,
    all: bool,
    any: bool,
}

#[acc::offload]
fn reduce_all(v: &[i32]) -> Results {
    let (mut sum, mut product, mut max, mut min) = (0i64, 1.0f64, f32::NEG_INFINITY, i32::MAX);
    let (mut and, mut or, mut xor) = (u32::MAX, 0u32, 0u64);
    let (mut all, mut any) = (true, false);
    #[acc::parallel_loop(copyin(v), reduction(+: sum), reduction(*: product), reduction(max: max),
                         reduction(min: min), reduction(&: and), reduction(|: or), reduction(^: xor),
                         reduction(&&: all), reduction(||: any))]
    for i in 0..v.len() {
        let x = v[i];
        sum += x as i64;
        if x % 10_000 == 0 {
            product *= 2.0; // exact in any order
        }
        max = max.max(x as f32 * 0.5);
        min = min.min(x);
        and &= !(1u32 << (x % 31));
        or |= 1u32 << (x % 29);
        xor ^= (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        all = all && x < 100_000;
        any = any || x == 4242;
    }
    Results {
        sum,
        product,
        max,
        min,
        and,
        or,
        xor,
        all,
        any,
    }
}

fn main() {
    let n = 1 << 20;
    let v: Vec<i32> = (0..n)
        .map(|i| ((i as i64 * 7919) % 100_003) as i32)
        .collect();
    let device = acc::get_device_type();
    let t = Instant::now();
    let r = reduce_all(&v);
    let elapsed = t.elapsed();

    assert_eq!(r.sum, v.iter().map(|&x| x as i64).sum::<i64>(), "+");
    let count = v.iter().filter(|&&x| x % 10_000 == 0).count();
    assert_eq!(r.product, 2f64.powi(count as i32), "*");
    assert_eq!(
        r.max,
        v.iter()
            .map(|&x| x as f32 * 0.5)
            .fold(f32::NEG_INFINITY, f32::max),
        "max"
    );
    assert_eq!(r.min, *v.iter().min().unwrap(), "min");
    assert_eq!(
        r.and,
        v.iter().fold(u32::MAX, |a, &x| a & !(1u32 << (x % 31))),
        "&"
    );
    assert_eq!(r.or, v.iter().fold(0, |a, &x| a | 1u32 << (x % 29)), "|");
    assert_eq!(
        r.xor,
        v.iter().fold(0, |a, &x| a
            ^ (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        "^"
    );
    assert_eq!(r.all, v.iter().all(|&x| x < 100_000), "&&");
    assert_eq!(r.any, v.contains(&4242), "||");
    println!(
        "reductions: n = {n}, 9 operators, device = {device} ({}), time = {:.3} ms, verified \
         (sum {}, product {}, max {}, min {}, and {:#x}, or {:#x}, xor {:#x}, all {}, any {})",
        acc::get_property(0, device, acc::Property::Name),
        elapsed.as_secs_f64() * 1e3,
        r.sum,
        r.product,
        r.max,
        r.min,
        r.and,
        r.or,
        r.xor,
        r.all,
        r.any
    );
}
