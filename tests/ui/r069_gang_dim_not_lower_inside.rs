// 3.3 section 2.9.2: a gang loop inside another needs a lower `dim`.
#[acc::offload]
fn f(a: &mut [f32], n: usize) {
    #[acc::parallel(num_gangs(2, 2))]
    {
        #[acc::r#loop(gang(dim: 1))]
        for i in 0..n {
            #[acc::r#loop(gang(dim: 2))]
            for j in 0..n { a[i * n + j] = 0.0; }
        }
    }
}
fn main() {}
