//! Names used only in launch-size clauses (`num_gangs`, `num_workers`, `vector_length`,
//! `gang(num: ..)`, `worker(num: ..)`, `vector(length: ..)`) are used: no "unused variable" or
//! "constant never used" warning (issue 40, item 17).
#![deny(warnings)]

const VL: usize = 128;
const GANGS: usize = 64;

#[acc::offload]
fn scaled(a: &mut [f32], k: f32) {
    let n = a.len();
    let workers = 4;
    let lanes = 32;
    let gangs = 16;
    #[acc::parallel(copy(a), num_gangs(GANGS), num_workers(workers), vector_length(VL))]
    {
        #[acc::r#loop(gang(num: gangs), worker(num: workers), vector(length: lanes))]
        for i in 0..n {
            a[i] *= k;
        }
    }
}

fn main() {
    let mut a = vec![1.0f32; 1000];
    scaled(&mut a, 2.0);
    assert!(a.iter().all(|&x| x == 2.0));
}
