// A reduction's subarray is read before the construct and written after it, so it is named
// by variables of the code around the construct, not by a loop's variable inside it.
#[acc::offload]
fn f(x: &[u32], s: &mut Vec<u64>, n: usize) {
    #[acc::parallel_loop(gang)]
    for i in 0..n {
        #[acc::r#loop(vector, reduction(+: s[i * 4..i * 4 + 4]))]
        for j in 0..x.len() {
            s[i * 4 + j % 4] += x[j] as u64;
        }
    }
}
fn main() {}
