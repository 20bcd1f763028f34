// A data region holds its variables' device copies until it ends: moving one into its body
// (and dropping it there) is a borrow error at its clause, for every data clause.
#[acc::offload]
fn moved(d: acc::DeviceVec<f32>, v: Vec<f32>) {
    #[acc::data(copyin(d), create(v))]
    {
        drop(d);
        let w = v;
        drop(w);
    }
}

fn main() {}
