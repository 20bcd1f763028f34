// `copy`/`copyout` write the host's data when the region ends (3.3 section 2.7.8): the
// variable must be writable there, and still alive.
#[acc::offload]
fn read_only(a: &[f32]) {
    #[acc::data(copyout(a))]
    {}
}

#[acc::offload]
fn moved_inside(mut v: Vec<f32>) -> Vec<f32> {
    let kept;
    #[acc::data(copy(v))]
    {
        kept = v;
    }
    kept
}

fn main() {}
