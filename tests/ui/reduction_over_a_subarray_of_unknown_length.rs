// A subarray in `reduction` is reduced as an array of its length on every device, so the
// length must be known when compiling (3.3 section 2.5.15).
#[acc::offload]
fn f(x: &[u32], s: &mut Vec<u64>, k: usize) {
    #[acc::parallel_loop(reduction(+: s[0..k]))]
    for i in 0..x.len() {
        s[i % k] += 1;
    }
}
fn main() {}
