// `loop` is a keyword, so the directive is `acc::r#loop`; rustc's parser rejects
// `#[acc::loop]` before acc sees it, and its message says to write `r#loop`.
#[acc::offload]
fn f(a: &mut [f32]) {
    #[acc::parallel]
    {
        #[acc::loop(gang)]
        for i in 0..a.len() {
            a[i] = 0.0;
        }
    }
}
fn main() {}
