// Gang-redundant updates of reduction variables are repeated once per gang (3.3 section
// 2.5.15); the repetition adds no warning, whatever `num_gangs` is written as.
#![deny(warnings)]

#[acc::offload]
fn counts(g: usize, h: u32, w: &[i64]) -> (i64, i64, f64) {
    let mut a = 0;
    let mut b = 0;
    let mut m = f64::MIN;
    #[acc::parallel(num_gangs(4), reduction(+: a), reduction(max: m), copyin(w))]
    {
        a += w[0];
        m = m.max(2.0);
    }
    #[acc::parallel(num_gangs(g), reduction(+: b))]
    {
        b = b + 1;
    }
    #[acc::parallel(num_gangs(h + 1), reduction(+: b))]
    {
        b += (1 + 2) * 3;
    }
    (a, b, m)
}

fn main() {
    let _ = counts(2, 3, &[1]);
}
